"""preview and replay: moves tried on a copy, nothing saved (docs/spec/server.md §3.3, §3.7)."""

import pytest

from tests.conftest import body_of


@pytest.fixture
def game(harness):
    harness.signup("alice", "bob")
    harness.ok("knightpanic challenge alice bob")
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
    assert "Game won by" not in body and "   2 a7-c3" in body


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
        "knightpanic preview 101 -size=5")


def test_replay_counts_back_and_adds_moves(game):
    body = body_of(only_reply(game, "knightpanic replay 101 -1 a7-c3"))
    assert body.startswith("Replay of KnightPanic Board 101 after move 1")
    assert "Game won by bob." not in body
    assert "   1 c1-e5      2 a7-c3" in body
    assert "Board 101 has only 2 moves" in game.refused("knightpanic replay 101 5")
    assert "Syntax is" in game.refused("knightpanic replay 101 x")
