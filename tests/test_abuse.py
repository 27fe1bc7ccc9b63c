"""Abuse limits (docs/spec/server.md §7): none of them may block normal play."""

import re

from pbm.store import Store
from tests.conftest import body_of


def test_commands_over_the_hourly_limit_are_answered_within_the_answer_caps(harness, clock):
    """Every command refused by the limit is answered (docs/security.md 25.3); the answer
    caps per address (25.2) bound those answers, so that a loop cannot feed on itself."""
    harness.configure("[limits]\ncommands_per_hour = 3\nanswers_per_address_per_hour = 5\n")
    clock("2026-04-01T10:00:00")
    for _ in range(3):
        harness.ok("help games", sender="flood@example.org")
    clock("2026-04-01T10:20:00")
    message = harness.refused("help games", sender="flood@example.org")
    assert (
        "Too many requests from flood@example.org; try again after 2026-04-01 11:00 UTC" in message
    )
    harness.new_mails()
    answered = harness.run("help games", sender="flood@example.org")
    assert not answered.ok and answered.queued, "each refused command is answered"
    result = harness.run("help games", sender="flood@example.org")
    assert not result.ok and result.queued == [], "past the answer cap: refused unanswered"
    harness.ok("help games", sender="someone.else@example.org")
    clock("2026-04-01T11:25:00")
    harness.ok("help games", sender="flood@example.org")


def test_multiple_lines_count_one_by_one(harness):
    harness.configure("[limits]\ncommands_per_hour = 2\n")
    result = harness.run("multiple", sender="m@example.org", body="help\nhelp games\nhelp tutorial")
    [(_, answer)] = result.queued
    assert re.findall(r"^--- (.*) ---$", answer.body, re.M) == [
        "Help commands",
        "Help games",
        "PBM error",
    ]
    assert "Too many requests from m@example.org" in answer.body


def test_signups_per_day(harness, clock):
    harness.configure("[limits]\nsignups_per_day = 2\n")
    clock("2026-04-01T10:00:00")
    harness.ok("signup aa1 secret aa1@example.org", sender="farm@example.org")
    harness.ok("signup aa2 secret aa2@example.org", sender="farm@example.org")
    message = harness.refused("signup aa3 secret aa3@example.org", sender="farm@example.org")
    assert (
        "Too many signups from farm@example.org today; try again after 2026-04-02 10:00 UTC"
        in message
    )
    harness.ok("signup bb1 secret", sender="honest@example.org")
    clock("2026-04-02T10:01:00")
    harness.ok("signup aa3 secret aa3@example.org", sender="farm@example.org")


def test_password_guessing_is_locked_per_userid_and_sender(harness, clock):
    harness.configure("[limits]\nfailed_logins_per_hour = 3\n")
    harness.signup("alice", "bob")
    harness.challenge("knightpanic challenge alice bob")
    clock("2026-04-01T10:00:00")
    for guess in ("a", "b", "c", "d"):
        assert "Invalid password entered" in harness.refused(
            f"knightpanic move 101 alice guess{guess} c1-e5", sender="evil@example.org"
        )
    message = harness.refused("knightpanic move 101 alice secret c1-e5", sender="evil@example.org")
    assert (
        "Too many failed password attempts for alice; try again after 2026-04-01 11:00 UTC"
        in message
    )
    harness.ok("knightpanic move 101 alice secret c1-e5", sender="alice@example.org")
    harness.ok("knightpanic move 101 bob secret g7-e3", sender="evil@example.org")
    clock("2026-04-01T11:00:01")
    harness.ok("knightpanic move 101 alice secret a1-c5", sender="evil@example.org")


def test_unknown_userids_count_as_failures_too(harness):
    harness.configure("[limits]\nfailed_logins_per_hour = 2\n")
    for _ in range(3):
        assert "Invalid userid entered" in harness.refused(
            "add ghost pw12 a@b.org", sender="x@y.org"
        )
    assert "Too many failed password attempts for ghost" in harness.refused(
        "add ghost pw12 a@b.org", sender="x@y.org"
    )


def test_challenges_per_day(harness):
    harness.configure("[limits]\nchallenges_per_day = 2\n")
    harness.signup("alice", "bob")
    harness.challenge("knightpanic challenge alice bob")
    harness.challenge("knightpanic challenge alice bob")
    assert "Too many challenges from alice@example.org today" in harness.refused(
        "knightpanic challenge alice bob", sender="alice@example.org"
    )
    harness.challenge("knightpanic challenge alice bob", by="bob")


def test_unasked_mail_to_a_user_is_capped_but_play_goes_on(harness):
    harness.configure("[limits]\nmails_per_user_per_day = 3\n")
    harness.signup("alice", "bob", "mallory")
    harness.challenge("knightpanic challenge alice bob")
    harness.new_mails()
    for n in range(5):
        harness.ok("message mallory secret alice", sender="mallory@example.org", body=f"spam {n}")
    to_alice = [m for m in harness.new_mails("alice@example.org")]
    assert [body_of(m).split("\n")[2] for m in to_alice] == ["spam 0", "spam 1"]
    harness.ok("knightpanic move 101 alice secret c1-e5")
    assert [m["Subject"] for m in harness.new_mails("alice@example.org")] == [
        "KnightPanic Board 101: alice vs bob"
    ]


def test_nobody_can_be_flooded_with_boards(harness):
    harness.configure("[limits]\nboards_per_user_per_day = 2\n")
    harness.signup("alice", "bob", "carol")
    harness.challenge("knightpanic challenge alice bob", by="bob")
    harness.challenge("tally challenge carol alice")
    message = harness.refused("knightpanic challenge alice carol", sender="carol@example.org")
    assert "alice has been given 2 new boards today; try tomorrow" in message
    harness.challenge("knightpanic challenge bob carol", by="carol")


def test_a_lowered_limit_counts_from_the_newest_events(harness, clock):
    """A sender with more commands in the hour than a limit now allows (it was lowered) is
    told when the limit lifts by the newest of them: the read hands back only the oldest of
    the `limit` newest, whatever the limit (issue 31)."""
    harness.configure("[limits]\ncommands_per_hour = 10\n")
    for minute in ("00", "05", "10", "15", "20"):
        clock(f"2026-04-01T10:{minute}:00")
        harness.ok("help games", sender="busy@example.org")
    harness.configure("[limits]\ncommands_per_hour = 3\n")
    clock("2026-04-01T10:30:00")
    message = harness.refused("help games", sender="busy@example.org")
    assert "Too many requests from busy@example.org; try again after 2026-04-01 11:10 UTC" in (
        message
    )
    store = Store.open(harness.config.db_path)
    try:
        reached = store.limits.limit_reached_at
        since = "2026-04-01T09:30:00Z"
        assert reached("command", "busy@example.org", since, 2) == "2026-04-01T10:15:00Z"
        assert reached("command", "busy@example.org", since, 5) == "2026-04-01T10:00:00Z"
        assert reached("command", "busy@example.org", since, 6) is None
        assert reached("command", "busy@example.org", "2026-04-01T10:12:00Z", 3) is None
        assert reached("command", "busy@example.org", since, 0) == since
    finally:
        store.close()
