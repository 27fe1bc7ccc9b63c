"""Play by mail in a test: a server home of the test's own, commands run as mails from any
address, and the mails the server sent read back from its outbox (docs/plugin-api.md).

Harness runs a command in the test's process, as the mail pipe and `pbm serve` run it
(Harness.run, or Harness.deliver for a whole RFC 822 message); pipe and send hand a message
to a mail handler in a process of its own, as an MTA does, and inbox reads what came out.
A game under test is found as a server finds it: by its entry point in group `pbm`, so
install the plugin (`pip install -e .`) before running its tests.

This module drives the whole server, so it stays out of the strictly typed plugin surface
(pbm.game, pbm.drawing, pbm.engine, pbm.testing) and imports the server only when used.
"""

import email
import email.policy
import itertools
import subprocess
import sys
from collections.abc import Mapping, Sequence
from email.message import EmailMessage
from pathlib import Path
from typing import Any

from ..config import Config
from ..dispatch import open_server
from ..mailin import build_request
from ..message import Mail
from ..private import private_opener
from ..request import Result

__all__ = [
    "GENEROUS_LIMITS",
    "Harness",
    "body_of",
    "command_mail",
    "error_text",
    "inbox",
    "pipe",
    "send",
]

# A test sends most commands from one address: these lift the abuse limits (a test of the
# limits sets its own with Harness.configure). Board mails come as plain text, as before
# pictures; `[mail] html = on` in configure() turns the HTML part on for new accounts.
GENEROUS_LIMITS = """[limits]
commands_per_hour = 1000000
signups_per_day = 1000000
challenges_per_day = 1000000
boards_per_user_per_day = 1000000
failed_logins_per_hour = 1000000
failed_logins_per_account_per_hour = 1000000
mails_per_user_per_day = 1000000
mails_to_unconfirmed_address_per_day = 1000000
answers_per_address_per_hour = 1000000
answers_per_address_per_day = 1000000
answers_per_confirmed_address_per_hour = 1000000
answers_per_confirmed_address_per_day = 1000000
mails_per_incoming_mail = 1000000
bytes_per_incoming_mail = 1000000000

[mail]
html = off
"""

# What mail_handler.py runs, for a test outside this repository (where that file is not).
HANDLER = ("-c", "import sys; from pbm.intake import main; sys.exit(main())")

_message_numbers = itertools.count(1)


class Harness:
    """A fresh server home and helpers to run commands and read the mail they sent.

    Give it an empty folder; a test's fixture also sets PBM_HOME to it, so that anything
    that looks the home up from the environment finds the same one:

        @pytest.fixture
        def harness(tmp_path, monkeypatch):
            monkeypatch.setenv("PBM_HOME", str(tmp_path / "home"))
            return Harness(tmp_path / "home")
    """

    def __init__(self, home: Path):
        # deferred: the cli module is the command line's; only the migrations are needed
        from ..cli import migrate_home

        self.home = home
        migrate_home(Config.load(home))
        self.configure("")
        self.seen: set[str] = set()

    def configure(self, ini_text: str) -> None:
        """pbm.ini: GENEROUS_LIMITS, then these settings (later ones win); 0600, as every
        file of a home."""
        with open(self.home / "pbm.ini", "w", opener=private_opener) as handle:
            handle.write(GENEROUS_LIMITS + ini_text)

    @property
    def config(self) -> Config:
        return Config.load(self.home)

    def run(
        self, text: str, sender: str = "tester@example.org", body: str = "", key: str | None = None
    ) -> Result:
        """One command, as the Subject of a mail from sender with that body."""
        request = build_request(text, body, sender, key)
        with open_server(self.config) as server:
            return server.execute(request)

    def deliver(
        self,
        raw: bytes,
        envelope_sender: str | None = None,
        envelope_recipients: Sequence[str] | None = None,
    ) -> Any:
        """One raw mail through pbm.intake.process_message, as the pipe and `pbm serve`
        handle it: what it returns (whether the mail was consumed, and the result)."""
        from ..intake import process_message  # deferred: only whole messages need it

        return process_message(
            raw,
            len(raw),
            envelope_sender,
            config=self.config,
            envelope_recipients=envelope_recipients,
        )

    def ok(self, text: str, sender: str = "tester@example.org", body: str = "") -> Result:
        """run(), which must be carried out."""
        result = self.run(text, sender=sender, body=body)
        assert result.ok, self.last_error_text(result)
        return result

    def refused(self, text: str, sender: str = "tester@example.org", body: str = "") -> str:
        """run(), which must be refused: the text of the refusal."""
        result = self.run(text, sender=sender, body=body)
        assert not result.ok, f"{text!r} was carried out"
        return error_text(result)

    def last_error_text(self, result: Result) -> str:
        return error_text(result) if result.queued or result.printed else "(no mail)"

    def signup(self, *userids: str, password: str = "secret") -> None:
        """Accounts with the address <userid>@example.org, each signed up from it (so the
        address is confirmed for it)."""
        for userid in userids:
            address = f"{userid}@example.org"
            self.ok(f"signup {userid} {password} {address}", sender=address)

    def challenge(self, text: str, by: str | None = None, body: str = "") -> Result:
        """A challenge sent by one of its players (docs/spec/server.md §3.4): from `by`'s
        address, else from the first player's."""
        return self.ok(text, sender=self._player_address(text, by), body=body)

    def challenge_refused(self, text: str, by: str | None = None) -> str:
        """The error text of a challenge one of its players sent (challenge())."""
        return self.refused(text, sender=self._player_address(text, by))

    @staticmethod
    def _player_address(text: str, by: str | None) -> str:
        words = text.split()
        first = next(w for w in words[words.index("challenge") + 1 :] if not w.startswith("-"))
        return f"{by or first.lower()}@example.org"

    def outbox_files(self) -> list[Path]:
        new = self.home / "outbox" / "new"
        return sorted(new.iterdir()) if new.exists() else []

    def mails(self, address: str | None = None) -> list[EmailMessage]:
        """Every delivered message, oldest first, optionally only those to an address."""
        found = []
        for path in self.outbox_files():
            message = _read(path)
            if address is None or address in str(message["To"]):
                found.append(message)
        return found

    def new_mails(self, address: str | None = None) -> list[EmailMessage]:
        """Messages not returned by an earlier call, optionally only those to an address."""
        fresh = []
        for path in self.outbox_files():
            if path.name in self.seen:
                continue
            self.seen.add(path.name)
            fresh.append(_read(path))
        if address is not None:
            fresh = [m for m in fresh if address in str(m["To"])]
        return fresh


def error_text(result: Result) -> str:
    """The bodies of the refusals among the mails a command sent or printed."""
    mails: list[Mail] = [m for _, m in result.queued] + result.printed
    return "\n".join(
        m.body
        for m in mails
        if m.kind == "error" or "error" in m.subject.lower() or m.subject == "Invalid challenge"
    )


def body_of(message: EmailMessage) -> str:
    """The text of a single-part message (a text-only board mail, a refusal)."""
    return str(message.get_content())


def _read(path: Path) -> EmailMessage:
    message = email.message_from_bytes(path.read_bytes(), policy=email.policy.default)
    assert isinstance(message, EmailMessage)
    return message


# -- whole messages through a mail handler in a process of its own ---------------------------


def command_mail(sender: str, subject: str, body: str = "", message_id: str | None = None) -> bytes:
    """A mail to the server: the command is its Subject."""
    message = EmailMessage()
    message["From"] = sender
    message["To"] = "pbm@localhost"
    message["Subject"] = subject
    message["Message-ID"] = message_id or f"<mail-{next(_message_numbers)}@test.example>"
    message.set_content(body or "\n")
    return message.as_bytes()


def pipe(
    env: Mapping[str, str],
    raw: bytes,
    sender: str | None = None,
    handler: Path | None = None,
    cwd: Path | None = None,
) -> subprocess.CompletedProcess[bytes]:
    """Hand one message to a mail handler as an MTA does: on standard input, in a process
    with env (PBM_HOME names the home), SENDER the envelope sender when given. handler is a
    script such as pbm's mail_handler.py; by default the same call, made with -c."""
    run_env = dict(env)
    if sender is not None:
        run_env["SENDER"] = sender
    command = [str(handler)] if handler is not None else list(HANDLER)
    return subprocess.run(
        [sys.executable, *command],
        input=raw,
        env=run_env,
        cwd=cwd,
        capture_output=True,
        timeout=120,
    )


def send(
    env: Mapping[str, str],
    sender: str,
    subject: str,
    body: str = "",
    handler: Path | None = None,
    cwd: Path | None = None,
) -> None:
    """A command mail through pipe(), which must be handled (exit 0)."""
    result = pipe(env, command_mail(sender, subject, body), handler=handler, cwd=cwd)
    assert result.returncode == 0, result.stderr.decode()


def inbox(home: Path, seen: set[str]) -> dict[str, list[EmailMessage]]:
    """The messages written since the last call (their file names are kept in seen), by
    recipient address."""
    by_address: dict[str, list[EmailMessage]] = {}
    for path in sorted((home / "outbox" / "new").iterdir()):
        if path.name in seen:
            continue
        seen.add(path.name)
        message = _read(path)
        by_address.setdefault(str(message["To"]), []).append(message)
    return by_address
