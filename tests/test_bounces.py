"""Bounces (docs/spec/server.md §5.9): the VERP sender of the mail we start, real-world
delivery status notifications sent back to it through the mail pipe and `pbm serve`, and
what a failing address changes: no more mail there, the player told elsewhere, the
opponents told in the board mail, no nags for a player nobody can reach."""

import itertools
import re
import smtplib
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from aiosmtpd.controller import Controller
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pbm.bounces import ID_CHARS, parse_bounce_recipient, verp_sender
from pbm.cli import cli
from pbm.config import Config
from pbm.store import Store
from tests.conftest import STRESS_FACTOR, body_of, free_port, start_serve

SAMPLES = Path(__file__).parent / "bounces"
START = datetime(2026, 3, 2, 12, 0)
SERVER = "pbm@games.example.org"
SETTINGS = "[server]\naddress = pbm@games.example.org\n"
PERMANENT_SAMPLES = (
    "postfix_user_unknown.eml",
    "exim_failed.eml",
    "gmail_no_such_user.eml",
    "exchange_not_reached.eml",
)


def at_day(clock, day, hour=12):
    clock((START + timedelta(days=day, hours=hour - 12)).isoformat())


def store_of(harness):
    return Store.open(harness.config.db_path)


def sent_rows(harness, kind=None):
    store = store_of(harness)
    try:
        return [r for r in store.outbox.rows(["sent"]) if kind is None or r.kind in kind]
    finally:
        store.close()


def failing(harness) -> dict:
    store = store_of(harness)
    try:
        return {row.address: row.reason for row in store.delivery.failing()}
    finally:
        store.close()


_SENT = itertools.count(1)


def bounce_mail(sample: str, verp: str, recipient: str, message_id="<x@games.example.org>"):
    """The sample about our `message_id` to `recipient`, with a Message-ID of its own (a
    report sent again is a new report)."""
    text = (SAMPLES / sample).read_text()
    text = re.sub(r"(?im)^Message-ID: <", f"Message-ID: <{next(_SENT)}.", text, count=1)
    text = text.replace("@@VERP@@", verp).replace("@@RCPT@@", recipient)
    return text.replace("@@MSGID@@", message_id).encode()


def bounce(harness, sample, row, recipient, verp=None):
    """The sample DSN about outbox `row` to `recipient`, to its VERP address, as the pipe
    gets it from Postfix ($ORIGINAL_RECIPIENT)."""
    verp = verp or verp_sender(harness.config, row.id, recipient)
    raw = bounce_mail(sample, verp, recipient, row.message_id)
    before = len(store_rows(harness))
    outcome = harness.deliver(raw, envelope_sender="", envelope_recipients=[verp])
    assert outcome.consumed
    # Never answered: the one mail it may cause is the notice to the player's other addresses.
    assert all(row.kind == "account" for row in store_rows(harness)[before:])
    return outcome


def store_rows(harness):
    return store_rows_of(harness.config)


def store_rows_of(config):
    store = Store.open(config.db_path)
    try:
        return store.outbox.rows()
    finally:
        store.close()


@pytest.fixture
def game(harness, clock):
    """Board 101, alice on move; bob has a second address, bob@work.example."""
    harness.configure(SETTINGS)
    at_day(clock, 0)
    harness.signup("alice", "bob")
    harness.ok("add bob secret bob@work.example", sender="bob@example.org")
    harness.challenge("knightpanic challenge alice bob")
    harness.new_mails()
    return harness


def board_row_to(harness, address):
    [row] = [r for r in sent_rows(harness, ("board", "new_board")) if address in r.recipients][-1:]
    return row


# -- the VERP sender --------------------------------------------------------------------


class Recorder:
    def __init__(self, refuse=()):
        self.envelopes = []
        self.refuse = refuse

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        if address in self.refuse:
            return "550 5.1.1 no such user"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        self.envelopes.append((envelope.mail_from, list(envelope.rcpt_tos), envelope.content))
        return "250 OK"


@pytest.fixture
def relay(harness):
    port = free_port()
    recorder = Recorder(refuse=("bob@work.example",))
    controller = Controller(recorder, hostname="127.0.0.1", port=port)
    controller.start()
    harness.configure(SETTINGS + f"[smtp]\nhost = 127.0.0.1\nport = {port}\n")
    yield recorder
    controller.stop()


def test_mail_we_start_has_a_signed_sender_per_recipient_and_answers_the_null_sender(
    harness, relay
):
    harness.signup("alice", "bob")
    harness.ok("add bob secret bob@work.example", sender="bob@example.org")
    relay.envelopes.clear()
    harness.challenge("knightpanic challenge alice bob")
    harness.ok("help games", sender="carol@example.org")
    by_recipients = {tuple(rcpts): sender for sender, rcpts, _ in relay.envelopes}
    # A direct answer (carol's help) has the null sender (RFC 3834); every board mail one
    # VERP sender per recipient, bob's two addresses in two transactions.
    assert by_recipients[("carol@example.org",)] == "<>"
    config = harness.config
    board_rows = sent_rows(harness, ("board", "new_board"))
    for address in ("alice@example.org", "bob@example.org"):
        [row] = [r for r in board_rows if address in r.recipients]
        sender = by_recipients[(address,)]
        assert sender == verp_sender(config, row.id, address)
        local, _, domain = sender.partition("@")
        assert domain == "games.example.org" and local.startswith("pbm+bounce-")
        bounce_id = parse_bounce_recipient(config, sender)
        assert bounce_id.row_id == row.id
        assert bounce_id.recipient_among(config.secret_key, row.recipients) == address
    # The relay refused bob's other address: the row is sent to the one that took it.
    assert ("bob@work.example",) not in by_recipients
    [bob_row] = [r for r in board_rows if "bob@example.org" in r.recipients]
    assert bob_row.status == "sent"


def test_a_fixed_bounce_address_still_replaces_every_envelope_sender(harness, relay):
    port = harness.config.number("smtp.port")
    harness.configure(
        SETTINGS + f"[server]\nbounce_address = bounces@pbm.example\n"
        f"[smtp]\nhost = 127.0.0.1\nport = {port}\n"
    )
    harness.signup("alice")
    harness.ok("help", sender="alice@example.org")
    assert {sender for sender, _, _ in relay.envelopes} == {"bounces@pbm.example"}


class DropsTheSecondSender(Recorder):
    """A relay that hangs up (421) at the second MAIL FROM of a connection."""

    def __init__(self):
        super().__init__()
        self.dropped = False

    async def handle_MAIL(self, server, session, envelope, address, mail_options):
        session.senders = getattr(session, "senders", 0) + 1
        if session.senders == 2 and not self.dropped:
            self.dropped = True
            server.transport.close()
            return "421 4.3.0 closing"
        envelope.mail_from = address
        return "250 OK"


def test_a_connection_lost_between_two_recipients_retries_only_the_second(harness, clock):
    at_day(clock, 0)
    port = free_port()
    relay = DropsTheSecondSender()
    controller = Controller(relay, hostname="127.0.0.1", port=port)
    controller.start()
    try:
        harness.configure(SETTINGS + f"[smtp]\nhost = 127.0.0.1\nport = {port}\n")
        harness.signup("alice")
        harness.ok("add alice secret alice@work.example", sender="alice@example.org")
        relay.dropped = False

        def digest_setting_mails():
            return [rcpts for _, rcpts, content in relay.envelopes if b"Digest on" in content]

        harness.ok("digest alice secret on", sender="alice@example.org")
        assert digest_setting_mails() == [["alice@example.org"]]
        [row] = [r for r in store_rows(harness) if r.kind == "settings"]
        assert row.recipients == ["alice@work.example"] and row.status == "pending"
        at_day(clock, 0, hour=13)
        CliRunner().invoke(cli, ["--home", str(harness.home), "outbox", "flush"])
        assert digest_setting_mails() == [["alice@example.org"], ["alice@work.example"]]
    finally:
        controller.stop()


@pytest.fixture(scope="module")
def config(tmp_path_factory):
    """One home for the property tests, which hypothesis runs many times over."""
    home = tmp_path_factory.mktemp("verp")
    (home / "pbm.ini").write_text(SETTINGS)
    return Config.load(home)


@given(st.text(max_size=120) | st.from_regex(r"pbm\+bounce-[a-z2-7]{20,28}@games\.example\.org"))
@settings(max_examples=300 * STRESS_FACTOR, deadline=None)
def test_the_bounce_address_parser_takes_only_its_own_shape(config, text):
    parsed = parse_bounce_recipient(config, text)
    if parsed is not None:
        local, _, domain = text.strip().strip("<>").strip().rpartition("@")
        assert domain.lower() == "games.example.org"
        assert local.lower().startswith("pbm+bounce-") and len(local) == 11 + ID_CHARS
        # Without our key nobody can name a recipient with it.
        assert parsed.recipient_among(b"another key", ["alice@example.org"]) is None


@given(st.integers(min_value=1, max_value=2**40 - 1), st.emails(), st.integers(0, ID_CHARS - 1))
@settings(max_examples=200 * STRESS_FACTOR, deadline=None)
def test_a_verp_id_names_its_row_and_recipient_and_any_changed_character_names_nothing(
    config, row_id, address, position
):
    sender = verp_sender(config, row_id, address)
    parsed = parse_bounce_recipient(config, sender.upper())
    assert parsed.row_id == row_id
    assert parsed.recipient_among(config.secret_key, ["other@example.org", address]) == (
        address.lower()
    )
    local, _, domain = sender.partition("@")
    start = len("pbm+bounce-") + position
    changed = "a" if local[start] != "a" else "b"
    forged = parse_bounce_recipient(
        config, f"{local[:start]}{changed}{local[start + 1 :]}@{domain}"
    )
    assert forged is None or forged.recipient_among(config.secret_key, [address]) is None


# -- real bounces -----------------------------------------------------------------------


@pytest.mark.parametrize("sample", PERMANENT_SAMPLES)
def test_a_real_permanent_bounce_marks_the_address_and_bob_hears_at_the_other(game, sample):
    row = board_row_to(game, "bob@example.org")
    bounce(game, sample, row, "bob@example.org")
    assert list(failing(game)) == ["bob@example.org"]
    assert failing(game)["bob@example.org"].startswith("permanent failure")
    [notice] = game.new_mails()
    assert notice["To"] == "bob@work.example"
    assert notice["Subject"] == "Mail to bob bounces"
    assert "Mail to bob@example.org, an address of bob, cannot be delivered" in body_of(notice)

    # The next board mail goes to bob's working address only; alice reads why.
    game.ok("knightpanic move 101 alice secret c1-e5")
    mails = {m["To"]: body_of(m) for m in game.new_mails()}
    assert set(mails) == {"alice@example.org", "bob@work.example"}
    assert "Mail bounces: bob (at 1 of 2 addresses)" in mails["alice@example.org"]


def test_a_bounce_with_a_bad_signature_or_for_a_message_never_sent_changes_nothing(game):
    row = board_row_to(game, "bob@example.org")
    config = game.config
    real = verp_sender(config, row.id, "bob@example.org")
    # Signed for alice's address, claimed for bob's: the signature does not hold.
    other = verp_sender(config, row.id, "alice@example.org")
    bounce(game, "postfix_user_unknown.eml", row, "bob@example.org", verp=other)
    # A well-formed id for a row that does not exist.
    never = verp_sender(config, 99999, "bob@example.org")
    bounce(game, "postfix_user_unknown.eml", row, "bob@example.org", verp=never)
    # The right form with a made-up MAC.
    local, _, domain = real.partition("@")
    forged = local[:-16] + "a" * 16 + "@" + domain
    bounce(game, "gmail_no_such_user.eml", row, "bob@example.org", verp=forged)
    assert failing(game) == {}
    assert game.new_mails() == []


def test_a_mail_to_the_bounce_address_that_reports_no_failure_changes_nothing(game):
    row = board_row_to(game, "bob@example.org")
    bounce(game, "vacation_autoreply.eml", row, "bob@example.org")
    assert failing(game) == {}


def test_temporary_failures_mark_an_address_once_they_have_gone_on_for_three_days(game, clock):
    row = board_row_to(game, "bob@example.org")
    at_day(clock, 1)
    bounce(game, "gmail_delayed.eml", row, "bob@example.org")
    at_day(clock, 3)
    bounce(game, "gmail_delayed.eml", row, "bob@example.org")
    assert failing(game) == {}
    at_day(clock, 4, hour=13)
    bounce(game, "gmail_delayed.eml", row, "bob@example.org")
    assert failing(game)["bob@example.org"].startswith("temporary failures since 2026-03-03")


def test_an_unreachable_player_is_not_nagged_but_forfeits_and_a_mail_from_the_address_clears_it(
    game, clock
):
    game.ok("knightpanic move 101 alice secret c1-e5")
    game.new_mails()
    for address in ("bob@example.org", "bob@work.example"):
        bounce(game, "postfix_user_unknown.eml", board_row_to(game, address), address)
    assert set(failing(game)) == {"bob@example.org", "bob@work.example"}
    # Told of the first at the second; of the second nowhere: no working address is left.
    assert [m["To"] for m in game.new_mails()] == ["bob@work.example"]
    status = CliRunner().invoke(cli, ["--home", str(game.home), "status"])
    assert "failing:    2 addresses bounce" in status.output
    assert "  bob@example.org (bob) since" in status.output

    at_day(clock, 8)
    report = CliRunner().invoke(cli, ["--home", str(game.home), "cleanup"]).output
    assert "no nag to bob (unreachable)" in report
    assert ": nag to bob" not in report, "no nag went out"
    assert game.new_mails() == []

    # It is bob's move; his opponent reads why no answer may come.
    game.ok("knightpanic show 101", sender="alice@example.org")
    [shown] = game.new_mails()
    assert "Unreachable: bob (every address bounces; no answer may come)" in body_of(shown)

    at_day(clock, 22)
    CliRunner().invoke(cli, ["--home", str(game.home), "cleanup"])
    # The clock ran as for anyone: bob's first move never came, so he withdrew.
    [forfeit] = [m for m in game.new_mails() if m["To"] == "alice@example.org"]
    assert "bob has declined to play" in body_of(forfeit)

    game.ok("help", sender="bob@work.example")
    assert set(failing(game)) == {"bob@example.org"}


def test_a_bounce_through_pbm_serve_is_accepted_and_marks_the_address(challenged_home, project_env):
    config = Config.load(challenged_home)
    store = Store.open(config.db_path)
    try:
        [row] = [r for r in store.outbox.rows(["sent"]) if r.recipients == ["bob@example.org"]][-1:]
    finally:
        store.close()
    verp = verp_sender(config, row.id, "bob@example.org")
    raw = bounce_mail("postfix_user_unknown.eml", verp, "bob@example.org")
    rows_before = len(store_rows_of(config))
    process, port = start_serve(project_env, challenged_home)
    try:
        with smtplib.SMTP("127.0.0.1", port, timeout=60) as client:
            assert client.sendmail("", [verp], raw.replace(b"\n", b"\r\n")) == {}
    finally:
        process.terminate()
        process.wait(timeout=60)
    store = Store.open(config.db_path)
    try:
        assert [r.address for r in store.delivery.failing()] == ["bob@example.org"]
    finally:
        store.close()
    assert len(store_rows_of(config)) == rows_before, "a bounce is never answered"


# -- hostile mail to the bounce address ----------------------------------------------------

HOSTILE_PARTS = st.sampled_from(
    [
        "Action: failed\nStatus: 5.1.1\n",
        "Action: delayed\nStatus: 4.4.1\n",
        "Action: delivered\n",
        "Status: 9.9.9\n",
        "Final-Recipient: rfc822; \x00\xff@x\n",
        "X-Failed-Recipients: a@b, =?utf-8?q?=00?=\n",
        "\n\n\n",
        "Content-Type: message/delivery-status\n\n",
        "Content-Type: multipart/report; boundary=b\n\n--b\n",
        "did not reach the following recipient\nSMTP=x@y; on\n",
    ]
)


@given(
    parts=st.lists(HOSTILE_PARTS | st.text(max_size=80), max_size=8),
    signed=st.booleans(),
    report=st.booleans(),
)
@settings(
    max_examples=40 * STRESS_FACTOR,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
def test_hostile_bounces_never_crash_are_never_answered_and_mark_only_when_signed(
    game, parts, signed, report
):
    row = board_row_to(game, "bob@example.org")
    verp = verp_sender(game.config, row.id, "bob@example.org")
    if not signed:
        verp = verp[: len("pbm+bounce-")] + "q" * ID_CHARS + verp[len("pbm+bounce-") + ID_CHARS :]
    head = "Content-Type: multipart/report; report-type=delivery-status; boundary=b\n"
    raw = (
        "From: MAILER-DAEMON@x\nTo: "
        + verp
        + "\n"
        + (head if report else "")
        + "\n"
        + "".join(parts)
    ).encode("utf-8", "surrogateescape")
    before = len(store_rows(game))
    outcome = game.deliver(raw, envelope_sender="", envelope_recipients=[verp])
    assert outcome.consumed
    assert len(store_rows(game)) in (before, before + 1)  # at most the notice to bob
    if not signed:
        assert failing(game) == {}
    store = store_of(game)  # the next example starts with bob's address working again
    try:
        with store.write():
            store.delivery.clear("bob@example.org")
    finally:
        store.close()


def test_a_reply_to_a_board_mail_is_still_a_move(game):
    """Board mails now carry List-Id; a reply comes back without it and still plays."""
    [mail] = [m for m in game.mails("alice@example.org") if m["Reply-To"]][-1:]
    assert mail["List-Id"] == '"KnightPanic board 101" <101.knightpanic.games.example.org>'
    reply = (
        f"From: alice@example.org\nTo: {mail['Reply-To']}\nSubject: Re: {mail['Subject']}\n"
        f"Message-ID: <reply1@example.org>\n\nc1-e5\n"
    ).encode()
    outcome = game.deliver(reply, envelope_recipients=[str(mail["Reply-To"])])
    assert outcome.result.ok
