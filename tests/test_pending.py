"""Moves ahead of time: queue, resign out of turn, submit and confirm (docs/spec/server.md §3.5,
§3.7)."""

import pytest

from tests.conftest import body_of


@pytest.fixture
def game(harness):
    harness.signup("alice", "bob")
    harness.ok("knightpanic challenge alice bob")
    harness.new_mails()
    return harness


def test_a_queued_move_is_played_when_the_turn_comes(game):
    game.ok("knightpanic queue 101 bob secret g7-e3", sender="bob@example.org", body="Queued!")
    [reply] = game.new_mails()
    assert reply["To"] == "bob@example.org"
    assert reply["Subject"] == "KnightPanic Board 101: alice vs bob"
    assert "You have the following move queued: g7-e3" in body_of(reply)
    game.ok("knightpanic move 101 alice secret c1-e5")
    mails = game.new_mails()
    assert sorted(m["To"] for m in mails) == ["alice@example.org", "bob@example.org"]
    body = body_of(mails[0])
    assert mails[0]["Subject"] == "KnightPanic Board 101: alice vs bob"
    assert "   1 c1-e5" in body and "   2 g7-e3 (Auto)" in body
    assert "bob writes:\nQueued!" in body
    shown = game.ok("knightpanic show 101", sender=None).printed[0].body
    assert "(Auto)" not in shown


def test_an_illegal_queued_move_is_discarded_and_announced(game):
    game.ok("knightpanic qmove 101 bob secret a7-a5#2")
    game.new_mails()
    game.ok("knightpanic move 101 alice secret a1-c5")
    mails = game.new_mails()
    failure = [m for m in mails if m["Subject"] == "Unexpected error (KnightPanic Board 101)"]
    assert [m["To"] for m in failure] == ["bob@example.org"]
    assert 'Queued move "a7-a5" was found but is illegal' in body_of(failure[0])
    boards = [m for m in mails if m not in failure]
    assert len(boards) == 2
    for mail in boards:
        assert "bob's queued move was illegal and has been discarded." in body_of(mail)
        assert mail["Subject"] == "KnightPanic Board 101: alice vs bob"


def test_a_queued_guard_is_checked_when_played(game):
    game.ok("knightpanic queue 101 bob secret g7-e3#5")
    game.ok("knightpanic move 101 alice secret c1-e5")
    failure = [m for m in game.new_mails() if m["Subject"].startswith("Unexpected error")]
    assert "Move g7-e3 received as move #2" in body_of(failure[0])


def test_queue_cancel_and_refusals(game):
    assert "You have no queued move" in game.refused("knightpanic queue 101 bob secret cancel")
    assert "Only moves and pass can be queued" in game.refused("knightpanic queue 101 bob secret swap")
    game.ok("knightpanic queue 101 bob secret g7-e3")
    game.ok("knightpanic queue 101 bob secret a7-c3")
    game.new_mails()
    game.ok("knightpanic queue 101 bob secret cancel")
    [reply] = game.new_mails()
    assert "queued" not in body_of(reply)
    game.ok("knightpanic move 101 alice secret c1-e5")
    assert "(Auto)" not in body_of(game.new_mails()[0])


def test_queue_on_move_is_a_move(game):
    game.ok("knightpanic queue 101 alice secret c1-e5")
    mails = game.new_mails()
    assert sorted(m["To"] for m in mails) == ["alice@example.org", "bob@example.org"]
    assert "   1 c1-e5" in body_of(mails[0])


def test_resigning_out_of_turn_is_queued_and_toggled(game):
    game.ok("knightpanic move 101 alice secret c1-e5")
    game.ok("knightpanic move 101 bob secret g7-e3")
    game.new_mails()
    game.ok("knightpanic resign 101 bob secret", sender="bob@example.org")
    [reply] = game.new_mails()
    assert reply["Subject"] == "KnightPanic Board 101 Resigned"
    assert "takes effect on your next turn" in body_of(reply)
    text = game.ok("knightpanic showas bob secret 101", sender=None).printed[0].body
    assert "Your resignation is queued and takes effect on your next turn." in text
    game.ok("knightpanic resign 101 bob secret", sender="bob@example.org")
    assert "cancelled" in body_of(game.new_mails()[0])
    game.ok("knightpanic resign 101 bob secret", sender="bob@example.org")
    game.new_mails()
    game.ok("knightpanic move 101 alice secret a1-c5")
    body = body_of(game.new_mails()[0])
    assert "bob has resigned." in body and "Game won by alice." in body
    assert "   3 a1-c5" in body and "   4 Resign (Auto)" in body


def test_submit_shows_the_move_and_confirm_plays_it(game):
    game.ok("knightpanic submit 101 alice secret c1-e5#1", sender="alice@example.org", body="hm")
    [reply] = game.new_mails()
    assert reply["Subject"] == "Submit of KnightPanic Board 101"
    body = body_of(reply)
    assert "This is a preview of a submitted move. It must be confirmed to take effect." in body
    assert "  5  . . o .  5" in body
    game.ok("knightpanic confirm 101 alice secret", body="")
    mails = game.new_mails()
    assert sorted(m["To"] for m in mails) == ["alice@example.org", "bob@example.org"]
    assert "alice writes:\nhm" in body_of(mails[0])
    assert "No submission to confirm" in game.refused("knightpanic confirm 101 alice secret")


def test_submit_refusals_and_lapse(game):
    assert "It is not your move" in game.refused("knightpanic submit 101 bob secret g7-e3")
    assert "a knight moves" in game.refused("knightpanic submit 101 alice secret c1-e3")
    game.ok("knightpanic submit 101 alice secret c1-e5")
    game.ok("knightpanic move 101 alice secret a1-c5")
    assert "No submission to confirm" in game.refused("knightpanic confirm 101 alice secret")


def test_the_movers_comment_survives_a_queued_move_played_after_it(game):
    game.ok("knightpanic queue 101 bob secret g7-e3", body="bob's plan")
    game.new_mails()
    game.ok("knightpanic move 101 alice secret c1-e5", body="alice's move")
    body = body_of(game.new_mails()[0])
    assert "alice writes:\nalice's move" in body
    assert "bob writes:\nbob's plan" in body
    assert body.index("alice writes:") < body.index("bob writes:")
