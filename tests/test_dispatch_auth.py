"""The dispatcher checks the userid and password where the command's declaration says they
stand, before the handler runs; only the checks a command declares as before_auth (a
board's syntax and existence, docs/spec/server.md §3.5.1 step 1) come first."""

import pytest

from pbm.dispatch import open_server
from pbm.grammar import parse, specs_for

WRONG_PASSWORD = [
    "add alice wrong alice@example.net",
    "change address alice wrong",
    "change password alice wrong newsecret",
    "signoff alice wrong",
    "vacation alice wrong on",
    "knightpanic vacation alice wrong",
    "knightpanic limit alice wrong 3",
    "knightpanic seek alice wrong 2",
    "knightpanic invite alice wrong carol",
    "knightpanic invitations alice wrong on",
    "knightpanic decline 102 carol wrong",
    "knightpanic accept 102 carol wrong",
    "knightpanic accept alice wrong",
    "knightpanic reject alice wrong",
    "knightpanic notify alice wrong",
    "message alice wrong bob",
    "broadcast alice wrong",
    "knightpanic chat 101 alice wrong",
    "knightpanic subscribe carol wrong all",
    "knightpanic unsubscribe 101 carol wrong",
    "knightpanic showas alice wrong",
    "knightpanic move 101 alice wrong c1-e5",
    "knightpanic pass 101 alice wrong",
    "knightpanic swap 101 alice wrong",
    "knightpanic resign 101 alice wrong",
    "knightpanic propose 101 alice wrong",
    "knightpanic undo 101 alice wrong",
    "knightpanic accept 101 alice wrong",
    "knightpanic reject 101 alice wrong",
    "knightpanic queue 101 bob wrong c1-e5",
    "knightpanic submit 101 alice wrong c1-e5",
    "knightpanic confirm 101 alice wrong",
    "export me alice wrong",
    "subjects alice wrong pbmserv",
    "digest alice wrong on",
    "html alice wrong on",
    "tournament create spring knightpanic alice wrong --players=3",
    "tournament join spring alice wrong",
    "tournament leave spring alice wrong",
]


@pytest.fixture
def board(harness):
    harness.signup("alice", "bob", "carol")
    harness.challenge("knightpanic challenge alice bob")
    harness.ok("knightpanic invite bob secret carol")  # invitation 102
    return harness


def test_every_command_with_a_password_is_covered_here(board):
    """The list above names every command whose declaration says where a password stands."""
    with open_server(board.config) as server:
        covered = {id(parse(text, server.games).spec) for text in WRONG_PASSWORD}
    declared = [s for scope in ("global", "game") for s in specs_for(scope) if s.auth is not None]
    assert [s.name for s in declared if id(s) not in covered] == []


@pytest.mark.parametrize("text", WRONG_PASSWORD)
def test_a_wrong_password_is_refused_before_the_handler(board, text):
    before = board.outbox_files()
    assert "Invalid password entered" in board.refused(text, body="Hello there")
    new = [path for path in board.outbox_files() if path not in before]
    assert len(new) == 1, "only the error mail to the sender"
    board.ok("knightpanic move 101 alice secret c1-e5")  # the board is as it was


@pytest.mark.parametrize(
    "text, error",
    [
        ("knightpanic move 999 alice wrong c1-e5", "KnightPanic board 999 not found"),
        ("knightpanic move x1 alice wrong c1-e5", 'Syntax is "knightpanic move board userid'),
        ("knightpanic chat 999 alice wrong", "KnightPanic board 999 not found"),
        ("knightpanic accept 999 alice wrong", "KnightPanic board 999 not found"),
        ("knightpanic accept alice wrong extra", 'Syntax is "knightpanic accept board'),
        ("knightpanic decline 999 alice wrong", "KnightPanic invitation 999 not found"),
        ("knightpanic showas alice wrong -nosuch", 'Unknown view option "-nosuch" for showas'),
        ("cleanup", "only available to the operator"),
    ],
)
def test_the_checks_a_command_declares_first_win_over_a_wrong_password(board, text, error):
    assert error in board.refused(text)
