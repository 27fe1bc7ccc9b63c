"""Knight Panic's engine judges, after its first move, only what each move can change: an
engine played on must end the worked pins and traps of tests/test_knightpanic_3d.py as the
plugin contract does, which builds an engine from the state for every move and judges it
whole. Random games on every board size, 2D and 3D, under each switch are replayed against
the engine frozen before issue 21 by tests/test_engine_differential.py."""

import pytest

from pbm.plugins import get_games
from tests.test_knightpanic_3d import CLIMB_AND_BACK, PIN_ALL_WHITE, PIN_ALL_WHITE_AND_TRAP_BLACK


@pytest.mark.parametrize("switches", [{}, {"mover_loses": True}, {"win_no_move": True}])
@pytest.mark.parametrize("moves", [CLIMB_AND_BACK, PIN_ALL_WHITE, PIN_ALL_WHITE_AND_TRAP_BLACK])
def test_the_3d_examples_end_alike_when_played_on_one_engine(moves, switches):
    game = get_games()["knightpanic"]
    options = game.parse_options({"3d": True, **switches}, 2)
    state = game.initial_state(options, 2, 1)
    engine = game.engine(state)
    for text in moves:
        assert engine.to_move() == game.to_move(state) is not None
        by_text = {engine.move_text(move): move for move in engine.legal_moves()}
        engine.play(by_text[text])
        state = game.apply_move(state, game.to_move(state), text)
        assert engine.state() == state
    assert engine.outcome() == game.outcome(state)
    assert (engine.outcome() is None) == (moves is CLIMB_AND_BACK)
