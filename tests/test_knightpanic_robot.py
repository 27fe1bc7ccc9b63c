"""Knight Panic's robot off the solved boards (docs/spec/server.md §11.7): the root's moves
it searches leave the opponent no forced trap, and the search honours that choice."""

import random
import time

from games.knightpanic import KnightPanic
from games.knightpanic.robot import root_moves
from games.lox import Lox
from pbm.robots.mcts import Budget, Knowledge, forced_win, search
from tests.test_robots import engine_of, random_positions

GAME = KnightPanic()


def test_the_search_plays_only_the_root_moves_the_game_keeps():
    engine = engine_of(Lox(), size=9)
    moves = engine.legal_moves()
    only = moves[len(moves) // 2]
    knowledge = Knowledge(root_moves=lambda position, legal, deadline: [only])
    choice = search(engine, 2, Budget(playouts=30), random.Random(1), knowledge)
    assert choice.move == only


def test_the_robot_searches_the_moves_that_leave_no_forced_trap():
    checked = dropped = 0
    positions = [engine_of(GAME, size=5), engine_of(GAME, size=5, **{"3d": True})]
    positions += random_positions(GAME, count=12, seed=9, size=5)
    for engine in positions:
        seat = engine.to_move()
        moves = engine.legal_moves()
        kept = root_moves(engine, moves, None)
        safe = []
        for move in moves:
            after = engine.copy()
            after.play(move)
            # a forced trap of the opponent: a win within a move of ours and its answer
            if after.winner == seat or after.winner is None and forced_win(after, 3) is None:
                safe.append(move)
        assert kept == (safe or moves)
        checked += 1
        dropped += len(moves) - len(kept)
    assert checked == 14 and dropped > 0


def test_past_its_deadline_the_robot_keeps_every_move():
    engine = engine_of(GAME, size=5)
    moves = engine.legal_moves()
    assert root_moves(engine, moves, time.perf_counter() - 1) == moves
