"""What the Uknight robot knows (games/uknight/robot.py, docs/spec/server.md §11.7): its
distance to unification (docs/spec/games/uknight.md §6), the evaluation built on it, the
moves its search tries, and that with them it unites where random playouts never did."""

import random

import pytest

from games.uknight import Uknight
from games.uknight.engine import PASS, UknightEngine
from games.uknight.robot import HOPELESS, KNOWLEDGE, candidates, distance, evaluate
from pbm.robots import get_robots
from pbm.robots.mcts import Budget, Knowledge, search
from tests.test_robots import engine_of
from tests.test_uknight import setup

WHITE, BLACK = 0, 1
# phase 2, White to move: a line of three, and B2 and I9 a knight's move or more away;
# Black's four stones lie apart
TWO_STRAYS = dict(phase=2, w="E4 E5 E6 B2 I9", b="A5 C7 H4 G9")


def engine(**position) -> UknightEngine:
    return UknightEngine.from_state(setup(**position))


def name(engine, index) -> str:
    return engine.tables.names[index]


@pytest.mark.parametrize("size", [5, 6, 7])
def test_the_start_is_even_but_for_the_tempo_of_the_player_on_move(size):
    start = engine_of(Uknight(), size=size)
    assert distance(start, WHITE) == distance(start, BLACK) > 0
    white, black = evaluate(start)
    assert white > 0.5 > black
    start.seat = BLACK
    assert evaluate(start) == pytest.approx([black, white])


def test_a_united_player_is_at_distance_zero_and_one_without_stones_hopeless():
    assert distance(engine(phase=2, w="E4 E5 E6", b="A5 C7"), WHITE) == 0
    assert distance(engine(phase=2, w="E4 E5 E6", b="A5 C7"), BLACK) > 0
    assert distance(engine(phase=2, w="E4 E5 E6", b=""), BLACK) == HOPELESS


def test_phase_two_counts_a_knight_move_per_stray_stone():
    assert distance(engine(phase=2, w="E4 E5 E6 B2", b="A5 C7 H4 G9"), WHITE) == 1
    assert distance(engine(**TWO_STRAYS), WHITE) == 2
    # Black's three stones outside its largest group (of one) need a hop or more each
    assert distance(engine(**TWO_STRAYS), BLACK) >= 3


def test_phase_one_bridges_cost_their_cells_and_more_round_a_stone():
    # E3 and E4 lie between the white pairs, each a knight's move from one of them
    assert distance(engine(w="E2 F2 E5 D5", b="A5 I9"), WHITE) == 3
    assert distance(engine(w="E2 F2 E5 D5", b="A5 I9 E4"), WHITE) > 3


def test_the_evaluation_favours_the_player_nearer_to_unification():
    position = engine(**TWO_STRAYS)
    white, black = evaluate(position)
    assert white > 0.5 > black
    assert white + black == pytest.approx(1)
    one_stray = evaluate(engine(phase=2, w="E4 E5 E6 B2", b="A5 C7 H4 G9"))
    assert one_stray[WHITE] > white
    # the colours swapped, the rewards swap
    swapped = {**TWO_STRAYS, "w": TWO_STRAYS["b"], "b": TWO_STRAYS["w"], "to_move": BLACK}
    swapped = evaluate(engine(**swapped))
    assert swapped == pytest.approx([black, white])


def test_the_search_tries_no_pass_and_no_move_that_strands_a_stone():
    position = engine(**TWO_STRAYS)
    moves = position.legal_moves()
    assert PASS in moves
    tried = candidates(position, list(moves), random.Random(1))
    assert PASS not in tried
    assert tried and set(tried) <= set(moves)
    own = position.stones[WHITE]
    neighbours = position.tables.neighbours
    line = [m for m in moves if m != PASS and name(position, m[1]) in ("E4", "E5", "E6")]
    joining = [m for m in line if any(own >> n & 1 for n in neighbours[m[2]] if n != m[1])]
    # a stone of the line goes only where it touches another white stone
    assert 0 < len(joining) < len(line)
    assert [m for m in tried if m in line] == [m for m in tried if m in joining]
    assert set(joining) <= set(tried)
    # the strays hop anywhere: one may need two hops to come home
    strays = [m for m in moves if m != PASS and name(position, m[1]) in ("B2", "I9")]
    assert set(strays) <= set(tried)


def test_a_pass_is_tried_when_it_is_the_only_move_and_nothing_when_the_game_is_over():
    assert candidates(engine(), [PASS], random.Random(1)) == [PASS]
    assert candidates(engine(), [], random.Random(1)) == []


def test_the_robot_brings_a_stray_stone_home():
    position = engine(**TWO_STRAYS)
    choice = search(position, 2, Budget(playouts=100), random.Random(3), KNOWLEDGE)
    assert choice.reason == "search"
    after = position.copy()
    after.play(choice.move)
    assert distance(after, WHITE) < distance(position, WHITE)


def test_the_mcts_robot_of_uknight_carries_the_knowledge():
    robot = get_robots()[("uknight", "mcts")]
    assert robot.knowledge is KNOWLEDGE


@pytest.mark.parametrize("robot_seat", [WHITE, BLACK])
def test_the_robot_unites_against_a_random_player(robot_seat):
    """The point of the knowledge: the blind search's random playouts seldom united
    anyone; with the distance the robot unites, in either seat."""
    position = engine_of(Uknight(), size=5, seed=robot_seat)
    rng = random.Random(robot_seat)
    for _ in range(200):
        if position.outcome() is not None:
            break
        moves = position.legal_moves()
        if position.to_move() == robot_seat:
            move = search(position, 2, Budget(playouts=100), rng, KNOWLEDGE).move
        else:
            move = moves[rng.randrange(len(moves))]
        position.play(move)
    assert position.outcome().winners == (robot_seat,)


def test_a_candidates_hook_decides_what_the_tree_tries():
    """pbm/robots/mcts.py: the moves a node tries are the hook's, first first."""
    position = engine_of(Uknight(), size=5)
    moves = position.legal_moves()
    wanted = moves[-1]
    only_one = Knowledge(evaluate=evaluate, playout_plies=0, candidates=lambda e, m, r: [wanted])
    choice = search(position, 2, Budget(playouts=30), random.Random(1), only_one)
    assert choice.move == wanted
    seen = []

    def first_of_all(e, m, r):
        seen.append(list(m))
        return list(m)

    first = Knowledge(evaluate=evaluate, playout_plies=0, candidates=first_of_all)
    choice = search(position, 2, Budget(playouts=1), random.Random(1), first)
    assert seen[0] == moves
    assert choice.move == moves[0]
