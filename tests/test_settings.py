"""Challenge settings (docs/spec/server.md §3.9) and vacations (docs/spec/server.md §9.4)."""

from tests.conftest import body_of


def test_reject_and_accept_challenges(harness):
    harness.signup("alice", "bob")
    harness.new_mails()
    harness.ok("knightpanic reject bob secret", sender="somewhere@example.org")
    [mail] = harness.new_mails()
    assert mail["To"] == "bob@example.org"
    assert mail["Subject"] == "KnightPanic challenges now rejected"
    harness.challenge_refused("knightpanic challenge alice bob")
    [mail] = harness.new_mails()
    assert mail["Subject"] == "Invalid challenge"
    assert "bob is not accepting KnightPanic challenges" in body_of(mail)
    harness.ok("knightpanic accept bob secret")
    assert harness.new_mails()[0]["Subject"] == "KnightPanic challenges now accepted"
    harness.challenge("knightpanic challenge alice bob")


def test_limit_counts_active_boards(harness):
    harness.signup("alice", "bob", "carol")
    harness.ok("knightpanic limit bob secret 1")
    assert harness.new_mails()[-1]["Subject"] == "KnightPanic challenges now limited"
    harness.challenge("knightpanic challenge alice bob")
    message = harness.challenge_refused("knightpanic challenge carol bob")
    assert "bob has reached their limit of active KnightPanic games (1)" in message
    harness.challenge("tally challenge carol bob")
    harness.ok("knightpanic limit bob secret")
    status = harness.new_mails()[-1]
    assert status["Subject"] == "KnightPanic limit status"
    assert "fewer than 1 active boards" in body_of(status)
    assert "Syntax is" in body_of(status)
    harness.ok("knightpanic limit bob secret inf")
    assert harness.new_mails()[-1]["Subject"] == "KnightPanic challenges now accepted"
    harness.ok("knightpanic limit bob secret 0")
    assert harness.new_mails()[-1]["Subject"] == "KnightPanic challenges now rejected"
    assert "Limit must be a number from 0 to 999" in harness.refused(
        "knightpanic limit bob secret 1000"
    )


def test_seek_is_counted_down_by_new_boards(harness):
    harness.signup("alice", "bob")
    harness.ok("knightpanic seek bob secret 2")
    assert harness.new_mails()[-1]["Subject"] == "Now seeking 2 KnightPanic challenges"
    harness.challenge("knightpanic challenge alice bob")
    harness.ok("knightpanic seek bob secret")
    status = harness.new_mails()[-1]
    assert status["Subject"] == "KnightPanic seek status"
    assert "seeking 1 KnightPanic challenges" in body_of(status)
    assert "from 0 to 99" in harness.refused("knightpanic seek bob secret 100")


def test_vacation_on_off_and_status(harness, clock):
    harness.signup("alice")
    clock("2026-03-01T00:00:00")
    harness.ok("vacation alice secret on")
    [mail] = harness.new_mails("alice@example.org")[-1:]
    assert mail["Subject"] == "Vacation on for alice"
    assert "on vacation since 2026-03-01 00:00 UTC" in body_of(mail)
    clock("2026-03-03T12:00:00")
    harness.ok("knightpanic vacation alice secret")
    body = body_of(harness.new_mails()[-1])
    assert "Vacation used in 2026: 2 days, 12:00:00" in body
    assert "Vacation left in 2026: 27 days, 12:00:00" in body
    harness.ok("vacation alice secret off")
    assert harness.new_mails()[-1]["Subject"] == "Vacation off for alice"


def test_no_vacation_left(harness, clock):
    harness.signup("alice")
    clock("2026-01-01T00:00:00")
    harness.ok("vacation alice secret on")
    clock("2026-02-15T00:00:00")
    harness.ok("vacation alice secret off")
    assert "You have no vacation days left in 2026" in harness.refused("vacation alice secret on")
    clock("2027-01-02T00:00:00")
    harness.ok("vacation alice secret on")


def test_vacations_show_on_boards(harness, clock):
    harness.signup("alice", "bob")
    clock("2026-03-01T08:00:00")
    harness.challenge("knightpanic challenge alice bob")
    harness.ok("vacation bob secret on")
    text = harness.ok("knightpanic show 101", sender=None).printed[0].body
    assert "On vacation: bob (since 2026-03-01 08:00 UTC)" in text
