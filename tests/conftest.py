import sys

sys._called_from_test = True  # pbm loads no entry points under tests; we register games

import email
import email.policy
import os
import socket
import subprocess
from pathlib import Path

import pytest

import games.knightline
import games.knightpanic
import games.knightvision
import games.lox
import games.uknight
from pbm.config import Config
from pbm.dispatch import open_server
from pbm.mailin import build_request
from pbm.plugins import pm
from tests import toygame

ROOT = Path(__file__).resolve().parent.parent
# `make stress` sets PBM_STRESS=1: more processes, kills and fuzzing examples.
STRESS_FACTOR = 10 if os.environ.get("PBM_STRESS") else 1


def register(module, name):
    if pm.get_plugin(name) is None:
        pm.register(module, name=name)


for _module in (games.knightline, games.knightpanic, games.knightvision, games.lox, games.uknight):
    register(_module, _module.__name__.split(".")[-1])
register(toygame, "tally")


# Most tests send everything from one address: lift the abuse limits, which have tests of
# their own that set them back with configure(). Most read board mails as the plain text
# they were before pictures: new accounts get them text-only (tests/test_html_mail.py
# turns the HTML part on).
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


class Harness:
    """A fresh server home and helpers to run commands and read the mail they sent."""

    def __init__(self, home: Path):
        self.home = home
        from pbm.cli import _migrate

        _migrate(Config.load(home))
        self.configure("")
        self.seen = set()

    def configure(self, ini_text: str):
        """pbm.ini: the generous test limits, then these settings (later ones win)."""
        (self.home / "pbm.ini").write_text(GENEROUS_LIMITS + ini_text)

    @property
    def config(self):
        return Config.load(self.home)

    def run(self, text, sender="tester@example.org", body="", key=None):
        request = build_request(text, body, sender, key)
        with open_server(self.config) as server:
            return server.execute(request)

    def deliver(self, raw: bytes, envelope_sender=None, envelope_recipients=None):
        """One raw mail through process_message, as the pipe and `pbm serve` run it."""
        from pbm.intake import process_message

        return process_message(
            raw,
            len(raw),
            envelope_sender,
            config=self.config,
            envelope_recipients=envelope_recipients,
        )

    def ok(self, text, sender="tester@example.org", body=""):
        result = self.run(text, sender=sender, body=body)
        assert result.ok, self.last_error_text(result)
        return result

    def refused(self, text, sender="tester@example.org", body=""):
        result = self.run(text, sender=sender, body=body)
        assert not result.ok, f"{text!r} was carried out"
        return error_text(result)

    def last_error_text(self, result):
        return error_text(result) if result.queued or result.printed else "(no mail)"

    def signup(self, *userids, password="secret"):
        """Accounts with the address <userid>@example.org, each signed up from it (so the
        address is confirmed for it)."""
        for userid in userids:
            address = f"{userid}@example.org"
            self.ok(f"signup {userid} {password} {address}", sender=address)

    def challenge(self, text, by=None, body=""):
        """A challenge sent by one of its players (docs/spec/server.md §3.4): from `by`'s
        address, else from the first player's."""
        return self.ok(text, sender=self._player_address(text, by), body=body)

    def challenge_refused(self, text, by=None):
        """The error text of a challenge one of its players sent (challenge())."""
        return self.refused(text, sender=self._player_address(text, by))

    @staticmethod
    def _player_address(text, by):
        words = text.split()
        first = next(w for w in words[words.index("challenge") + 1 :] if not w.startswith("-"))
        return f"{by or first.lower()}@example.org"

    def outbox_files(self):
        new = self.home / "outbox" / "new"
        return sorted(new.iterdir()) if new.exists() else []

    def mails(self, address=None):
        """Every delivered message, oldest first, optionally only those to an address."""
        found = []
        for path in self.outbox_files():
            message = email.message_from_bytes(path.read_bytes(), policy=email.policy.default)
            if address is None or address in str(message["To"]):
                found.append(message)
        return found

    def new_mails(self, address=None):
        """Messages not returned by an earlier call."""
        fresh = []
        for path in self.outbox_files():
            if path.name in self.seen:
                continue
            self.seen.add(path.name)
            message = email.message_from_bytes(path.read_bytes(), policy=email.policy.default)
            fresh.append(message)
        if address is not None:
            fresh = [m for m in fresh if address in str(m["To"])]
        return fresh


def error_text(result) -> str:
    mails = [m for _, m in result.queued] + result.printed
    return "\n".join(
        m.body
        for m in mails
        if m.kind == "error" or "error" in m.subject.lower() or m.subject == "Invalid challenge"
    )


def body_of(message) -> str:
    return message.get_content()


@pytest.fixture
def harness(tmp_path, monkeypatch):
    home = tmp_path / "home"
    monkeypatch.setenv("PBM_HOME", str(home))
    monkeypatch.delenv("PBM_NOW", raising=False)
    return Harness(home)


@pytest.fixture
def clock(monkeypatch):
    """Set the server's clock: clock("2026-01-01T12:00:00")."""

    def set_time(moment: str):
        monkeypatch.setenv("PBM_NOW", moment)

    return set_time


@pytest.fixture
def project_env(tmp_path):
    """Environment for subprocesses: the project on the path, a fresh PBM_HOME."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT)
    env["PBM_HOME"] = str(tmp_path / "home")
    env.pop("PBM_NOW", None)
    return env


@pytest.fixture
def challenged_home(project_env, tmp_path):
    """A home made by the CLI (the one PBM_HOME of project_env) where alice and bob, password
    `secret`, have Knight Panic board 101 and alice is on move: for tests that run pbm in a
    process of its own."""
    from click.testing import CliRunner

    from pbm.cli import cli

    home = tmp_path / "home"
    runner = CliRunner()
    assert runner.invoke(cli, ["--home", str(home), "init"]).exit_code == 0
    (home / "pbm.ini").write_text(GENEROUS_LIMITS)
    for userid in ("alice", "bob"):
        runner.invoke(
            cli,
            ["--home", str(home), "--from", f"{userid}@example.org", "signup", userid, "secret"],
        )
    runner.invoke(cli, ["--home", str(home), "knightpanic", "challenge", "alice", "bob"])
    return home


PBM = Path(sys.executable).parent / "pbm"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_serve(env, home, stderr=subprocess.DEVNULL) -> tuple[subprocess.Popen, int]:
    """`pbm serve` for home on a free port of 127.0.0.1, once it says it listens."""
    port = free_port()
    process = subprocess.Popen(
        [str(PBM), "--home", str(home), "serve", "--port", str(port)],
        env=env,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=stderr,
    )
    line = process.stdout.readline().decode()
    if "listening on 127.0.0.1" not in line:
        process.kill()
        _, err = process.communicate(timeout=30)
        raise AssertionError(f"pbm serve did not start: {line}{(err or b'').decode()}")
    return process, port
