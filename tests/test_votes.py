"""Draws and undo by vote (docs/spec/server.md §3.6)."""

import pytest

from tests.conftest import body_of


@pytest.fixture
def game(harness):
    harness.signup("alice", "bob", "carol")
    harness.challenge("knightpanic challenge alice bob")
    harness.ok("knightpanic move 101 alice secret c1-e5")
    harness.ok("knightpanic move 101 bob secret g7-e3")
    harness.new_mails()
    return harness


def show(harness, board="101", game="knightpanic"):
    return harness.ok(f"{game} show {board}", sender=None).printed[0].body


def test_a_draw_by_agreement_ends_the_game_as_a_tie(game):
    game.ok("knightpanic move 101 bob secret propose", body="Peace?")
    mails = game.new_mails()
    assert sorted(m["To"] for m in mails) == ["alice@example.org", "bob@example.org"]
    body = body_of(mails[0])
    assert mails[0]["Subject"] == "KnightPanic Board 101: alice vs bob"
    assert (
        "bob has proposed a draw. The following players still need to accept or reject this: alice"
    ) in " ".join(body.split())
    game.ok("knightpanic accept 101 alice secret")
    mails = game.new_mails()
    body = body_of(mails[0])
    assert mails[0]["Subject"] == "KnightPanic Board 101: alice vs bob"
    assert "The players have agreed to a draw." in body
    assert "Game was a tie." in body
    assert "alice's rating stays at 1600 (provisional)." in body
    assert "The game has ended" in game.refused("knightpanic move 101 alice secret a1-c5")


def test_votes_may_be_cast_out_of_turn_and_rejected(game):
    game.ok("knightpanic propose 101 bob secret")
    assert "A draw has already been proposed. Please accept or reject it." in game.refused(
        "knightpanic undo 101 alice secret"
    )
    assert "You have already accepted" in game.refused("knightpanic accept 101 bob secret")
    game.new_mails()
    game.ok("knightpanic reject 101 alice secret")
    body = body_of(game.new_mails()[0])
    assert "alice has rejected the draw proposal." in body
    assert "Nothing has been proposed. Please move or propose a draw or undo." in game.refused(
        "knightpanic move 101 alice secret accept"
    )


def test_a_new_ply_cancels_a_pending_vote(game):
    game.ok("knightpanic move 101 bob secret propose")
    game.new_mails()
    game.ok("knightpanic move 101 alice secret a1-c5")
    body = body_of(game.new_mails()[0])
    assert "The pending draw proposal has been cancelled." in body
    assert "Nothing has been proposed" in game.refused("knightpanic accept 101 bob secret")


def test_undo_takes_back_the_last_move(game):
    game.ok("knightpanic undo 101 bob secret")
    game.new_mails()
    game.ok("knightpanic accept 101 alice secret")
    body = body_of(game.new_mails()[0])
    assert "UNDO successful: move 2 (g7-e3) has been taken back." in body
    assert "It is bob's turn." in body
    text = show(game)
    assert "   1 c1-e5\n" in text and "g7-e3" not in text
    game.ok("knightpanic move 101 bob secret a7-c3#2")
    assert "Game won by bob." in show(game)


def test_undo_with_nothing_to_undo(harness):
    harness.signup("alice", "bob")
    harness.challenge("knightpanic challenge alice bob")
    assert "There is no move to undo" in harness.refused("knightpanic undo 101 alice secret")


def test_votes_need_a_seat_on_a_running_board(game):
    assert "You are NOT playing this game" in game.refused("knightpanic propose 101 carol secret")
    assert "Syntax is" in game.refused("knightpanic propose 101 alice")


def test_resigned_seats_accept_at_once(harness):
    harness.signup("alice", "bob", "carol")
    harness.challenge("tally challenge alice bob carol -target=30")
    for userid in ("alice", "bob", "carol", "alice"):
        harness.ok(f"tally move 101 {userid} secret 1")
    harness.ok("tally resign 101 bob secret")
    harness.ok("tally propose 101 carol secret")
    harness.new_mails()
    harness.ok("tally accept 101 alice secret")
    mails = harness.new_mails()
    body = body_of(mails[0])
    assert "The players have agreed to a draw." in body
    assert "Game was a tie." in body
    text = harness.ok("tally history", sender=None).printed[0].body
    assert "TIE" in text
