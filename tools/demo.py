"""`make demo`: two new users play a whole game of Knight Panic by mail.

Every step is a real RFC 822 message piped into mail_handler.py, exactly as an MTA would;
after each one we print what the server mailed out of its Maildir outbox. The players sign
up and challenge with commands, then play every move by replying to their latest board
mail (docs/spec/server.md §11.3): just the move on the first line, the original quoted
below, no password; the MTA gives the reply address to the pipe as $ORIGINAL_RECIPIENT.
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
COMMENTS = {
    0: "Good luck, Bob!",
    7: "Your a7 knight looks lonely.",
    8: "Trapped! Thanks for the game.",
}


def command_mail(userid: str, subject: str, body: str = "") -> bytes:
    message = EmailMessage()
    message["From"] = f"{userid.title()} <{PLAYERS[userid]}>"
    message["To"] = "pbm@localhost"
    message["Subject"] = subject
    message["Message-ID"] = make_msgid(domain="example.org")
    message.set_content(body or "\n")
    return message.as_bytes()


def reply_mail(userid: str, original, answer: str, comment: str = "") -> bytes:
    """A reply as a mail client writes it: the answer on top, the original quoted below."""
    message = EmailMessage()
    message["From"] = f"{userid.title()} <{PLAYERS[userid]}>"
    message["To"] = str(original["Reply-To"])
    message["Subject"] = "Re: " + str(original["Subject"])
    message["Message-ID"] = make_msgid(domain="example.org")
    message["In-Reply-To"] = message["References"] = original["Message-ID"]
    quoted = "\n".join(
        "> " + line for line in original.get_body(("plain",)).get_content().rstrip().split("\n")
    )
    own = answer + (f"\n\n{comment}" if comment else "")
    message.set_content(f"{own}\n\nOn {original['Date']}, {original['From']} wrote:\n{quoted}\n")
    return message.as_bytes()


def script():
    """(userid, subject, body) of every command mail, then (userid, move, comment) of every
    reply."""
    commands = [(u, f"signup {u} {PASSWORDS[u]}", "") for u in PLAYERS]
    commands.append(("alice", "knightpanic challenge alice bob", "Fancy a game of Knight Panic?"))
    replies = [
        ("alice" if ply % 2 == 0 else "bob", move, COMMENTS.get(ply, ""))
        for ply, move in enumerate(MOVES)
    ]
    return commands, replies


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
    latest = {}  # the newest mail to each player that a reply can answer

    def show_new_mail():
        for index, message in enumerate(new_mail(home / "outbox", seen)):
            print(f"<<< to {message['To']}: {message['Subject']}")
            if index == 0 and not message["Subject"].startswith("Account"):
                print(
                    "    "
                    + message.get_body(("plain",)).get_content().rstrip().replace("\n", "\n    ")
                )
            if message["Reply-To"]:
                latest[str(message["To"])] = message

    commands, replies = script()
    for userid, subject, body in commands:
        shown = subject.replace(PASSWORDS[userid], "********")
        print(f"\n>>> {PLAYERS[userid]} sends: {shown}")
        code = pipe(command_mail(userid, subject, body), env)
        if code:
            print(f"mail_handler.py exited with {code}")
            return code
        show_new_mail()
    for userid, move, comment in replies:
        original = latest[PLAYERS[userid]]
        print(f"\n>>> {PLAYERS[userid]} replies to {original['Reply-To']}: {move}")
        raw = reply_mail(userid, original, move, comment)
        code = pipe(raw, dict(env, ORIGINAL_RECIPIENT=str(original["Reply-To"])))
        if code:
            print(f"mail_handler.py exited with {code}")
            return code
        show_new_mail()
    print(f"\nEvery message is in the Maildir {home / 'outbox'}.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
