"""Knight Panic's engine keeps the rules on every board size, 2D and 3D, under each
switch: the shared differential test (tests/test_engine_differential.py) plays only the
extreme sizes and one option at a time, and never -win_no_move in 3D, where it matters.
`PBM_STRESS=1` plays more games."""

import itertools
import os
import random

import pytest

from pbm.plugins import get_games
from tests.reference_engines import reference_game
from tests.test_engine_differential import play_alongside
from tests.test_knightpanic_3d import CLIMB_AND_BACK, PIN_ALL_WHITE, PIN_ALL_WHITE_AND_TRAP_BLACK

GAMES_PER_VARIANT = 200 if os.environ.get("PBM_STRESS") else 10
SWITCHES = ("mover_loses", "win_no_move")


def variants() -> list:
    return [
        pytest.param(raw, id="-".join(k if v is True else f"{k}={v}" for k, v in raw.items()))
        for raw in raw_variants()
    ]


def raw_variants():
    for size, three_d, switches in itertools.product(
        (4, 5, 6, 7),
        (False, True),
        itertools.chain.from_iterable(
            itertools.combinations(SWITCHES, count) for count in range(3)
        ),
    ):
        raw = {
            "size": str(size),
            **({"3d": True} if three_d else {}),
            **dict.fromkeys(switches, True),
        }
        yield raw


@pytest.mark.parametrize("raw", variants())
def test_random_games_match_the_reference_engine(raw):
    game, reference = get_games()["knightpanic"], reference_game("knightpanic")
    options = reference.parse_options(raw, 2)
    rng = random.Random(f"knightpanic{raw}")
    for _ in range(GAMES_PER_VARIANT):
        seed = rng.randrange(10**9)
        play_alongside(game, reference, reference.initial_state(options, 2, seed), rng)


@pytest.mark.parametrize("switches", [{}, {"mover_loses": True}, {"win_no_move": True}])
@pytest.mark.parametrize("moves", [CLIMB_AND_BACK, PIN_ALL_WHITE, PIN_ALL_WHITE_AND_TRAP_BLACK])
def test_the_3d_examples_end_alike_when_played_on_one_engine(moves, switches):
    """After its first move an engine judges only what each move can change: the worked
    pins and traps of tests/test_knightpanic_3d.py must end the game there all the same."""
    game, reference = get_games()["knightpanic"], reference_game("knightpanic")
    options = reference.parse_options({"3d": True, **switches}, 2)
    state = reference.initial_state(options, 2, 1)
    engine = game.engine(state)
    for text in moves:
        assert engine.to_move() == reference.to_move(state) is not None
        by_text = {engine.move_text(move): move for move in engine.legal_moves()}
        engine.play(by_text[text])
        state = reference.apply_move(state, reference.to_move(state), text)
        assert engine.state() == state
    assert engine.outcome() == reference.outcome(state)
    assert (engine.outcome() is None) == (moves is CLIMB_AND_BACK)
