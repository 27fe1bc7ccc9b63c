"""Nim's own tests: the conformance checks of pbm.testing, the rules one by one, the
picture, the robot, and a game by mail with pbm.testing.mail's harness.

Run them with the distribution installed (`pip install -e .`), so that pbm finds the game
and its templates through the entry point, as a server does.
"""

import io
import random

import pytest
from click.testing import CliRunner
from pbm_nim import SIDE, Nim
from PIL import Image, ImageColor

from pbm.cli import cli
from pbm.drawing import CELL, HIGHLIGHT, ORANGE
from pbm.game import MoveError, OptionError
from pbm.pictures import board_png, picture_size
from pbm.robots import Budget, get_robots
from pbm.testing import check_game, play, random_game
from pbm.testing.mail import Harness, body_of

game = Nim()


def test_the_contract_holds():
    check_game(
        game,
        [
            ({}, 2, ["a1", "c2", "B3"]),
            ({"heaps": "5", "misere": True}, 2, ["e9", "d 7"]),
        ],
    )


def test_options_default_and_parsed():
    assert game.parse_options({}, 2) == {"heaps": 3, "misere": False}
    assert game.parse_options({"heaps": "5", "misere": True}, 2) == {"heaps": 5, "misere": True}


@pytest.mark.parametrize(
    "raw,message",
    [
        ({"heaps": "6"}, 'Invalid Nim parameter "-heaps=6": heaps must be from 2 to 5'),
        ({"misere": "yes"}, 'Invalid Nim parameter "-misere=yes": -misere takes no value'),
        (
            {"stones": "4"},
            'Invalid Nim parameter "-stones=4": unknown option; the options are '
            "-heaps=N (2 to 5, default 3) and -misere",
        ),
    ],
)
def test_bad_options_are_refused(raw, message):
    with pytest.raises(OptionError) as error:
        game.parse_options(raw, 2)
    assert str(error.value) == message


@pytest.mark.parametrize(
    "text,message",
    [
        ("b", "write the heap's letter and how many stones you take, e.g. b2"),
        ("d1", '"d1": the heaps are a, b and c'),
        ("b0", '"b0": take at least one stone'),
        ("a2", '"a2": heap a has 1 stone'),
    ],
)
def test_bad_moves_say_what_is_wrong(text, message):
    with pytest.raises(MoveError, match=message):
        game.parse_move(game.initial_state(game.parse_options({}, 2), 2, 0), 0, text)


def test_whoever_takes_the_last_stone_wins():
    state = play(game, game.parse_options({}, 2), 2, 0, ["a1", "b3", "c5"])
    assert game.to_move(state) is None
    assert game.outcome(state).winners == (0,)
    assert game.outcome(state).reason == "First took the last stone"


def test_with_misere_whoever_takes_the_last_stone_loses():
    state = play(game, game.parse_options({"misere": True}, 2), 2, 0, ["a1", "b3", "c5"])
    assert game.outcome(state).winners == (1,)
    assert "loses with -misere" in game.outcome(state).reason


def test_a_pass_hands_the_turn_on_and_leaves_the_heaps():
    state = play(game, game.parse_options({}, 2), 2, 0, ["a1", "pass"])
    assert game.to_move(state) == 0 and state["heaps"] == [0, 3, 5]


def test_the_board_shows_every_heap():
    state = play(game, game.parse_options({}, 2), 2, 0, ["c2"])
    assert game.render_board(state, None) == "\n".join(
        [
            "  a  o                  1",
            "  b  o o o              3",
            "  c  o o o              3",
            "Last move: c2",
        ]
    )


def test_the_help_lists_the_options():
    text = game.help_text()
    assert "-heaps=N   heaps on the table, 2 to 5 (default 3)" in text
    assert "-misere    whoever takes the last stone loses (off by default)" in text


@pytest.mark.parametrize("seed", range(20))
def test_random_games_end_with_a_winner(seed):
    moves, state = random_game(game, game.parse_options({"heaps": "5"}, 2), 2, seed)
    assert len(moves) <= 25 and game.outcome(state) is not None


# -- the picture ----------------------------------------------------------------------------


def test_the_picture_shows_every_heap_and_marks_the_last_move():
    state = play(game, game.parse_options({}, 2), 2, 0, ["c2"])
    picture = game.drawing(state, None, "c2")
    assert [piece.label for piece in picture.pieces] == ["1", "3", "3"]
    image = Image.open(io.BytesIO(board_png(game, state, None, "c2"))).convert("RGB")
    assert image.size == picture_size(picture)
    for heap, piece in enumerate(picture.pieces):
        beside_the_count = (round(piece.x - piece.radius * 0.7), round(piece.y))
        assert image.getpixel(beside_the_count) == ImageColor.getrgb(ORANGE)
        corner = (round(piece.x - SIDE * 0.4), round(piece.y - SIDE * 0.4))
        cell = HIGHLIGHT if heap == 2 else CELL
        assert image.getpixel(corner) == ImageColor.getrgb(cell), f"heap {heap}"


# -- the robot ------------------------------------------------------------------------------


def test_the_robot_takes_the_last_stones_when_it_can():
    robot = get_robots()[("nim", "mcts")]
    state = play(game, game.parse_options({}, 2), 2, 0, ["a1", "b3"])
    choice = robot.choose(game.engine(state), 2, Budget(playouts=100), random.Random(1))
    assert choice.move == "c5"


# -- by mail, with the harness pbm ships ----------------------------------------------------


@pytest.fixture
def harness(tmp_path, monkeypatch):
    monkeypatch.setenv("PBM_HOME", str(tmp_path / "home"))
    return Harness(tmp_path / "home")


def test_a_game_by_mail_against_the_robot(harness):
    home = str(harness.home)
    robot = CliRunner().invoke(cli, ["--home", home, "robots", "add", "nimbot", "nim", "mcts"])
    assert robot.exit_code == 0, robot.output
    harness.signup("alice")
    harness.ok("nim challenge alice nimbot -heaps=2", sender="alice@example.org")
    harness.ok("nim move 101 alice secret a1", sender="alice@example.org")
    again = harness.refused("nim move 101 alice secret b1", sender="alice@example.org")
    assert "It is not your move" in again
    moved = CliRunner().invoke(cli, ["--home", home, "robots", "run"])
    assert "nim move 101 nimbot <robot> b3#2" in moved.output
    [*_, last] = harness.new_mails("alice@example.org")
    assert "Game won by nimbot." in body_of(last)
