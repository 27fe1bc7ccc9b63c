"""What the KnightVision and Lox robots know of connection (games/connection.py): the
connection distance, the cells of the shortest joins, the evaluation's sign on clear
positions, the moves a search node expands, and the search finding the win or the block
they show."""

import random

import pytest

import games.knightvision
import games.lox
from games import connection
from games.knightvision import KnightVision
from games.knightvision.engine import KnightVisionEngine
from games.lox import Lox
from games.lox.engine import LoxEngine
from pbm.robots import Knowledge
from pbm.robots.mcts import Budget, search
from tests.test_robots import engine_of, random_positions

PLUGINS = {Lox: games.lox, KnightVision: games.knightvision}


def robot_of(game):
    """The robot the game's plugin module registers."""
    found = []
    PLUGINS[type(game)].register_robots(found.append)
    return found[0]


def lox(rows: list[str], to_move: int = 0) -> LoxEngine:
    """A Lox position from its picture: rows top to bottom, R, B or . by column."""
    tables = LoxEngine._empty({"size": len(rows)}).tables
    stones = {
        tables.index[(q, r)]: "RB".index(symbol)
        for r, row in enumerate(rows)
        for q, symbol in enumerate(row)
        if symbol != "."
    }
    return LoxEngine.from_stones({"size": len(rows)}, stones, to_move)


def knightvision(rows: list[str], to_move: int = 0) -> KnightVisionEngine:
    state = {"options": {"size": len(rows)}, "rows": rows, "to_move": to_move}
    state.update({"free": [], "last": None, "winner": None})
    return KnightVisionEngine.from_state(state)


LOX_GAME = robot_of(Lox()).knowledge.evaluate.args[0]
KNIGHTVISION_GAME = robot_of(KnightVision()).knowledge.evaluate.args[0]

# Red's column e, one cell short of joining rows 1 and 9 (e5 is empty)
RED_GAP = [
    "....R....",
    "....R....",
    "....R....",
    "....R....",
    ".........",
    "....R....",
    "....R....",
    "....R....",
    "....R....",
]


def test_flags_become_the_bits_of_their_indices():
    assert connection.flags_to_bits(bytearray([0, 1, 1, 0, 0, 1])) == 0b100110
    assert connection.flags_to_bits(bytearray(70)) == 0
    assert connection.flags_to_bits(bytearray([1] * 70)) == (1 << 70) - 1


@pytest.mark.parametrize("size", [9, 14, 19])
def test_on_an_empty_board_a_side_is_its_board_size_away_and_every_cell_is_on_a_join(size):
    engine = lox(["." * size] * size)
    tables = engine.tables
    for side in LOX_GAME.sides(engine):
        assert connection.distance(tables, side) == size
        join = connection.shortest_join(tables, side)
        assert join == (size, tables.mask)


def test_a_gap_is_one_move_and_the_only_cell_of_the_join():
    engine = lox(RED_GAP, to_move=1)
    tables = engine.tables
    red, blue = LOX_GAME.sides(engine)
    gap = tables.index[(4, 4)]
    assert connection.shortest_join(tables, red) == (1, 1 << gap)
    assert connection.distance(tables, blue) == 9  # blue may pass between red's stones
    assert connection.shortest_join(tables, blue).cells >> gap & 1


def test_a_chain_is_distance_zero_and_a_wall_makes_the_other_side_unable_to_join():
    rows = ["....R...."] * 9
    engine = lox(rows, to_move=1)  # Red's chain has not won yet: Blue moves
    assert engine.outcome() is None
    red, blue = LOX_GAME.sides(engine)
    assert connection.distance(engine.tables, red) == 0
    assert connection.shortest_join(engine.tables, blue) == (None, 0)


def test_lox_counts_a_stone_it_controls_as_one_move_and_a_controlled_cell_as_a_wall():
    # the empty e5 is surrounded by blue stones that control it: Red may not play there;
    # b5 is a red stone Blue's stones around it control: Blue may replace it
    rows = [
        ".........",
        ".........",
        ".........",
        "...B.B...",
        ".R.B.B...",
        "...B.B...",
        ".........",
        ".........",
        ".........",
    ]
    engine = lox(rows)
    tables = engine.tables
    red, blue = LOX_GAME.sides(engine)
    centre = tables.index[(4, 4)]
    assert engine.legal[0][centre] == 0
    assert not red.passable >> centre & 1
    assert blue.passable >> centre & 1
    assert red.own >> tables.index[(1, 4)] & 1


@pytest.mark.parametrize("to_move", [0, 1])
def test_the_evaluation_favours_the_side_nearer_its_join(to_move):
    engine = lox(RED_GAP, to_move=to_move)
    red, blue = connection.evaluate(LOX_GAME, engine)
    assert red + blue == pytest.approx(1)
    assert red > 0.9


def test_on_an_even_position_the_evaluation_favours_the_side_on_move():
    for to_move in (0, 1):
        values = connection.evaluate(LOX_GAME, lox(["." * 9] * 9, to_move))
        assert values[to_move] > 0.5 > values[1 - to_move]


def test_knightvision_sees_its_pieces_and_vacant_cells():
    rows = ["....w...."] * 4 + ["....W...."] + ["....w...."] * 4  # White's chain, e1 to e9
    rows[0] = "b...w...."
    engine = knightvision(rows, to_move=1)
    white, black = KNIGHTVISION_GAME.sides(engine)
    assert white.own >> engine.tables.index[(4, 4)] & 1  # the stack is one of White's pieces
    assert black.own == engine.tables.bits[engine.tables.index[(0, 0)]]
    assert connection.distance(engine.tables, white) == 0
    assert connection.distance(engine.tables, black) is None  # White's chain walls Black off
    white_value, black_value = connection.evaluate(KNIGHTVISION_GAME, engine)
    assert white_value > 0.99 and black_value < 0.01


def test_a_move_of_knightvision_is_played_on_its_placement_or_its_landing():
    cell_of = KNIGHTVISION_GAME.cell_of
    assert cell_of(2 * 17) == 17
    assert cell_of(2 * 17 + 1) == 17
    assert cell_of((17, 40)) == 40
    assert cell_of("pass") is None
    assert LOX_GAME.cell_of(17) == 17
    assert LOX_GAME.cell_of("pass") is None


def test_the_candidates_are_the_legal_moves_on_a_join_at_most_width_of_them():
    rng = random.Random(3)
    for engine in random_positions(Lox(), count=40, size=11):
        moves = engine.legal_moves()
        chosen = connection.candidates(LOX_GAME, engine, moves, rng)
        tables = engine.tables
        joins = [connection.shortest_join(tables, side).cells for side in LOX_GAME.sides(engine)]
        on_join = [m for m in moves if m != "pass" and (joins[0] | joins[1]) >> m & 1]
        assert len(set(chosen)) == len(chosen)
        assert set(chosen) <= set(moves)
        if on_join:
            assert set(chosen) <= set(on_join)
            assert len(chosen) == min(connection.WIDTH, len(on_join))
        else:
            assert sorted(chosen, key=str) == sorted(moves, key=str)


def test_the_cells_on_both_joins_come_first():
    engine = lox(RED_GAP, to_move=1)
    chosen = connection.candidates(LOX_GAME, engine, engine.legal_moves(), random.Random(1))
    assert chosen[0] == engine.tables.index[(4, 4)]  # the gap, on Red's and on Blue's join


@pytest.mark.parametrize("to_move", [0, 1])
def test_the_lox_robot_takes_or_blocks_the_gap(to_move):
    engine = lox(RED_GAP, to_move=to_move)
    robot = robot_of(Lox())
    for seed in range(3):
        choice = robot.choose(engine, 2, Budget(playouts=100), random.Random(seed))
        assert choice.move == engine.tables.index[(4, 4)]


def test_the_knightvision_robot_closes_its_own_gap_a_turn_ahead():
    # White's column e, one cell short
    rows = [row.replace("R", "w") for row in RED_GAP]
    rows[5] = "....w.w.."  # g6, a knight's move from e5, lets White place there
    engine = knightvision(rows, to_move=0)
    gap = engine.tables.index[(4, 4)]
    assert 2 * gap in engine.legal_moves()
    robot = robot_of(KnightVision())
    choice = robot.choose(engine, 2, Budget(playouts=100), random.Random(5))
    assert KNIGHTVISION_GAME.cell_of(choice.move) == gap


def test_a_search_expands_only_the_candidates_but_its_safety_check_sees_every_move():
    # Red's chain e1-e9 stands; Blue's four stones around e5 control it: Blue must replace
    # e5 at once, or Red wins as its turn begins
    rows = ["....R...."] * 9
    rows[3], rows[4], rows[5] = "....RB...", "...BRB...", "...BR...."
    engine = lox(rows, to_move=1)
    gap = engine.tables.index[(4, 4)]
    assert engine.outcome() is None and engine.legal[1][gap]
    corner = engine.tables.index[(0, 0)]
    only_the_corner = Knowledge(
        candidates=lambda position, moves, rng: [move for move in moves if move == corner]
    )
    choice = search(engine, 2, Budget(playouts=20), random.Random(2), only_the_corner)
    assert choice.move == gap  # the corner was searched, found to lose, and passed over
    anywhere = lox(["." * 9] * 9)
    choice = search(anywhere, 2, Budget(playouts=20), random.Random(2), only_the_corner)
    assert choice.move == corner and choice.playouts == 20


def test_robots_on_the_large_boards_beat_a_random_player_quickly():
    """A game on the largest boards ends in a few dozen plies: the random playouts that
    filled the board took some 250."""
    for game, size in ((Lox(), 19), (KnightVision(), 14)):
        robot = robot_of(game)
        engine = engine_of(game, size=size)
        rng = random.Random(size)
        plies = 0
        while engine.outcome() is None:
            if engine.to_move() == 0:
                move = robot.choose(engine, 2, Budget(playouts=20), rng).move
            else:
                moves = engine.legal_moves()
                move = moves[rng.randrange(len(moves))]
            engine.play(move)
            plies += 1
        assert engine.outcome().winners == (0,)
        assert plies < 120
