"""Delivery through a real SMTP server (aiosmtpd on 127.0.0.1), and while it is down."""

import pytest
from aiosmtpd.controller import Controller
from click.testing import CliRunner

from pbm.cli import cli
from tests.conftest import free_port


class Recorder:
    def __init__(self):
        self.messages = []

    async def handle_DATA(self, server, session, envelope):
        self.messages.append(envelope)
        return "250 OK"


@pytest.fixture
def relay_home(harness):
    port = free_port()
    harness.configure(
        f"[server]\nbounce_address = bounces@pbm.example\n[smtp]\nhost = 127.0.0.1\nport = {port}\n"
    )
    return harness, port


def start_relay(port):
    recorder = Recorder()
    controller = Controller(recorder, hostname="127.0.0.1", port=port)
    controller.start()
    return recorder, controller


def test_mail_is_delivered_over_smtp(relay_home):
    harness, port = relay_home
    recorder, controller = start_relay(port)
    try:
        harness.ok("signup alice secret alice@example.org", sender="alice@example.org")
    finally:
        controller.stop()
    [envelope] = recorder.messages
    assert envelope.rcpt_tos == ["alice@example.org"]
    assert envelope.mail_from == "bounces@pbm.example"
    assert b"Subject: Account alice created" in envelope.content
    assert harness.outbox_files() == [], "nothing goes to the Maildir in SMTP mode"


def test_mail_waits_while_the_relay_is_down_and_goes_once_it_is_up(relay_home, clock):
    harness, port = relay_home
    clock("2026-05-01T08:00:00")
    harness.ok("signup alice secret alice@example.org", sender="alice@example.org")
    listing = CliRunner().invoke(cli, ["--home", str(harness.home), "outbox", "list"])
    assert "pending" in listing.output and "next 2026-05-01T08:01:00Z" in listing.output

    recorder, controller = start_relay(port)
    try:
        early = CliRunner().invoke(cli, ["--home", str(harness.home), "outbox", "flush"])
        assert "0 sent" in early.output, "not due before its back-off"
        clock("2026-05-01T08:02:00")
        flushed = CliRunner().invoke(cli, ["--home", str(harness.home), "outbox", "flush"])
        assert "1 sent" in flushed.output
        again = CliRunner().invoke(cli, ["--home", str(harness.home), "outbox", "flush"])
        assert "0 sent" in again.output
    finally:
        controller.stop()
    assert len(recorder.messages) == 1
    assert b"Account alice created" in recorder.messages[0].content


def test_retry_sends_a_failed_message_now(relay_home, clock):
    harness, port = relay_home
    clock("2026-05-01T08:00:00")
    harness.ok("signup alice secret alice@example.org", sender="alice@example.org")
    recorder, controller = start_relay(port)
    try:
        result = CliRunner().invoke(cli, ["--home", str(harness.home), "outbox", "retry", "1"])
        assert "1 sent" in result.output
    finally:
        controller.stop()
    assert len(recorder.messages) == 1
