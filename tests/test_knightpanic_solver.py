"""The exhaustive solve of flat 4x4 Knight Panic (games/knightpanic/solver.py) and the
robot's perfect play from it (docs/spec/server.md §11.7). The first test that asks for a
value solves the whole game once for the session (a few seconds)."""

import random
import time

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


def test_only_the_4x4_boards_are_solved():
    assert solver.solvable(engine_of(GAME).state())
    assert solver.solvable(engine_of(GAME, **{"3d": True}).state())
    assert not solver.solvable(engine_of(GAME, size=5).state())
    assert not solver.solvable(engine_of(GAME, size=5, **{"3d": True}).state())


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


BOARDS = [{}, {"3d": True}, {"3d": True, "win_no_move": True}]


@pytest.mark.parametrize("options", BOARDS)
def test_values_agree_with_a_bounded_exhaustive_search(options):
    """A win in at most five plies is what a five-ply forced-win search finds, no more,
    no less."""
    for engine in random_positions(GAME, count=60, seed=3, **options):
        value = solver.value(engine)
        assert (forced_win(engine, 5) is not None) == (0 < value <= 5)


@pytest.mark.parametrize("options", BOARDS)
def test_every_value_follows_from_the_values_of_the_moves(options):
    for engine in random_positions(GAME, count=60, seed=5, **options):
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


def test_the_4x4_3d_game_is_a_draw():
    start = engine_of(GAME, **{"3d": True})
    assert solver.value(start) == 0
    drawing = []
    for move in start.legal_moves():
        after = start.copy()
        after.play(move)
        if solver.value(after) == 0:
            drawing.append(start.move_text(move))
        else:
            assert solver.value(after) > 0  # every other first move loses for White
    assert drawing == ["a1-e3", "g1-c3"]


def test_a_move_back_along_a_jump_is_a_jump_too():
    # the solve finds a position's predecessors by jumping its last mover's knights back
    for point, targets in enumerate(solver.JUMPS_3D):
        for target in range(solver.POINTS):
            assert (targets >> target & 1) == (solver.JUMPS_3D[target] >> point & 1)


def test_in_a_drawn_position_the_robot_searches_only_the_drawing_moves():
    robot = get_robots()[("knightpanic", "mcts")]
    start = engine_of(GAME, **{"3d": True})
    drawing = solver.drawing_moves(start)
    assert [start.move_text(move) for move in drawing] == ["a1-e3", "g1-c3"]
    for seed in range(6):
        choice = robot.choose(start, 2, Budget(playouts=20), random.Random(seed))
        assert choice.move in drawing
        assert choice.value == 0.5  # the solve's value, whatever the playouts said


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


def test_a_solve_that_cannot_end_before_its_deadline_keeps_nothing(monkeypatch):
    monkeypatch.setattr(solver, "_solved", {})
    start = engine_of(GAME)
    assert solver.solve(start, deadline=time.perf_counter() - 1) is False
    assert not solver.known(start)
    assert solver.solve(start) is True
    assert solver.known(start)


def test_a_timed_budget_too_short_for_the_solve_plays_the_search(monkeypatch):
    monkeypatch.setattr(solver, "_solved", {})
    robot = get_robots()[("knightpanic", "mcts")]
    start = engine_of(GAME)
    choice = robot.choose(start, 2, Budget(seconds=0.2), random.Random(1))
    assert choice.move in start.legal_moves()
    assert choice.reason != "solved"
    assert not solver.known(start)


def test_a_playout_budget_solves_and_reports_the_solved_value():
    robot = get_robots()[("knightpanic", "mcts")]
    start = engine_of(GAME)
    choice = robot.choose(start, 2, Budget(playouts=10), random.Random(1))
    assert choice.reason == "solved"
    assert choice.value == 0.0  # White is lost from the start
    won = played("c1-e5")  # Black traps White at once
    assert robot.choose(won, 2, Budget(playouts=10), random.Random(1)).value == 1.0


def positions_valued(sign: int, count: int, seed: int):
    found = [
        e for e in random_positions(GAME, count=200, seed=seed) if _sign(solver.value(e)) == sign
    ]
    assert len(found) >= count
    return found[:count]


def _sign(value: int) -> int:
    return (value > 0) - (value < 0)


def test_the_robot_resigns_exactly_the_positions_the_solve_proves_lost():
    robot = get_robots()[("knightpanic", "mcts")]
    for sign in (1, 0, -1):
        for engine in positions_valued(sign, 5 if sign else 2, seed=11):
            assert robot.resigns(engine, engine.to_move(), 2) is (sign < 0)
    start = engine_of(GAME)  # lost in ten plies: beyond any two-ply proof
    assert robot.resigns(start, 0, 2)
    assert not robot.resigns(start, 1, 2)  # not on move: nothing to resign


def test_the_robot_accepts_a_draw_exactly_when_the_solve_gives_it_no_win():
    robot = get_robots()[("knightpanic", "mcts")]
    rng = random.Random(3)
    for sign in (1, 0, -1):
        for engine in positions_valued(sign, 5 if sign else 2, seed=13):
            mover = engine.to_move()
            # the seat on move has the value; the other seat its opposite
            assert robot.accepts("draw", engine, mover, 2, rng) is (sign <= 0)
            assert robot.accepts("draw", engine, 1 - mover, 2, rng) is (sign >= 0)
            assert robot.accepts("undo", engine, mover, 2, rng) is False
