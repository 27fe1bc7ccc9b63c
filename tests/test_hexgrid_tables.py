"""games/hexgrid.py's flat cell tables, which the engines of KnightVision, Lox and Uknight
share, against the board's own geometry (docs/spec/games/hexgrid.md)."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from games.hexgrid import HexHexBoard, RhombusBoard, cell_tables

BOARDS = [RhombusBoard(n) for n in (2, 9, 11, 14, 19, 26)] + [
    HexHexBoard(b) for b in (2, 5, 6, 7, 13)
]
board_strategy = st.sampled_from(BOARDS)


def bit_set(tables, cells) -> int:
    return sum(tables.bits[tables.index[cell]] for cell in cells)


def cells_of(tables, bits: int) -> set:
    return {tables.cell_at[index] for index in tables.indices(bits)}


@pytest.mark.parametrize("board", BOARDS, ids=repr)
def test_tables_follow_the_board(board):
    tables = cell_tables(board)
    assert cell_tables(board) is tables, "built once per board"
    # indices ascend in notation order, so listings keep the order of the texts
    assert tables.cells == tuple(tables.index[cell] for cell in board.cells)
    assert list(tables.cells) == sorted(tables.cells)
    assert tables.mask == bit_set(tables, board.cells)
    for cell in board.cells:
        index = tables.index[cell]
        assert tables.cell_at[index] == cell
        assert tables.names[index] == board.name(cell)
        assert tables.neighbours[index] == tuple(tables.index[c] for c in board.neighbours[cell])
        assert tables.neighbour_count[index] == board.neighbour_count[cell]
        assert tables.knights[index] == tuple(tables.index[c] for c in board.knights[cell])
        assert tables.knight_masks[index] == bit_set(tables, board.knights[cell])
        for ray, cells in zip(tables.rays[index], board.rays[cell]):
            assert ray == tuple(tables.index[c] for c in cells)
            if cells:
                assert ray[0] - index == tables.shifts[board.rays[cell].index(cells)]
        assert cells_of(tables, tables.line_masks[index]) == {
            c for ray in board.rays[cell] for c in ray
        }
    for edge, mask in zip(board.edges, tables.edge_masks):
        assert cells_of(tables, mask) == set(edge)
    # the spare indices, where a step off the board lands, hold no cell
    spare = [i for i in range(tables.length) if tables.cell_at[i] is None]
    assert all(tables.names[i] is None and not tables.mask >> i & 1 for i in spare)


@settings(max_examples=150, deadline=None)
@given(board_strategy, st.data())
def test_bit_set_connection_agrees_with_the_boards_groups(board, data):
    tables = cell_tables(board)
    cells = data.draw(st.sets(st.sampled_from(board.cells), max_size=len(board.cells)))
    bits = bit_set(tables, cells)
    assert cells_of(tables, bits) == cells
    assert tables.indices(bits) == sorted(tables.index[cell] for cell in cells)
    groups = board.groups(cells)
    assert tables.united(bits) == (len(groups) == 1)
    for group in groups:
        seed = tables.bits[tables.index[next(iter(group))]]
        assert cells_of(tables, tables.grow(seed, bits)) == set(group)
    adjacent = {near for cell in cells for near in board.neighbours[cell]}
    assert cells_of(tables, tables.adjacent(bits)) == adjacent
    for first, second in ((0, 2), (1, 3)):
        edge, other = board.edges[first], board.edges[second]
        joins = tables.joins(bits, tables.edge_masks[first], tables.edge_masks[second])
        assert joins == board.joins(cells, edge, other)
