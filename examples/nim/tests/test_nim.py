"""Nim's own tests: the conformance checks of pbm.testing, then the rules one by one.

Run them with the distribution installed (`pip install -e .`), so that pbm finds the game
and its templates through the entry point, as a server does.
"""

import pytest
from pbm_nim import Nim

from pbm.game import MoveError, OptionError
from pbm.testing import check_game, play, random_game

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
