"""What one incoming mail costs the server: the mails and bytes it makes pbm send, the CPU and
the peak memory of the mail_handler.py process that handles it. docs/security.md records the
worst mail of each class before and after its fix, measured with this script.

    python tools/mail_cost.py --setup HOME             # alice, bob, Knight Panic board 101
    python tools/mail_cost.py --home HOME MAIL.eml [--recipient pbm+TOKEN@localhost]
    python tools/mail_cost.py --home HOME --token alice  # alice's latest reply address

Each run pipes the mail into mail_handler.py as the MTA would (SENDER from --sender, the
recipient as $ORIGINAL_RECIPIENT) and reports the mails it wrote to the home's Maildir with
their bytes, and the child's CPU (user + system) and peak resident memory from wait4(2).
"""

import argparse
import email
import email.policy
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

PLAYERS = {"alice": "secret1", "bob": "secret2"}


def setup(home: Path) -> None:
    """A fresh home with the default limits: alice and bob (confirmed by the operator's
    CLI) and Knight Panic board 101 with alice on move."""
    from click.testing import CliRunner

    from pbm.cli import cli

    runner = CliRunner()
    steps = [["init"]]
    steps += [["signup", u, p, f"{u}@example.org"] for u, p in PLAYERS.items()]
    steps += [["knightpanic", "challenge", "alice", "bob"]]
    for step in steps:
        result = runner.invoke(cli, ["--home", str(home), *step])
        if result.exit_code != 0:
            raise SystemExit(f"pbm {' '.join(step)} failed:\n{result.output}")


def latest_reply_address(home: Path, userid: str) -> str | None:
    """The Reply-To of the newest mail in the Maildir to userid's address."""
    newest = None
    for path in sorted((home / "outbox" / "new").iterdir(), key=lambda p: p.stat().st_mtime):
        message = email.message_from_bytes(path.read_bytes(), policy=email.policy.default)
        if f"{userid}@example.org" in str(message["To"]) and message["Reply-To"]:
            newest = str(message["Reply-To"])
    return newest


def outgoing(home: Path) -> dict:
    """The mails in the home's Maildir, by file name, with their sizes. The home delivers
    into the Maildir (no [smtp] host), so every mail a command sends is there when the
    handler exits."""
    maildir = home / "outbox" / "new"
    return {p.name: p.stat().st_size for p in maildir.iterdir()} if maildir.exists() else {}


def measure(home: Path, raw: bytes, sender: str | None, recipient: str | None) -> dict:
    before = outgoing(home)
    env = dict(os.environ, PBM_HOME=str(home), PYTHONPATH=str(ROOT))
    for name in ("SENDER", "ORIGINAL_RECIPIENT", "RECIPIENT"):
        env.pop(name, None)
    if sender is not None:
        env["SENDER"] = sender
    if recipient is not None:
        env["ORIGINAL_RECIPIENT"] = recipient
    process = subprocess.Popen(
        [sys.executable, str(ROOT / "mail_handler.py")],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
        cwd=ROOT,
    )
    process.stdin.write(raw)
    process.stdin.close()
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    after = outgoing(home)
    new = set(after) - set(before)
    return {
        "exit": process.returncode,
        "mails": len(new),
        "bytes": sum(after[name] for name in new),
        "cpu_seconds": round(usage.ru_utime + usage.ru_stime, 3),
        "peak_rss_mb": round(usage.ru_maxrss / 1024, 1),
        "stderr": process.stderr.read().decode(errors="replace").strip()[-500:],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("mail", nargs="?", help="the RFC 822 message to pipe in")
    parser.add_argument("--home", type=Path, help="the pbm home the mail goes to")
    parser.add_argument("--setup", type=Path, metavar="HOME", help="make a fresh home first")
    parser.add_argument("--sender", help="the envelope sender ($SENDER)")
    parser.add_argument("--recipient", help="the envelope recipient ($ORIGINAL_RECIPIENT)")
    parser.add_argument("--token", metavar="USERID", help="print USERID's latest reply address")
    args = parser.parse_args()
    if args.setup:
        setup(args.setup)
        args.home = args.home or args.setup
    if args.token:
        print(latest_reply_address(args.home, args.token) or "")
    if args.mail:
        raw = Path(args.mail).read_bytes()
        print(json.dumps(measure(args.home, raw, args.sender, args.recipient), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
