"""The daily digest (issue 15.4, docs/spec/server.md §11.4): `digest U P on|off`, and once a
day a mail listing each board where U is on move, each with its own reply address."""

from datetime import datetime, timedelta

from click.testing import CliRunner

from pbm.cli import cli
from tests.replying import reply_mail

START = datetime(2026, 1, 1, 12, 0)
ALICE = "alice@example.org"


def at_hour(clock, hours):
    clock((START + timedelta(hours=hours)).isoformat())


def cleanup(harness):
    result = CliRunner().invoke(cli, ["--home", str(harness.home), "cleanup"])
    assert result.exit_code == 0, result.output
    return result.output


def digests(harness):
    return [m for m in harness.new_mails(ALICE) if m["Subject"] == "PBM digest for alice"]


def test_the_digest_lists_the_boards_on_move_once_a_day_and_its_addresses_take_replies(
    harness, clock
):
    harness.signup("alice", "bob", "carol")
    at_hour(clock, 0)
    harness.challenge("knightpanic challenge alice bob")  # 101: alice on move
    harness.challenge("knightpanic challenge bob alice")  # 102: bob on move
    harness.challenge("knightpanic challenge alice carol")  # 103: alice on move
    cleanup(harness)
    assert digests(harness) == []  # off by default
    result = harness.ok("digest alice secret on", sender=ALICE)
    assert [m.subject for _, m in result.queued] == ["Digest on for alice"]
    harness.new_mails()
    cleanup(harness)
    [digest] = digests(harness)
    body = digest.get_content()
    assert "KnightPanic Board 101: alice vs bob" in body
    assert "KnightPanic Board 103: alice vs carol" in body
    assert "Board 102" not in body
    addresses = [line.split()[-1] for line in body.splitlines() if line.startswith("Reply to:")]
    assert len(addresses) == 2 and all(a.startswith("pbm+") for a in addresses)
    assert "secret" not in body
    at_hour(clock, 12)
    cleanup(harness)
    assert digests(harness) == []  # once a day
    # A reply to the address listed for board 103 plays there.
    assert digest["Reply-To"] is None  # one mail, many boards: each has its own address
    digest["Reply-To"] = addresses[1]
    raw = reply_mail(digest, ALICE, "a1-c5", "bottom")
    result = harness.deliver(raw, envelope_recipients=[addresses[1]]).result
    assert result.ok, harness.last_error_text(result)
    assert "It is carol's turn." in harness.mails("carol@example.org")[-1].get_content()
    at_hour(clock, 25)
    cleanup(harness)
    [digest] = digests(harness)
    body = digest.get_content()
    assert "Board 101" in body and "Board 103" not in body
    harness.ok("digest alice secret off", sender=ALICE)
    at_hour(clock, 50)
    cleanup(harness)
    assert digests(harness) == []
