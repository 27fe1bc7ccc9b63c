"""What games tell their robots (docs/spec/server.md §11.7): Knight Line's playouts take a
line when there is one."""

import random

from games.knightline import KnightLine
from pbm.robots.mcts import immediate_win
from tests.test_robots import engine_of


def test_knight_line_finds_exactly_the_moves_that_make_a_line():
    rng = random.Random(5)
    found = 0
    for seed in range(60):
        seats = 2 + seed % 2
        engine = engine_of(KnightLine(), seats, seed)
        while engine.outcome() is None:
            moves = engine.legal_moves()
            seat = engine.to_move()
            line = engine.line_move(moves)
            if line is not None:
                after = engine.copy()
                after.play(line)
                assert after.outcome().winners == (seat,)
                assert "line" in after.outcome().reason
                found += 1
            else:
                winning = immediate_win(engine, moves)
                if winning is not None:  # only a blocked game, which goes to Black
                    after = engine.copy()
                    after.play(winning)
                    assert "blocked" in after.outcome().reason
            engine.play(moves[rng.randrange(len(moves))])
    assert found >= 20
