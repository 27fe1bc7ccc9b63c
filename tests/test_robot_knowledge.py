"""What games tell their robots (docs/spec/server.md §11.7): Knight Line's playouts take a
line when there is one, and its robot sees the line every other player threatens."""

import random

from games.knightline import KnightLine
from pbm.robots import Budget, get_robots
from pbm.robots.mcts import immediate_win, is_safe
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


def wins_as(engine, seat) -> bool:
    """Whether seat, were it on move, has a move that wins at once: every move played."""
    for move in engine.moves_of(seat):
        after = engine.copy()
        after.play_as(seat, move)
        if after.outcome() is not None and after.outcome().winners == (seat,):
            return True
    return False


def three_player_positions(count, **options):
    rng = random.Random(11)
    found = []
    seed = 0
    while len(found) < count:
        seed += 1
        engine = engine_of(KnightLine(), 3, seed, **options)
        while engine.outcome() is None and len(found) < count:
            found.append(engine.copy())
            moves = engine.legal_moves()
            engine.play(moves[rng.randrange(len(moves))])
    return found


def test_knight_line_can_win_is_every_move_of_that_seat_played():
    can_win = get_robots()[("knightline", "mcts")].knowledge.can_win
    threats = 0
    for engine in three_player_positions(400, wildcard=True)[::3]:
        for seat in range(3):
            assert can_win(engine, seat) == wins_as(engine, seat)
            threats += can_win(engine, seat)
    assert threats >= 10


def test_the_knight_line_robot_keeps_the_seat_after_next_from_a_line():
    """Positions where some move leaves the seat after next a line to make (and the next
    seat none) and another leaves no one any: the robot's move is always one of the latter,
    since the next seat's move rarely answers a threat that is not its own."""
    robot = get_robots()[("knightline", "mcts")]
    can_win = robot.knowledge.can_win
    tried = 0
    for engine in three_player_positions(3000):
        seat = engine.to_move()
        following, after_next = (seat + 1) % 3, (seat + 2) % 3
        leaves_threat, fully_safe = [], []
        for move in engine.legal_moves():
            after = engine.copy()
            after.play(move)
            if after.outcome() is not None or can_win(after, following):
                continue
            (leaves_threat if can_win(after, after_next) else fully_safe).append(move)
        if len(leaves_threat) + len(fully_safe) < len(engine.legal_moves()):
            continue  # a move ends the game or hands the next seat a line: not this test's
        if not leaves_threat or not fully_safe:
            continue
        later = (3, can_win)
        assert all(is_safe(engine, m, None) for m in leaves_threat)
        assert not any(is_safe(engine, m, None, later) for m in leaves_threat)
        choice = robot.choose(engine, 3, Budget(playouts=30), random.Random(tried))
        assert choice.move in fully_safe
        tried += 1
        if tried == 8:
            break
    assert tried == 8
