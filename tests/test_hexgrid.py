"""The shared hex geometry against docs/spec/games/hexgrid.md (and the hex games' pictures)."""

import itertools
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from games.hexgrid import (
    DIRECTIONS,
    KNIGHT_OFFSETS,
    HexBoard,
    HexHexBoard,
    RhombusBoard,
    cells_between,
    cube,
    distance,
    is_knight_move,
    line_direction,
    opposite,
    step,
)
from tests.spec_pictures import (
    EMPTY_9X9,
    EMPTY_BASE5,
    KNIGHT_PICTURE_9X9,
    KNIGHT_PICTURE_BASE5,
    KV1,
    KV2,
    KV5,
    LX1,
    LX2,
    LX3,
    NAMED_BASE5,
    UK2,
    UK5,
    UK_START_BASE5,
    UK_START_BASE6,
)

# Pictures copied verbatim from the specs (docs/spec/games/hexgrid.md,
# docs/spec/games/knightvision.md, docs/spec/games/lox.md, docs/spec/games/uknight.md).

RHOMBUS_SIZES = (2, 3, 9, 11, 14, 19)
HEXHEX_BASES = (2, 3, 5, 6, 7)
SOME_BOARDS = [RhombusBoard(n) for n in RHOMBUS_SIZES] + [HexHexBoard(b) for b in HEXHEX_BASES]
FAST = settings(max_examples=60, deadline=None)

boards = st.one_of(
    st.integers(RhombusBoard.min_size, RhombusBoard.max_size).map(RhombusBoard),
    st.integers(HexHexBoard.min_size, HexHexBoard.max_size).map(HexHexBoard),
)


def picture(text: str) -> str:
    return text.removesuffix("\n")


def cells_of(board: HexBoard, names: str) -> set:
    return {board.parse(name) for name in names.split()}


def names_of(board: HexBoard, cells) -> set:
    return {board.name(cell) for cell in cells}


def on_board(board: HexBoard, cell) -> bool:
    """Membership straight from the spec's coordinate rules (docs/spec/games/hexgrid.md §6.1 and
    §7.1)."""
    q, r = cell
    if isinstance(board, RhombusBoard):
        return 0 <= q < board.size and 0 <= r < board.size
    letter, number, span = q, -r, 2 * board.size - 1
    return 0 <= letter < span and 0 <= number < span and abs(letter - number) <= board.size - 1


def walk(board: HexBoard, cell, direction) -> list:
    ray, current = [], step(cell, direction)
    while on_board(board, current):
        ray.append(current)
        current = step(current, direction)
    return ray


def first_stone(board: HexBoard, cell, direction, occupied):
    return next((other for other in walk(board, cell, direction) if other in occupied), None)


# -- coordinates and directions (docs/spec/games/hexgrid.md §1) ----------------------


def test_directions_are_the_spec_table_and_opposites_are_three_apart():
    assert DIRECTIONS == ((1, 0), (1, -1), (0, -1), (-1, 0), (-1, 1), (0, 1))
    cube_table = [(1, -1, 0), (1, 0, -1), (0, 1, -1), (-1, 1, 0), (-1, 0, 1), (0, -1, 1)]
    assert [cube(d) for d in DIRECTIONS] == cube_table
    for d in range(6):
        assert step(step((0, 0), d), opposite(d)) == (0, 0)
        assert opposite(opposite(d)) == d


@given(st.tuples(st.integers(-30, 30), st.integers(-30, 30)))
def test_cube_coordinates_sum_to_zero(cell):
    assert sum(cube(cell)) == 0


@given(*[st.tuples(st.integers(-20, 20), st.integers(-20, 20))] * 3)
def test_distance_is_a_metric_with_neighbours_at_one(a, b, c):
    assert distance(a, b) == distance(b, a)
    assert (distance(a, b) == 0) == (a == b)
    assert distance(a, c) <= distance(a, b) + distance(b, c)
    assert all(distance(a, step(a, d)) == 1 for d in range(6))
    dx, dy, dz = (v - w for v, w in zip(cube(b), cube(a)))
    assert distance(a, b) == max(abs(dx), abs(dy), abs(dz))


def test_direction_names_follow_the_spec_pictures():
    assert RhombusBoard.direction_names == (
        "right",
        "up-right",
        "up-left",
        "left",
        "down-left",
        "down-right",
    )
    assert HexHexBoard.direction_names == (
        "up-right",
        "up",
        "up-left",
        "down-left",
        "down",
        "down-right",
    )


# -- lines (docs/spec/games/hexgrid.md §2) ---------------------------------------------


@given(st.tuples(st.integers(-9, 9), st.integers(-9, 9)), st.integers(0, 5), st.integers(1, 9))
def test_line_direction_finds_every_ray_step(start, direction, length):
    end = step(start, direction, length)
    assert line_direction(start, end) == direction
    assert cells_between(start, end) == tuple(step(start, direction, i) for i in range(1, length))


def test_line_direction_rejects_everything_off_the_six_lines():
    for dq, dr in itertools.product(range(-6, 7), repeat=2):
        on_a_line = (dq, dr) != (0, 0) and (dq == 0 or dr == 0 or dq == -dr)
        assert (line_direction((1, 2), (1 + dq, 2 + dr)) is not None) == on_a_line
    corner_diagonal = (2, -1)  # cube (+2, -1, -1): through a corner, never a line
    assert line_direction((0, 0), corner_diagonal) is None
    with pytest.raises(ValueError, match="not on one line"):
        cells_between((0, 0), corner_diagonal)


@pytest.mark.parametrize("board", SOME_BOARDS, ids=repr)
def test_rays_walk_to_the_edge_and_never_include_the_start(board):
    for cell in board.cells:
        rays = board.rays[cell]
        assert len(rays) == 6
        for direction, ray in enumerate(rays):
            assert list(ray) == walk(board, cell, direction)
            assert cell not in ray
            if ray:
                assert ray[-1] in board.border
                assert step(ray[-1], direction) not in board


@pytest.mark.parametrize("board", SOME_BOARDS, ids=repr)
def test_three_line_families_cover_every_cell_once_each(board):
    per_family = Counter()
    for line in board.lines:
        direction = line_direction(line[0], line[1]) if len(line) > 1 else None
        assert direction in (0, 1, 2, None)
        assert all(line_direction(a, b) == direction for a, b in zip(line, line[1:]))
        for cell in line:
            per_family[cell] += 1
    assert per_family == Counter({cell: 3 for cell in board.cells})


# -- the knight's move (docs/spec/games/hexgrid.md §3) ---------------------------------


def test_knight_offsets_are_two_steps_then_a_turn_in_spec_order():
    expected = []
    for d in range(6):
        two = step((0, 0), d, 2)
        expected += [step(two, (d - 1) % 6), step(two, (d + 1) % 6)]
    assert list(KNIGHT_OFFSETS) == expected


def test_knight_offset_table_in_every_system():
    axial = "(2,1) (3,-1) (3,-2) (2,-3) (1,-3) (-1,-2) (-2,-1) (-3,1) (-3,2) (-2,3) (-1,3) (1,2)"
    cubes = (
        "(2,-3,1) (3,-2,-1) (3,-1,-2) (2,1,-3) (1,2,-3) (-1,3,-2) (-2,3,-1) (-3,2,1) (-3,1,2) "
        "(-2,-1,3) (-1,-2,3) (1,-3,2)"
    )
    mindsports = (
        "(2,-1) (3,1) (3,2) (2,3) (1,3) (-1,2) (-2,1) (-3,-1) (-3,-2) (-2,-3) (-1,-3) (1,-2)"
    )

    def tuples(text):
        return [tuple(int(v) for v in item.strip("()").split(",")) for item in text.split()]

    assert list(KNIGHT_OFFSETS) == tuples(axial)
    assert [cube(offset) for offset in KNIGHT_OFFSETS] == tuples(cubes)
    assert [(dq, -dr) for dq, dr in KNIGHT_OFFSETS] == tuples(mindsports)
    for dx, dy, dz in tuples(cubes):
        assert dx + dy + dz == 0 and sorted(map(abs, (dx, dy, dz))) == [1, 2, 3]


def knight_cells_three_ways(board, cell):
    two_steps_then_turn = {
        step(step(cell, d, 2), turn) for d in range(6) for turn in ((d - 1) % 6, (d + 1) % 6)
    }
    far_off_the_lines = {
        other
        for other in board.cells
        if distance(cell, other) == 3 and line_direction(cell, other) is None
    }
    cube_rule = set()
    for dx, dy in itertools.product(range(-3, 4), repeat=2):
        dz = -dx - dy
        if sorted(map(abs, (dx, dy, dz))) == [1, 2, 3]:
            cube_rule.add((cell[0] + dx, cell[1] + dz))
    on_board_only = {other for other in two_steps_then_turn if on_board(board, other)}
    return on_board_only, far_off_the_lines, {c for c in cube_rule if on_board(board, c)}


@pytest.mark.parametrize("board", SOME_BOARDS, ids=repr)
def test_knight_cells_agree_with_all_three_definitions(board):
    for cell in board.cells:
        targets = board.knights[cell]
        assert len(set(targets)) == len(targets)
        for definition in knight_cells_three_ways(board, cell):
            assert set(targets) == definition
        assert list(targets) == [
            (cell[0] + dq, cell[1] + dr)
            for dq, dr in KNIGHT_OFFSETS
            if on_board(board, (cell[0] + dq, cell[1] + dr))
        ]


@pytest.mark.parametrize("board", SOME_BOARDS, ids=repr)
def test_knight_move_is_symmetric_never_adjacent_never_on_a_line(board):
    for cell in board.cells:
        for target in board.knights[cell]:
            assert cell in board.knights[target]
            assert is_knight_move(cell, target) and is_knight_move(target, cell)
            assert target not in board.neighbours[cell]
            assert line_direction(cell, target) is None
            assert all(target not in ray for ray in board.rays[cell])


def test_worked_derivation_from_e5_on_9x9():
    board = RhombusBoard(9)
    e5 = board.parse("e5")
    by_name = dict(zip(board.direction_names, range(6)))
    derivation = [
        ("right", "g5", "down-right", "g6"),
        ("right", "g5", "up-right", "h4"),
        ("up-right", "g3", "right", "h3"),
        ("up-right", "g3", "up-left", "g2"),
        ("up-left", "e3", "up-right", "f2"),
        ("up-left", "e3", "left", "d3"),
        ("left", "c5", "up-left", "c4"),
        ("left", "c5", "down-left", "b6"),
        ("down-left", "c7", "left", "b7"),
        ("down-left", "c7", "down-right", "c8"),
        ("down-right", "e7", "down-left", "d8"),
        ("down-right", "e7", "right", "f7"),
    ]
    for two_steps, middle, turn, target in derivation:
        reached = step(e5, by_name[two_steps], 2)
        assert board.name(reached) == middle
        assert board.name(step(reached, by_name[turn])) == target
    assert [board.name(cell) for cell in board.knights[e5]] == [row[3] for row in derivation]


@pytest.mark.parametrize(
    "size,start,expected",
    [
        (9, "a1", "b3 c2"),
        (9, "i1", "f2 f3 g4 h4"),
        (9, "a9", "b6 c6 d7 d8"),
        (9, "i9", "g8 h7"),
        (9, "e5", "b6 b7 c4 c8 d3 d8 f2 f7 g2 g6 h3 h4"),
        (11, "f6", "c7 c8 d5 d9 e4 e9 g3 g8 h3 h7 i4 i5"),
    ],
)
def test_rhombus_knight_examples(size, start, expected):
    board = RhombusBoard(size)
    assert names_of(board, board.knights[board.parse(start)]) == set(expected.split())


def test_rhombus_9x9_knight_cell_counts():
    board = RhombusBoard(9)
    counts = Counter(len(board.knights[cell]) for cell in board.cells)
    assert counts == {2: 2, 3: 4, 4: 8, 5: 4, 6: 22, 7: 4, 8: 16, 10: 12, 12: 9}


@pytest.mark.parametrize(
    "base,start,expected",
    [
        (5, "A1", "B4 C4 D2 D3"),
        (5, "B1", "A3 C4 D4 E2 E3"),
        (6, "B1", "A3 C4 D4 E2 E3"),
        (7, "B1", "A3 C4 D4 E2 E3"),
        (5, "E5", "B3 B4 C2 C6 D2 D7 F3 F8 G4 G8 H6 H7"),
        (5, "I5", "F3 F4 G6 H7"),
        (5, "I9", "F7 F8 G6 H6"),
        (6, "F6", "C4 C5 D3 D7 E3 E8 G4 G9 H5 H9 I7 I8"),
        (7, "G7", "D5 D6 E4 E8 F4 F9 H5 H10 I6 I10 J8 J9"),
    ],
)
def test_hexhex_knight_examples(base, start, expected):
    board = HexHexBoard(base)
    assert names_of(board, board.knights[board.parse(start)]) == set(expected.split())


def test_hexhex_base5_corners_have_four_knight_cells_and_seven_cells_have_twelve():
    board = HexHexBoard(5)
    assert {len(board.knights[corner]) for corner in board.corners} == {4}
    assert sum(len(board.knights[cell]) == 12 for cell in board.cells) == 7


def test_knight_picture_on_9x9_matches_the_spec():
    board = RhombusBoard(9)
    e5 = board.parse("e5")
    on_lines = {cell for ray in board.rays[e5] for cell in ray}
    symbols = {e5: "*"} | {cell: "-" for cell in on_lines}
    symbols |= {cell: "N" for cell in board.knights[e5]}
    assert not on_lines & set(board.knights[e5])
    assert board.draw(symbols) == picture(KNIGHT_PICTURE_9X9)


def test_knight_picture_on_base5_matches_the_spec():
    board = HexHexBoard(5)
    e5 = board.parse("E5")
    symbols = {e5: "*"} | {cell: "N" for cell in board.knights[e5]}
    assert board.draw(symbols) == picture(KNIGHT_PICTURE_BASE5)


# -- line of sight (docs/spec/games/hexgrid.md §4) -------------------------------------


def test_sight_example_on_11x11():
    board = RhombusBoard(11)
    red = cells_of(board, "f2 f9 b6 j6")
    f6 = board.parse("f6")
    names = [[board.name(cell) for cell in ray] for ray in board.rays[f6]]
    assert names[2][:4] == ["f5", "f4", "f3", "f2"]
    assert names[5][:3] == ["f7", "f8", "f9"]
    assert names[1] == ["g5", "h4", "i3", "j2", "k1"]
    assert names[4] == ["e7", "d8", "c9", "b10", "a11"]
    sight = board.sight(f6, red)
    assert [board.name(cell) if cell else None for cell in sight] == [
        "j6",
        None,
        "f2",
        "b6",
        None,
        "f9",
    ]
    assert set(board.seen(f6, red)) == red


def test_sight_blocked_by_the_nearer_stone_and_blind_to_its_own_cell():
    board = RhombusBoard(11)
    red = cells_of(board, "f2 f9 b6 j6")
    f6, f7 = board.parse("f6"), board.parse("f7")
    assert names_of(board, board.seen(f7, red)) == {"f2", "f9"}  # LX-2 before Blue plays
    with_blue = red | {f7}
    assert names_of(board, board.seen(f6, with_blue)) == {"f2", "b6", "j6", "f7"}
    assert names_of(board, board.seen(f6, red | {f6})) == {"f2", "f9", "b6", "j6"}  # LX-3


@FAST
@given(boards, st.data())
def test_line_of_sight_agrees_with_a_brute_force_walk(board, data):
    occupied = data.draw(st.sets(st.sampled_from(board.cells), max_size=len(board.cells)))
    seen_everywhere = board.seen_map(occupied)
    assert set(seen_everywhere) == set(board.cells)
    for cell in board.cells:
        expected = tuple(first_stone(board, cell, d, occupied) for d in range(6))
        assert board.sight(cell, occupied) == expected
        assert board.seen(cell, occupied) == [other for other in expected if other is not None]
        assert seen_everywhere[cell] == board.seen(cell, occupied)
        assert len(seen_everywhere[cell]) <= board.neighbour_count[cell]


def test_sight_accepts_a_dict_of_stones():
    board = RhombusBoard(9)
    stones = {board.parse("e1"): "red", board.parse("a5"): "blue"}
    e5 = board.parse("e5")
    assert names_of(board, board.seen(e5, stones)) == {"e1", "a5"}
    assert names_of(board, board.seen_map(stones)[e5]) == {"e1", "a5"}


# -- neighbour counts (docs/spec/games/hexgrid.md §5) and the two shapes ---------------


@pytest.mark.parametrize("board", SOME_BOARDS, ids=repr)
def test_neighbours_are_the_adjacent_cells_in_direction_order(board):
    for cell in board.cells:
        expected = [step(cell, d) for d in range(6) if on_board(board, step(cell, d))]
        assert list(board.neighbours[cell]) == expected
        assert board.neighbour_count[cell] == len(expected)
        assert (cell in board.border) == (len(expected) < 6)
        for direction, ray in enumerate(board.rays[cell]):
            assert bool(ray) == on_board(board, step(cell, direction))


@pytest.mark.parametrize("size", [9, 11, 14, 19])
def test_rhombus_neighbour_counts(size):
    board = RhombusBoard(size)
    counts = Counter(board.neighbour_count.values())
    assert counts == {6: (size - 2) ** 2, 4: 4 * (size - 2), 3: 2, 2: 2}
    acute = cells_of(board, f"a1 {chr(ord('a') + size - 1)}{size}")
    obtuse = cells_of(board, f"{chr(ord('a') + size - 1)}1 a{size}")
    assert {cell for cell in board.cells if board.neighbour_count[cell] == 2} == acute
    assert {cell for cell in board.cells if board.neighbour_count[cell] == 3} == obtuse


def test_rhombus_9x9_neighbour_examples_corners_and_edges():
    board = RhombusBoard(9)
    for cell, expected in [("a1", "b1 a2"), ("i1", "h1 h2 i2"), ("e5", "f5 f4 e4 d5 d6 e6")]:
        assert [board.name(c) for c in board.neighbours[board.parse(cell)]] == expected.split()
    assert [board.name(corner) for corner in board.corners] == ["a1", "i1", "i9", "a9"]
    assert board.edges == (board.top, board.right, board.bottom, board.left)
    assert board.top == {(q, 0) for q in range(9)}
    assert board.bottom == {(q, 8) for q in range(9)}
    assert board.left == {(0, r) for r in range(9)}
    assert board.right == {(8, r) for r in range(9)}
    for corner in board.corners:
        assert sum(corner in edge for edge in board.edges) == 2
    assert board.border == board.top | board.bottom | board.left | board.right


@pytest.mark.parametrize("base", [5, 6, 7])
def test_hexhex_neighbour_counts_corners_and_edges(base):
    board = HexHexBoard(base)
    counts = Counter(board.neighbour_count.values())
    assert counts == {3: 6, 4: 6 * (base - 2), 6: len(board) - 6 * (base - 1)}
    assert {cell for cell in board.cells if board.neighbour_count[cell] == 3} == set(board.corners)
    assert len(board.edges) == 6
    assert all(len(edge) == base for edge in board.edges)
    assert frozenset().union(*board.edges) == board.border


def test_hexhex_corners_go_round_in_spec_order():
    expected = {
        5: "A1 E1 I5 I9 E9 A5",
        6: "A1 F1 K6 K11 F11 A6",
        7: "A1 G1 M7 M13 G13 A7",
    }
    for base, names in expected.items():
        board = HexHexBoard(base)
        assert [board.name(corner) for corner in board.corners] == names.split()


def test_hexhex_base5_neighbours_rays_and_centre_line():
    board = HexHexBoard(5)
    for cell, expected in [("A1", "B1 B2 A2"), ("E5", "F5 F6 E6 D5 D4 E4")]:
        assert names_of(board, board.neighbours[board.parse(cell)]) == set(expected.split())
    e5 = board.parse("E5")
    assert [board.name(c) for c in board.neighbours[e5]] == "F5 F6 E6 D5 D4 E4".split()
    rays = [
        "F5 G5 H5 I5",
        "F6 G7 H8 I9",
        "E6 E7 E8 E9",
        "D5 C5 B5 A5",
        "D4 C3 B2 A1",
        "E4 E3 E2 E1",
    ]
    assert [" ".join(board.name(c) for c in ray) for ray in board.rays[e5]] == rays
    a1 = board.parse("A1")
    assert " ".join(board.name(c) for c in (a1,) + board.rays[a1][1]) == (
        "A1 B2 C3 D4 E5 F6 G7 H8 I9"
    )
    for not_neighbour in ("C2", "A4"):  # (L+1, N-1) and (L-1, N+1) of B3
        assert board.parse(not_neighbour) not in board.neighbours[board.parse("B3")]


# -- notation (docs/spec/games/hexgrid.md §6 and §7) -----------------------------------


@pytest.mark.parametrize("size", range(RhombusBoard.min_size, RhombusBoard.max_size + 1))
def test_rhombus_cells_and_every_name_round_trip(size):
    board = RhombusBoard(size)
    assert len(board) == size * size
    assert set(board.cells) == {(q, r) for q in range(size) for r in range(size)}
    for cell in board.cells:
        name = board.name(cell)
        assert name == f"{'abcdefghijklmnopqrstuvwxyz'[cell[0]]}{cell[1] + 1}"
        assert board.parse(name) == cell
        assert board.parse(name.upper()) == cell


@pytest.mark.parametrize("base", range(HexHexBoard.min_size, HexHexBoard.max_size + 1))
def test_hexhex_cells_and_every_name_round_trip(base):
    board = HexHexBoard(base)
    assert len(board) == 3 * base * (base - 1) + 1
    assert all(on_board(board, cell) for cell in board.cells)
    for cell in board.cells:
        name = board.name(cell)
        assert name == f"{'ABCDEFGHIJKLMNOPQRSTUVWXYZ'[cell[0]]}{1 - cell[1]}"
        assert board.parse(name) == cell
        assert board.parse(name.lower()) == cell


def test_cell_counts_of_the_game_boards():
    assert [len(HexHexBoard(base)) for base in (5, 6, 7)] == [61, 91, 127]
    assert [len(RhombusBoard(n)) for n in (9, 14, 19)] == [81, 196, 361]


def test_base5_lines_hold_the_spec_cells():
    board = HexHexBoard(5)
    by_letter = {}
    for name in board.names(board.cells):
        by_letter.setdefault(name[0], []).append(name)
    spans = {letter: f"{names[0]}-{names[-1]}" for letter, names in by_letter.items()}
    assert spans == {
        "A": "A1-A5", "B": "B1-B6", "C": "C1-C7", "D": "D1-D8", "E": "E1-E9",
        "F": "F2-F9", "G": "G3-G9", "H": "H4-H9", "I": "I5-I9",
    }  # fmt: skip


def test_named_base5_picture_places_every_cell_by_its_coordinates():
    board = HexHexBoard(5)
    found = set()
    for row, line in enumerate(picture(NAMED_BASE5).splitlines()):
        for column, character in enumerate(line):
            if character.isalpha():
                name = line[column:].split()[0]
                cell = board.parse(name)
                letter, number = cell[0], -cell[1]
                assert row == 16 - (letter + number)
                assert column == 12 + 3 * (letter - number)
                found.add(name)
    assert found == set(board.names(board.cells))


def test_names_sort_by_letter_then_number():
    board = HexHexBoard(7)
    cells = cells_of(board, "H10 D5 H5 E4 D6")
    assert board.names(cells) == ["D5", "D6", "E4", "H5", "H10"]
    rhombus = RhombusBoard(11)
    assert rhombus.names(cells_of(rhombus, "e9 c8 e4 c7")) == ["c7", "c8", "e4", "e9"]


@pytest.mark.parametrize(
    "board,text,message",
    [
        (RhombusBoard(9), "j1", "not a cell of this 9x9 board: the columns are a to i"),
        (RhombusBoard(9), "a10", "the rows 1 to 9"),
        (RhombusBoard(9), "a0", "not a cell of this 9x9 board"),
        (RhombusBoard(9), "e05", "not a cell of this 9x9 board"),
        (RhombusBoard(9), "5e", "not a cell name: write a column letter and a row number"),
        (RhombusBoard(9), "", "not a cell name"),
        (RhombusBoard(9), "e5-e6", "not a cell name"),
        (HexHexBoard(5), "F1", "not a cell of this base-5 board: line F holds F2 to F9"),
        (HexHexBoard(5), "I4", "line I holds I5 to I9"),
        (HexHexBoard(5), "E10", "line E holds E1 to E9"),
        (HexHexBoard(5), "J1", "the letters are A to I"),
        (HexHexBoard(6), "ä1", "not a cell name: write a letter and a number, e.g. E5"),
    ],
)
def test_bad_names_raise_a_helpful_value_error(board, text, message):
    with pytest.raises(ValueError, match=message):
        board.parse(text)


@FAST
@given(boards, st.data())
def test_name_round_trip_ignores_case_and_surrounding_blanks(board, data):
    cell = data.draw(st.sampled_from(board.cells))
    name = board.name(cell)
    assert name == (name.lower() if isinstance(board, RhombusBoard) else name.upper())
    mixed = "".join(
        c.upper() if flip else c.lower()
        for c, flip in zip(name, data.draw(st.lists(st.booleans(), min_size=len(name))))
    )
    padding = data.draw(st.sampled_from(["", " ", "  ", "\t"]))
    assert board.parse(padding + mixed + padding) == cell


@FAST
@given(boards, st.text(alphabet="aAeEjJmMsSzZ0123456789 x-", max_size=5))
def test_parse_accepts_exactly_the_names_of_cells(board, text):
    try:
        cell = board.parse(text)
    except ValueError as error:
        assert f'"{text.strip()}"' in str(error)
        assert text.strip().lower() not in {name.lower() for name in board.names(board.cells)}
    else:
        assert board.name(cell).lower() == text.strip().lower()


# -- boards ----------------------------------------------------------------------------


def test_boards_are_built_once_per_size():
    assert RhombusBoard(11) is RhombusBoard(11)
    assert HexHexBoard(6) is HexHexBoard(6)
    assert RhombusBoard(6) is not HexHexBoard(6)
    assert repr(RhombusBoard(11)) == "RhombusBoard(11)"
    assert (3, 4) in RhombusBoard(9) and (9, 0) not in RhombusBoard(9)


@pytest.mark.parametrize(
    "cls,size", [(RhombusBoard, 1), (RhombusBoard, 27), (RhombusBoard, 9.0), (HexHexBoard, 14),
                 (HexHexBoard, 1), (HexHexBoard, "5")]
)  # fmt: skip
def test_bad_sizes_are_refused(cls, size):
    with pytest.raises(ValueError, match="size must be an integer from"):
        cls(size)


def test_groups_split_cells_by_shared_edges():
    board = HexHexBoard(5)
    stones = cells_of(board, "A1 B2 A2 E5 E6 I9")
    groups = {frozenset(names_of(board, group)) for group in board.groups(stones)}
    assert groups == {frozenset({"A1", "A2", "B2"}), frozenset({"E5", "E6"}), frozenset({"I9"})}
    knights_apart = cells_of(board, "A1 B4")  # a knight's move does not connect
    assert len(board.groups(knights_apart)) == 2
    assert board.groups([]) == []


def test_joins_needs_one_group_touching_both_edges():
    board = RhombusBoard(9)
    column = cells_of(board, " ".join(f"e{row}" for row in range(1, 10)))
    assert board.joins(column, board.top, board.bottom)
    assert not board.joins(column, board.left, board.right)
    broken = column - cells_of(board, "e5")
    assert not board.joins(broken, board.top, board.bottom)
    assert not board.joins(broken | cells_of(board, "d5"), board.top, board.bottom)
    detour = broken | cells_of(board, "d5 d6")  # e4-d5-d6-e6 round the gap
    assert board.joins(detour, board.top, board.bottom)


# -- drawing ---------------------------------------------------------------------------


def symbols_for(board, **pieces):
    return {cell: symbol for symbol, names in pieces.items() for cell in cells_of(board, names)}


def test_empty_pictures_match_the_spec():
    assert RhombusBoard(9).draw({}) == picture(EMPTY_9X9)
    assert HexHexBoard(5).draw({}) == picture(EMPTY_BASE5)


def test_two_digit_rows_are_right_aligned_in_four_characters():
    lines = RhombusBoard(11).draw({}).splitlines()
    assert lines[9:] == [
        "           9   . . . . . . . . . . .   9",
        "           10   . . . . . . . . . . .   10",
        "            11   . . . . . . . . . . .   11",
        "                  a b c d e f g h i j k",
    ]


@pytest.mark.parametrize(
    "text,size,pieces",
    [
        (KV1, 9, {"w": "e5", "b": "c3", "o": "b6 b7 c4 c8 d3 d8 f2 f7 g2 g6 h3 h4"}),
        (KV2, 9, {"w": "c4 f2 g6", "b": "a9"}),
        (KV5, 9, {"w": "a1", "b": "b3 c2"}),
        (LX1, 11, {"R": "f2 f9 b6 j6"}),
        (LX2, 11, {"R": "f2 f9 b6 j6", "B": "f7"}),
        (LX3, 11, {"R": "f2 f9 b6 j6", "B": "f6"}),
    ],
)
def test_rhombus_game_pictures_match_the_specs(text, size, pieces):
    board = RhombusBoard(size)
    assert board.draw(symbols_for(board, **pieces)) == picture(text)


@pytest.mark.parametrize(
    "text,base,pieces",
    [
        (UK_START_BASE6, 6, {"w": "B1 G2 K7 J11 E10 A5", "b": "A2 E1 J5 K10 G11 B7"}),
        (UK_START_BASE5, 5, {"w": "B1 F2 I6 H9 D8 A4", "b": "A2 D1 H4 I8 F9 B6"}),
        (UK2, 5, {"w": "B3 C2 G4", "b": "I9"}),
        (UK5, 5, {"w": "A1 I9", "b": "D2 D3 C4 B4"}),
    ],
)
def test_hexhex_game_pictures_match_the_specs(text, base, pieces):
    board = HexHexBoard(base)
    assert board.draw(symbols_for(board, **pieces)) == picture(text)


def test_symbols_may_be_a_function_of_the_cell():
    board = RhombusBoard(9)
    drawn = board.draw(lambda cell: "x" if cell == (0, 0) else ".")
    assert drawn.splitlines()[1] == "   1   x . . . . . . . .   1"


def check_mail_safe(drawing: str, width: int = 76):
    lines = drawing.split("\n")
    assert lines[0].strip() and lines[-1].strip()
    for line in lines:
        assert len(line) <= width
        assert line.isascii() and "\t" not in line
        assert line == line.rstrip()


@pytest.mark.parametrize("board", [RhombusBoard(14), RhombusBoard(19), HexHexBoard(7)], ids=repr)
def test_largest_game_boards_fit_mail_lines(board):
    every_cell_marked = board.draw(lambda cell: "#", marks=board.cells)
    check_mail_safe(board.draw({}))
    check_mail_safe(every_cell_marked)
    assert every_cell_marked.count("#") == len(board)


def test_widths_of_the_largest_boards():
    assert max(map(len, RhombusBoard(14).draw({}).splitlines())) == 52
    assert max(map(len, RhombusBoard(19).draw({}).splitlines())) == 67
    assert max(map(len, HexHexBoard(7).draw({}).splitlines())) == 34


def test_marked_cells_are_bracketed_without_moving_anything():
    board = RhombusBoard(11)
    symbols = symbols_for(board, R="d4", B="e4")
    plain = board.draw(symbols).splitlines()
    marked = board.draw(symbols, marks=cells_of(board, "a1 d4 e4 k11")).splitlines()
    assert marked[1] == "   1  [.]. . . . . . . . . .   1"
    assert marked[4] == "      4   . . .[R|B]. . . . . .   4"
    assert marked[11] == "            11   . . . . . . . . . .[.]  11"
    unbracketed = [line.replace("[", " ").replace("]", " ").replace("|", " ") for line in marked]
    assert unbracketed == plain


def test_marked_hexhex_cell_is_bracketed():
    board = HexHexBoard(5)
    lines = board.draw(symbols_for(board, W="E5"), marks=cells_of(board, "E5 A1")).splitlines()
    # Each number line is a text row labelled on both ends: E5 on row 5, A1 on row 1.
    assert lines[5] == " 5   . . . .[W]. . . .   5"
    assert lines[9] == "     1  [.]. . . .   1"
    assert lines[0] == "         E F G H I"
    assert lines[10] == "          A B C D E"


@pytest.mark.parametrize("given_as", ["mapping", "function"])
@pytest.mark.parametrize("bad", ["", "ab", " ", "\t", "é", None])
def test_symbols_must_be_one_visible_ascii_character(bad, given_as):
    """A mapping's symbols are checked before the board is drawn, a function's as it gives
    them: either way the bad one is named by its cell."""
    board = RhombusBoard(9)
    e5 = board.parse("e5")
    symbols = {e5: bad} if given_as == "mapping" else (lambda cell: bad if cell == e5 else "x")
    with pytest.raises(ValueError, match="the symbol for e5 must be one printable ASCII"):
        board.draw(symbols)


def test_a_mapping_draws_its_cells_and_ignores_what_is_not_a_cell():
    board = RhombusBoard(3)
    drawn = board.draw({board.parse("b2"): "R", (7, 7): "no cell, never drawn"})
    assert drawn.splitlines()[2] == "    2   . R .   2"


def test_marks_must_be_cells_of_the_board():
    with pytest.raises(ValueError, match="cannot mark"):
        HexHexBoard(5).draw({}, marks=[(0, 1)])
