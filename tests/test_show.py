"""Information commands: help, list, games, show and its selectors."""

import re

import pytest

from tests.conftest import body_of


@pytest.fixture
def boards(harness):
    """Board 101 alice-bob finished (bob won), 102 bob-carol active, 103 carol-alice new."""
    harness.signup("alice", "bob", "carol")
    harness.challenge("knightpanic challenge alice bob")
    harness.ok("knightpanic move 101 alice secret c1-e5")
    harness.ok("knightpanic move 101 bob secret a7-c3")
    harness.challenge("knightpanic challenge bob carol -size=5")
    harness.ok("knightpanic move 102 bob secret c1-e5")
    harness.challenge("knightpanic challenge carol alice")
    harness.new_mails()
    return harness


def shown(harness, command):
    result = harness.run(command, sender="watcher@example.org")
    return result, harness.new_mails("watcher@example.org")


def answered(mails) -> list[str]:
    """The subjects of the answers in the one mail: its own, or those of its sections."""
    [mail] = mails
    if mail["Subject"].startswith("Answers to: "):
        return re.findall(r"^--- (.*) ---$", body_of(mail), re.M)
    return [mail["Subject"]]


def test_show_one_board_in_full(boards):
    result, [mail] = shown(boards, "knightpanic show 102")
    assert result.ok
    assert mail["Subject"] == "KnightPanic Board 102: bob vs carol"
    body = body_of(mail)
    assert body.startswith("Summary of KnightPanic Board 102\nOptions: -size=5")
    assert "It is carol's turn." in body
    assert "   White        Black\n   bob          carol\n   1 c1-e5" in body
    assert "It is now......." in body and "Deadline........" in body


def test_show_board_word_is_ignored_and_several_boards(boards):
    result, mails = shown(boards, "knightpanic show board 101 102")
    assert answered(mails) == [
        "KnightPanic Board 101: alice vs bob",
        "KnightPanic Board 102: bob vs carol",
    ]


def test_show_an_earlier_position(boards):
    _, [mail] = shown(boards, "knightpanic show 101#1")
    body = body_of(mail)
    assert body.startswith("Summary of KnightPanic Board 101 after move 1")
    assert "It is bob's turn." in body
    assert "  5   . .[o].   5" in body and "  7   x x x x   7" in body
    assert "  1   o[.]o o   1" in body and "Last move: White c1-e5" in body
    _, [mail] = shown(boards, "knightpanic show 101#-2")
    assert "after move 0" in body_of(mail) and "Please start the game alice." in body_of(mail)


def test_show_out_of_range_and_missing_boards_are_summarised(boards):
    result, mails = shown(boards, "knightpanic show 101#5 999 102")
    assert result.ok
    assert answered(mails) == ["KnightPanic Board 102: bob vs carol", "Show summary"]
    assert (
        "The following boards were not shown: 101 (Board 101 has only 2 moves), 999 (not found)"
        in " ".join(body_of(mails[-1]).split())
    )


@pytest.mark.parametrize(
    "selection,expected",
    [
        ("alice", ["101", "103"]),
        ("alice all", ["101", "103"]),
        ("alice active", ["103"]),
        ("alice inactive", ["101"]),
        ("carol next", ["102", "103"]),
        ("alice next", []),
        ("bob carol active", ["102", "103"]),
        ("alice standard", ["101", "103"]),
        ("alice tournament", []),
    ],
)
def test_show_by_user_with_selectors(boards, selection, expected):
    result, mails = shown(boards, f"knightpanic show {selection}")
    subjects = answered(mails)
    numbers = [s.split()[2].rstrip(":") for s in subjects if s != "Show summary"]
    assert numbers == expected
    if not expected:
        assert "No boards found" in body_of(mails[-1])


@pytest.mark.parametrize(
    "command,message",
    [
        ("knightpanic show", "This would generate too much mail -- please refine request"),
        ("knightpanic show 101 alice", "Give either board numbers or userids, not both"),
        ("knightpanic show alice 101", "Give either board numbers or userids, not both"),
        (
            "knightpanic show alice active next",
            "Use only one of active, inactive, archived or next",
        ),
        ("knightpanic show next", "The next selector needs at least one userid"),
        ("knightpanic show alcie", 'No such user "alcie". Did you mean "alice"?'),
        ("knightpanic games zed", 'No such user "zed"'),
    ],
)
def test_selector_errors(boards, command, message):
    assert message in boards.refused(command)


def test_show_is_capped(boards, monkeypatch):
    boards.configure("[limits]\nmax_show_mails = 2\n")
    assert "too much mail" in boards.refused("knightpanic show 101 102 103")
    assert "too much mail" in boards.refused("knightpanic show alice bob carol")
    boards.ok("knightpanic show 101 102")


def test_games_table(boards):
    result, [mail] = shown(boards, "knightpanic games")
    assert mail["Subject"] == "List of KnightPanic games"
    assert body_of(mail).split("\n")[2:6] == [
        "Board  Move  White       Black       Status",
        "  101     2  alice       bob         bob Won",
        "  102     1  bob         carol       carol's turn",
        "  103     0  carol       alice       carol to start",
    ]


def test_games_of_a_user_and_a_selector(boards):
    _, [mail] = shown(boards, "knightpanic games alice active")
    lines = body_of(mail).split("\n")
    assert lines[0] == "List of KnightPanic games (alice active)"
    assert [line.split()[0] for line in lines[3:] if line.strip()] == ["103"]


def test_list_of_games_and_list_of_a_game(boards):
    _, [mail] = shown(boards, "list")
    assert mail["Subject"] == "List of games"
    assert "knightpanic     KnightPanic     2        2" in body_of(mail)
    _, mails = shown(boards, "list KNIGHTPANIC")
    assert [m["Subject"] for m in mails] == ["List of KnightPanic games"]
    assert 'Unknown game "knightpanik". Did you mean "knightpanic"?' in boards.refused(
        "list knightpanik"
    )


def test_help_topics(harness):
    for topic, fragment in [
        ("", "Commands of this server"),
        ("commands", "Server commands:"),
        ("tutorial", "signup alice mysecret"),
        ("tutorial", "reply to the latest mail about the\n   board with just your move"),
        ("games", "KnightPanic, 2 players"),
        ("knightpanic", "Moves: from-to, e.g. a1-c5"),
        ("move", "game move board userid password move[#n]"),
        ("signup", "signup userid password [address...]"),
    ]:
        result = harness.ok(f"help {topic}".strip(), sender=None)
        [mail] = result.printed
        assert mail.subject == f"Help {topic or 'commands'}"
        assert fragment in mail.body
    help_game = harness.ok("knightpanic help", sender=None).printed[0]
    assert help_game.subject == "Help knightpanic"
    assert "The start position:" in help_game.body and "  1   o o o o   1" in help_game.body


def test_help_unknown_subject(harness):
    assert 'No help available for "tutorail". Did you mean "tutorial"?' in harness.refused(
        "help tutorail"
    )


def test_every_mail_line_fits_76_columns(boards):
    boards.ok("help commands")
    boards.ok("knightpanic show alice bob carol")
    boards.ok("help knightpanic")
    for mail in boards.mails():
        for line in body_of(mail).split("\n"):
            assert len(line) <= 76, line
