"""Moves ahead of time: queue, resign out of turn, submit and confirm (docs/spec/server.md §3.5,
§3.7)."""

import pytest

from tests.conftest import body_of


@pytest.fixture
def game(harness):
    harness.signup("alice", "bob")
    harness.challenge("knightpanic challenge alice bob")
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
    # g7-c5 answers most first moves, but not a1-c5.
    game.ok("knightpanic qmove 101 bob secret g7-c5#2")
    game.new_mails()
    game.ok("knightpanic move 101 alice secret a1-c5")
    mails = game.new_mails()
    failure = [m for m in mails if m["Subject"] == "Queued move not played (KnightPanic Board 101)"]
    assert [m["To"] for m in failure] == ["bob@example.org"]
    assert 'Queued move "g7-c5" was found but is illegal' in body_of(failure[0])
    boards = [m for m in mails if m not in failure]
    assert len(boards) == 2
    for mail in boards:
        assert "bob's queued move was illegal and has been discarded." in body_of(mail)
        assert mail["Subject"] == "KnightPanic Board 101: alice vs bob"


def test_a_queued_guard_is_checked_when_played(game):
    game.ok("knightpanic queue 101 bob secret g7-e3#5")
    game.ok("knightpanic move 101 alice secret c1-e5")
    failure = [m for m in game.new_mails() if m["Subject"].startswith("Queued move not played")]
    assert "Move g7-e3 received as move #2" in body_of(failure[0])


def test_queue_cancel_and_refusals(game):
    assert "You have no queued move" in game.refused("knightpanic queue 101 bob secret cancel")
    assert "Only moves and pass can be queued" in game.refused(
        "knightpanic queue 101 bob secret swap"
    )
    game.ok("knightpanic queue 101 bob secret g7-e3")
    game.ok("knightpanic queue 101 bob secret a7-c3")
    game.new_mails()
    game.ok("knightpanic queue 101 bob secret cancel")
    [reply] = game.new_mails()
    assert "queued" not in body_of(reply)
    game.ok("knightpanic move 101 alice secret c1-e5")
    assert "(Auto)" not in body_of(game.new_mails()[0])


def test_a_move_that_can_never_be_played_is_refused_when_queued(game):
    message = game.refused("knightpanic queue 101 bob secret a7-a5")
    assert message.startswith(
        'Move "a7-a5" cannot be queued: it is illegal whatever is played before your turn '
        '(Invalid move "a7-a5": a knight moves'
    )
    assert "You have the following move queued" not in message
    # A move legal after some of alice's answers, but not all, is queued.
    game.ok("knightpanic queue 101 bob secret g7-c5")


def test_queue_on_move_is_a_move(game):
    game.ok("knightpanic queue 101 alice secret c1-e5")
    mails = game.new_mails()
    assert sorted(m["To"] for m in mails) == ["alice@example.org", "bob@example.org"]
    assert "   1 c1-e5" in body_of(mails[0])


def test_resigning_out_of_turn_is_queued_and_cancelled_only_by_queue_cancel(game):
    game.ok("knightpanic move 101 alice secret c1-e5")
    game.ok("knightpanic move 101 bob secret g7-e3")
    game.new_mails()
    game.ok("knightpanic resign 101 bob secret", sender="bob@example.org")
    # The answer to bob and the mail to alice, told apart by address: the one answer of a
    # mail is queued after the command's other mails (docs/spec/server.md §7.1).
    [reply], [told] = game.new_mails("bob@example.org"), game.mails("alice@example.org")[-1:]
    # alice learns of it before she makes the move after which it takes effect.
    assert told["To"] == "alice@example.org" and told["Reply-To"].startswith("pbm+")
    assert (
        "bob has resigned; the resignation takes effect on bob's next turn.\n\nIt is alice's turn."
    ) in body_of(told)
    assert reply["Subject"] == "KnightPanic Board 101 Resignation queued"
    assert body_of(reply).startswith(
        "Your resignation is queued; it takes effect on your next turn.\n"
        'To take it back, send "knightpanic queue 101 bob <password> cancel".\n'
    )
    text = game.ok("knightpanic showas bob secret 101", sender=None).printed[0].body
    assert "Your resignation is queued and takes effect on your next turn." in text
    # The same command again (a mail delivered twice) leaves it queued.
    game.ok("knightpanic resign 101 bob secret", sender="bob@example.org")
    [again] = game.new_mails()
    assert again["Subject"] == "KnightPanic Board 101 Resignation queued"
    assert body_of(again).startswith("Your resignation was already queued; it takes effect")
    game.ok("knightpanic queue 101 bob secret cancel", sender="bob@example.org")
    [reply], [told] = game.new_mails("bob@example.org"), game.mails("alice@example.org")[-1:]
    assert "resignation is queued" not in body_of(reply)
    assert "bob has taken back the resignation." in body_of(told)
    assert "You have no queued move or resignation" in game.refused(
        "knightpanic queue 101 bob secret cancel"
    )
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
    assert "  5   . .[o].   5" in body and "  1   o[.]o o   1" in body
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
