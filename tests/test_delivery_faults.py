"""Delivery faults against a real SMTP relay on 127.0.0.1: refusals, deferrals, timeouts.

Mail stays queued, is retried with back-off, is never sent twice to an address, and an
address that fails for good is reported to the operator."""

import asyncio
from datetime import datetime, timedelta

import pytest
from aiosmtpd.controller import Controller
from click.testing import CliRunner

from pbm.cli import cli
from pbm.mailout import RETRY_DELAYS, RETRY_LATER
from pbm.store import Store
from tests.conftest import free_port


class Relay:
    """Records what it accepts; refuses, defers or stalls recipients as told."""

    def __init__(self):
        self.delivered = []  # (recipient, subject)
        self.refuse = {}  # address -> SMTP reply
        self.stall = 0.0

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        if self.stall:
            await asyncio.sleep(self.stall)
        if address in self.refuse:
            return self.refuse[address]
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        subject = next(
            (
                line.split(":", 1)[1].strip()
                for line in envelope.content.decode().splitlines()
                if line.startswith("Subject:")
            ),
            "",
        )
        for address in envelope.rcpt_tos:
            self.delivered.append((address, subject))
        return "250 OK"


@pytest.fixture
def relay(harness, clock):
    clock("2026-05-01T08:00:00")
    port = free_port()
    harness.configure(
        f"[server]\noperator_address = op@pbm.example\n"
        f"[smtp]\nhost = 127.0.0.1\nport = {port}\ntimeout = 1\n"
    )
    handler = Relay()
    controller = Controller(handler, hostname="127.0.0.1", port=port)
    controller.start()
    yield harness, handler
    controller.stop()


def flush(harness):
    return CliRunner().invoke(cli, ["--home", str(harness.home), "outbox", "flush"]).output


def outbox(harness):
    store = Store.open(harness.home / "pbm.db")
    try:
        return store.outbox.rows()
    finally:
        store.close()


def test_a_permanently_refused_address_is_reported_and_the_rest_delivered(relay):
    harness, handler = relay
    handler.refuse["gone@example.org"] = "550 5.1.1 No such user"
    harness.ok("signup alice secret alice@example.org gone@example.org", sender="alice@example.org")
    assert ("alice@example.org", "Account alice created") in handler.delivered
    assert ("op@pbm.example", "PBM delivery failure") in handler.delivered
    assert not any(address == "gone@example.org" for address, _ in handler.delivered)
    row = outbox(harness)[0]
    assert row.status == "sent"
    listing = CliRunner().invoke(cli, ["--home", str(harness.home), "outbox", "list", "--all"])
    assert "gone@example.org" in listing.output


def test_a_deferred_address_is_retried_alone(relay, clock):
    harness, handler = relay
    handler.refuse["slow@example.org"] = "450 4.2.0 Mailbox busy"
    harness.ok("signup alice secret alice@example.org slow@example.org", sender="alice@example.org")
    assert handler.delivered == [("alice@example.org", "Account alice created")]
    [row] = outbox(harness)
    assert row.status == "pending" and row.recipients == ["slow@example.org"]
    assert row.next_attempt_at == "2026-05-01T08:01:00Z"
    del handler.refuse["slow@example.org"]
    clock("2026-05-01T08:01:30")
    assert "1 sent" in flush(harness)
    assert sorted(handler.delivered) == [
        ("alice@example.org", "Account alice created"),
        ("slow@example.org", "Account alice created"),
    ]
    assert "0 sent" in flush(harness)


def test_a_relay_that_times_out_keeps_the_mail_queued(relay, clock):
    harness, handler = relay
    handler.stall = 2.0
    harness.ok("signup alice secret alice@example.org", sender="alice@example.org")
    [row] = outbox(harness)
    assert row.status == "pending" and "timed out" in row.last_error.lower()
    handler.stall = 0
    clock("2026-05-01T08:02:00")
    assert "1 sent" in flush(harness)
    assert handler.delivered == [("alice@example.org", "Account alice created")]


def test_back_off_then_give_up_after_five_days(relay, clock):
    harness, handler = relay
    handler.refuse["alice@example.org"] = "451 4.3.0 Try later"
    start = datetime(2026, 5, 1, 8, 0)
    harness.ok("signup alice secret alice@example.org", sender="alice@example.org")
    moment = start
    expected = list(RETRY_DELAYS) + [RETRY_LATER] * 12
    for attempt, delay in enumerate(expected, start=1):
        [row] = [r for r in outbox(harness) if r.kind == "account"]
        if row.status == "failed":
            break
        assert row.attempts == attempt
        assert row.next_attempt_at == (moment + delay).strftime("%Y-%m-%dT%H:%M:%SZ")
        moment = moment + delay
        clock(moment.isoformat())
        flush(harness)
    [row] = [r for r in outbox(harness) if r.kind == "account"]
    assert row.status == "failed" and "gave up after 5 days" in row.last_error
    assert moment - start >= timedelta(days=5)
    assert ("op@pbm.example", "PBM delivery failure") in handler.delivered
    assert not any(address == "alice@example.org" for address, _ in handler.delivered)


def test_a_relay_refusing_everything_permanently_fails_the_row(relay):
    harness, handler = relay
    handler.refuse["alice@example.org"] = "550 5.7.1 Relaying denied"
    harness.ok("signup alice secret alice@example.org", sender="alice@example.org")
    [row] = [r for r in outbox(harness) if r.kind == "account"]
    assert row.status == "failed" and "550" in row.last_error
    listing = CliRunner().invoke(cli, ["--home", str(harness.home), "outbox", "list"])
    assert "failed" in listing.output and "Relaying denied" in listing.output
