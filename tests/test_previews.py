"""preview and replay: moves tried on a copy, nothing saved (docs/spec/server.md §3.3, §3.7)."""

import pytest

from tests.conftest import body_of


@pytest.fixture
def game(harness):
    harness.signup("alice", "bob")
    harness.challenge("knightpanic challenge alice bob")
    harness.ok("knightpanic move 101 alice secret c1-e5")
    harness.ok("knightpanic move 101 bob secret g7-e3")
    harness.new_mails()
    return harness


def only_reply(harness, command):
    harness.ok(command, sender="watcher@example.org")
    [mail] = harness.new_mails()
    assert mail["To"] == "watcher@example.org"
    return mail


def test_preview_plays_moves_on_a_copy(game):
    mail = only_reply(game, "knightpanic preview 101 a1-c5 a7-c3")
    assert mail["Subject"] == "Preview of KnightPanic Board 101"
    body = body_of(mail)
    assert body.startswith("Preview of KnightPanic Board 101")
    assert "   3 a1-c5      4 a7-c3" in body
    text = game.ok("knightpanic show 101", sender=None).printed[0].body
    assert "a1-c5" not in text


def test_preview_from_an_earlier_position(game):
    body = body_of(only_reply(game, "knightpanic prev 101#1 a7-c3"))
    assert body.startswith("Preview of KnightPanic Board 101 after move 1")
    # The preview's own end, not the board's (which goes on): issue 16.
    assert "\nGame won by bob.\n(White's knight on g1 cannot move)\n" in body
    assert "   2 a7-c3" in body


def test_preview_refuses_an_illegal_move(game):
    message = game.refused("knightpanic preview 101 a1-c5 a1-c5")
    assert "Move 2 (a1-c5) is illegal: " in message and "there is no Black knight on a1" in message


def test_preview_new_with_options_and_players(harness):
    mail = only_reply(harness, "knightpanic preview new -size=5 c1-e5")
    assert mail["Subject"] == "Preview of KnightPanic Board new"
    body = body_of(mail)
    assert "Options: -size=5" in body
    assert "   White        Black\n   player1      player2\n   1 c1-e5" in body
    assert "At most 2 players" not in body
    assert "is played by 2 players" in harness.refused("knightpanic preview new 3")
    assert "size must be from 4 to 7" in harness.refused("knightpanic preview new -size=9")
    assert "The preview command takes options only with new" in harness.refused(
        "knightpanic preview 101 -size=5"
    )


def test_replay_counts_back_and_adds_moves(game):
    body = body_of(only_reply(game, "knightpanic replay 101 -1 a7-c3"))
    assert body.startswith("Replay of KnightPanic Board 101 after move 1")
    # a7-c3 ends the replayed game, not the board: the replay names its own end (issue 16).
    assert "\nGame won by bob.\n" in body
    assert "Game won" not in game.ok("knightpanic show 101", sender=None).printed[0].body
    assert "   1 c1-e5      2 a7-c3" in body
    assert "Board 101 has only 2 moves" in game.refused("knightpanic replay 101 5")
    assert "Syntax is" in game.refused("knightpanic replay 101 x")


# -- issue 16: a preview names its result, has no clocks, swaps and plays forced passes ----


def test_a_finished_preview_names_the_winner_and_shows_no_clocks(harness):
    mail = only_reply(harness, "knightpanic preview new c1-e5 a7-c3")
    assert body_of(mail) == (
        "Preview of KnightPanic Board new\n"
        "\n"
        "Game won by player2.\n"
        "(White's knight on g1 cannot move)\n"
        "\n"
        "   White        Black\n"
        "   player1      player2\n"
        "   1 c1-e5      2 a7-c3\n"
        "\n"
        "\n"
        "      a c e g\n"
        "  7  [.]x x x   7\n"
        "  5   . . o .   5\n"
        "  3   .[x]. .   3\n"
        "  1   o . o o   1\n"
        "      a c e g\n"
        "o x  White, Black knight\n"
        "[ ]  the last move (from and to)\n"
        "Last move: Black a7-c3\n"
    )


def test_a_preview_of_a_board_shows_none_of_its_clocks(game):
    game.challenge("knightpanic challenge alice bob --nagtime=2 --forfeittime=3")
    game.new_mails()
    body = body_of(only_reply(game, "knightpanic preview 102 c1-e5"))
    assert "It is bob's turn." in body
    for clock in ("Deadline", "Nag time", "Forfeit time", "Time used", "It is now"):
        assert clock not in body


def test_swap_can_be_previewed(harness):
    body = body_of(only_reply(harness, "lox preview new a1 swap"))
    assert "It is player1's turn.\n\n   1 Red (player1): a1\n   2 Blue (player2): swap\n" in body
    assert "Move 3 (swap) is illegal: The board has just been swapped. Please make a move" in (
        harness.refused("lox preview new a1 swap swap")
    )
    assert "Move 1 (swap) is illegal: You can only swap after move number 1" in (
        harness.refused("lox preview new swap")
    )
    assert "Move 2 (swap) is illegal: KnightPanic does not support swapping" in (
        harness.refused("knightpanic preview new c1-e5 swap")
    )


def test_a_preview_plays_the_forced_pass_of_a_stuck_player(harness):
    from tests.test_knightline import PASS_THEN_MOVE_AGAIN

    moves = [m for m in PASS_THEN_MOVE_AGAIN[:10] if m != "pass"]
    body = body_of(only_reply(harness, "knightline preview new -stack=10 " + " ".join(moves)))
    assert "   7 2,0/4,-1/3      8 pass (Auto)\n   9 0,0/2,1/1      10 (-1,1)/1,2/4\n" in body
    assert "It is player1's turn." in body
