"""`make demo`: two new users play a whole game of Knight Panic by mail.

Every step is a real RFC 822 message piped into mail_handler.py, exactly as an MTA would;
after each one we print what the server mailed out of its Maildir outbox.
"""

import email
import email.policy
import os
import subprocess
import sys
from email.message import EmailMessage
from email.utils import make_msgid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
PLAYERS = {"alice": "alice@example.org", "bob": "bob@example.org"}
PASSWORDS = {"alice": "wonderland", "bob": "builder1"}
# A game where White traps Black's g7 knight on the ninth move.
MOVES = ["c1-a5", "a7-c3", "g1-e5", "c7-a3", "e5-a7", "a3-c7", "a5-c1", "c7-e3", "e1-c5"]
COMMENTS = {0: "Good luck, Bob!", 7: "Your a7 knight looks lonely.", 8: "Trapped! Thanks for the game."}


def command_mail(userid: str, subject: str, body: str = "") -> bytes:
    message = EmailMessage()
    message["From"] = f"{userid.title()} <{PLAYERS[userid]}>"
    message["To"] = "pbm@localhost"
    message["Subject"] = subject
    message["Message-ID"] = make_msgid(domain="example.org")
    message.set_content(body or "\n")
    return message.as_bytes()


def script():
    """(userid, subject, body) of every mail the players send."""
    steps = [(u, f"signup {u} {PASSWORDS[u]}", "") for u in PLAYERS]
    steps.append(("alice", "knightpanic challenge alice bob", "Fancy a game of Knight Panic?"))
    for ply, move in enumerate(MOVES):
        userid = "alice" if ply % 2 == 0 else "bob"
        steps.append(
            (
                userid,
                f"knightpanic move 101 {userid} {PASSWORDS[userid]} {move}#{ply + 1}",
                COMMENTS.get(ply, ""),
            )
        )
    return steps


def pipe(raw: bytes, env) -> int:
    return subprocess.run(
        [sys.executable, str(ROOT / "mail_handler.py")], input=raw, env=env, cwd=ROOT
    ).returncode


def new_mail(outbox: Path, seen: set):
    for path in sorted((outbox / "new").iterdir()):
        if path.name not in seen:
            seen.add(path.name)
            yield email.message_from_bytes(path.read_bytes(), policy=email.policy.default)


def main() -> int:
    from click.testing import CliRunner

    from pbm.cli import cli

    home = Path(os.environ.get("PBM_HOME") or ROOT / ".demo-home")
    result = CliRunner().invoke(cli, ["--home", str(home), "init"])
    print(result.output.strip())
    if result.exit_code:
        return result.exit_code
    env = dict(os.environ, PBM_HOME=str(home), PYTHONPATH=str(ROOT))
    seen: set = set()
    for userid, subject, body in script():
        shown = subject.replace(PASSWORDS[userid], "********")
        print(f"\n>>> {PLAYERS[userid]} sends: {shown}")
        code = pipe(command_mail(userid, subject, body), env)
        if code:
            print(f"mail_handler.py exited with {code}")
            return code
        for index, message in enumerate(new_mail(home / "outbox", seen)):
            print(f"<<< to {message['To']}: {message['Subject']}")
            if index == 0 and not message["Subject"].startswith("Account"):
                print("    " + message.get_content().rstrip().replace("\n", "\n    "))
    print(f"\nEvery message is in the Maildir {home / 'outbox'}.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
