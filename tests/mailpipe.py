"""Mail as an MTA delivers it: messages piped into mail_handler.py in a process of their
own, and the server's answers read back out of the Maildir outbox."""

import email
import email.policy
import itertools
import subprocess
import sys
from email.message import EmailMessage

from tests.conftest import ROOT

_numbers = itertools.count(1)


def command_mail(sender, subject, body="", message_id=None) -> bytes:
    message = EmailMessage()
    message["From"] = sender
    message["To"] = "pbm@localhost"
    message["Subject"] = subject
    message["Message-ID"] = message_id or f"<mail-{next(_numbers)}@test.example>"
    message.set_content(body or "\n")
    return message.as_bytes()


def pipe(env, raw: bytes, sender=None):
    """Run mail_handler.py on one message; SENDER is the envelope sender when given."""
    run_env = dict(env)
    if sender is not None:
        run_env["SENDER"] = sender
    return subprocess.run(
        [sys.executable, str(ROOT / "mail_handler.py")],
        input=raw,
        env=run_env,
        cwd=ROOT,
        capture_output=True,
        timeout=120,
    )


def send(env, sender, subject, body=""):
    result = pipe(env, command_mail(sender, subject, body))
    assert result.returncode == 0, result.stderr.decode()


def inbox(home, seen) -> dict:
    """The messages written since the last call (their file names are kept in `seen`), by
    recipient address."""
    by_address = {}
    for path in sorted((home / "outbox" / "new").iterdir()):
        if path.name in seen:
            continue
        seen.add(path.name)
        message = email.message_from_bytes(path.read_bytes(), policy=email.policy.default)
        by_address.setdefault(str(message["To"]), []).append(message)
    return by_address
