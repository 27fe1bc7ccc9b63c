"""Knight Panic's robot off the solved boards (docs/spec/server.md §11.7): the root's moves
it searches leave the opponent no forced trap, and the search honours that choice."""

import random
import time

from games.knightpanic import KnightPanic
from games.knightpanic.robot import root_moves
from games.lox import Lox
from pbm.robots.mcts import Budget, Knowledge, forced_win, immediate_win, is_safe, search
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


def wins_in_three(engine, move) -> bool:
    """White's first move leaves every Black reply an immediate trap for White."""
    after = engine.copy()
    after.play(move)
    if after.outcome() is not None:
        return after.winner == 0
    for reply in after.legal_moves():
        answered = after.copy()
        answered.play(reply)
        if answered.outcome() is not None:
            if answered.winner != 0:
                return False
        elif immediate_win(answered, answered.legal_moves()) is None:
            return False
    return True


def test_the_first_moves_that_win_by_force_which_cap_a_robot_playing_black():
    """docs/robots.md: on these boards White has first moves that trap by force in 3 plies;
    a robot as Black loses to them whatever it does, so against the greedy player, who picks
    at random among its safe first moves, it wins at most the share of the others."""
    expected = {  # (size, 3d, mover_loses): (the forcing first moves, the safe ones)
        (5, False, False): ({"c1-g3", "g1-c3"}, 8),
        (5, False, True): ({"c1-g3", "g1-c3"}, 8),
        (6, False, False): ({"c3-e7", "e1-c5", "g1-i5", "i3-g7"}, 6),
        (5, True, False): ({"c1-g3", "g1-c3"}, 8),
        (6, True, False): ({"a1-c5", "e1-c5", "g1-i5", "k1-i5"}, 8),
        (4, False, False): (set(), 8),
        (7, False, False): (set(), 24),
    }
    for (size, three_d, mover_loses), (forcing, safe_count) in expected.items():
        engine = engine_of(GAME, size=size, mover_loses=mover_loses, **{"3d": three_d})
        moves = engine.legal_moves()
        found = {engine.move_text(m) for m in moves if wins_in_three(engine, m)}
        safe = [m for m in moves if is_safe(engine, m, None)]
        assert found == forcing, (size, three_d, mover_loses)
        assert len(safe) == safe_count, (size, three_d, mover_loses)
        assert forcing <= {engine.move_text(m) for m in safe}
