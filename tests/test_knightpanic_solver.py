"""The exhaustive solve of flat 4x4 Knight Panic (games/knightpanic/solver.py) and the
robot's perfect play from it (docs/spec/server.md §11.7). The first test that asks for a
value solves the whole game once for the session (about half a minute)."""

import random

import pytest

from games.knightpanic import KnightPanic, solver
from pbm.robots import get_robots
from pbm.robots.mcts import Budget, forced_win
from tests.test_robots import engine_of, random_positions

GAME = KnightPanic()


def played(*texts):
    engine = engine_of(GAME)
    for text in texts:
        engine.play(engine.parse_text(text))
    return engine


def test_only_the_flat_4x4_board_is_solved():
    assert solver.solvable(engine_of(GAME).state())
    assert not solver.solvable(engine_of(GAME, size=5).state())
    assert not solver.solvable(engine_of(GAME, **{"3d": True}).state())


def test_an_immediate_trap_is_a_win_in_one_ply():
    # docs/spec/games/knightpanic.md §10 KP-2: after White's c1-e5, Black's a7-c3 leaves
    # White's g1 without a move
    engine = played("c1-e5")
    assert solver.value(engine) == 1
    move = solver.best_move(engine)
    after = engine.copy()
    after.play(move)
    assert after.outcome().winners == (1,)


def test_the_first_player_loses_the_flat_4x4_game_in_ten_plies():
    start = engine_of(GAME)
    assert solver.value(start) == -10
    # and no first move of White's holds out longer than nine plies more
    values = []
    for move in start.legal_moves():
        after = start.copy()
        after.play(move)
        values.append(solver.value(after))
    assert max(values) == 9 and min(values) == 1


def test_values_agree_with_a_bounded_exhaustive_search():
    """A win in at most five plies is what a five-ply forced-win search finds, no more,
    no less."""
    for engine in random_positions(GAME, count=60, seed=3):
        value = solver.value(engine)
        assert (forced_win(engine, 5) is not None) == (0 < value <= 5)


def test_every_value_follows_from_the_values_of_the_moves():
    for engine in random_positions(GAME, count=60, seed=5):
        seat = engine.to_move()
        answers = []
        for move in engine.legal_moves():
            after = engine.copy()
            after.play(move)
            if after.outcome() is not None:
                answers.append(1 if after.outcome().winners == (seat,) else -1)
            else:
                answers.append(-solver.value(after))
        value = solver.value(engine)
        if value > 0:
            assert max(answers) > 0
        elif value < 0:
            assert max(answers) < 0
        else:
            assert max(answers) == 0


@pytest.mark.parametrize("seed", [1, 2])
def test_the_robot_never_throws_away_a_won_position(seed):
    robot = get_robots()[("knightpanic", "mcts")]
    rng = random.Random(seed)
    checked = 0
    for engine in random_positions(GAME, count=40, seed=seed):
        if solver.value(engine) <= 0:
            continue
        seat = engine.to_move()
        engine.play(robot.choose(engine, 2, Budget(playouts=10), rng).move)
        outcome = engine.outcome()
        assert outcome.winners == (seat,) if outcome else solver.value(engine) < 0
        checked += 1
    assert checked >= 10
