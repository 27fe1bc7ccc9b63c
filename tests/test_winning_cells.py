"""Finished boards look finished (issue 27 item 6): a game names the cells of the line or
chain that won (Game.winning_cells, docs/spec/server.md §10.2), its picture outlines them in
green (docs/spec/server.md §11.5), the web view shows them and who won, lost or drew; and a
picture marks the last move as its text board does, after a swap too."""

import pytest

from games.hexgrid import HexHexBoard, RhombusBoard
from games.knightline import KnightLine
from games.knightline.notation import CELL_RE, MOVE_RE
from games.knightpanic import KnightPanic
from games.knightvision import KnightVision
from games.lox import Lox
from games.uknight import Uknight
from pbm import drawing
from pbm.testing import random_game
from tests.toygame import Tally

SEEDS = range(6)


def finished(game, raw, seed, players=2):
    """A random game of the seed played to its end."""
    options = game.parse_options(raw, players)
    _, state = random_game(game, options, players, seed, max_plies=1000)
    assert game.outcome(state) is not None
    return state


def winning_marks(picture) -> list:
    return [p for p in picture.highlights if p.outline == drawing.WINNING and p.fill is None]


def knightvision_owner(state, cell):
    return {"w": 0, "W": 0, "b": 1, "B": 1}.get(state["rows"][cell[1]][cell[0]])


def lox_owner(state, cell):
    return {"R": 0, "B": 1}.get(state["board"][cell[1]][cell[0]])


@pytest.mark.parametrize(
    "game,raw,owner",
    [(KnightVision(), {"size": "9"}, knightvision_owner), (Lox(), {"size": "9"}, lox_owner)],
    ids=["knightvision", "lox"],
)
@pytest.mark.parametrize("seed", SEEDS)
def test_a_connection_game_names_the_winners_chain_edge_to_edge(game, raw, owner, seed):
    """The first seat joins top and bottom, the second left and right
    (docs/spec/games/knightvision.md §5, docs/spec/games/lox.md §5)."""
    state = finished(game, raw, seed)
    [winner] = game.outcome(state).winners
    board = RhombusBoard(state["options"]["size"])
    names = game.winning_cells(state)
    cells = [board.parse(name) for name in names]
    assert names and len(set(names)) == len(names)
    assert all(owner(state, cell) == winner for cell in cells)
    edges = (("top", "bottom"), ("left", "right"))[winner]
    first, second = (getattr(board, side) for side in edges)
    # Every group of the chain joins the winner's two edges, and holds the winner's pieces.
    for group in board.groups(cells):
        assert not group.isdisjoint(first) and not group.isdisjoint(second)
    picture = game.drawing(state, None, None)
    assert len(winning_marks(picture)) == len(names) and "green: the winning chain" in (
        picture.legend
    )


@pytest.mark.parametrize("seed", SEEDS)
def test_uknight_names_the_united_stones_of_the_winner(seed):
    game = Uknight()
    state = finished(game, {"size": "5"}, seed)
    outcome = game.outcome(state)
    names = game.winning_cells(state)
    if not outcome.winners:  # two full passes: a draw, nothing won
        assert names == () and not winning_marks(game.drawing(state, None, None))
        return
    [winner] = outcome.winners
    owner = {"w": 0, "W": 0, "b": 1, "B": 1}
    assert sorted(names) == sorted(
        name for name, symbol in state["pieces"].items() if owner[symbol] == winner
    )
    board = HexHexBoard(5)
    assert len(board.groups(board.parse(name) for name in names)) == 1
    assert len(winning_marks(game.drawing(state, None, None))) == len(names)


@pytest.mark.parametrize("seed", range(12))
def test_knight_line_names_the_line_through_the_last_stack(seed):
    game = KnightLine()
    state = finished(game, {}, seed)
    names = game.winning_cells(state)
    picture = game.drawing(state, None, state["last"][1])
    if "blocked game" in state["reason"]:
        assert names == () and not winning_marks(picture)
        return
    [winner] = game.outcome(state).winners
    cells = [tuple(int(n) for n in name.split(",")) for name in names]
    assert len(cells) >= 4
    steps = {(b[0] - a[0], b[1] - a[1]) for a, b in zip(cells, cells[1:])}
    assert len(steps) == 1 and steps.pop() in ((1, 0), (0, 1), (1, 1), (1, -1))
    stacks = {(x, y): seat for x, y, seat, _ in state["stacks"]}
    assert all(stacks.get(cell) == winner for cell in cells)
    move = state["last"][1]
    found = MOVE_RE.fullmatch(move)
    destination = (int(found[5]), int(found[6])) if found else None
    if found is None:
        found = CELL_RE.fullmatch(move)
        destination = (int(found[2]), int(found[3]))
    assert destination in cells
    assert f"{names[0]} to {names[-1]}" in state["reason"]
    assert len(winning_marks(picture)) == len(names) and "green: the winning line" in (
        picture.legend
    )


def test_games_without_a_line_or_chain_name_no_cells():
    state = finished(KnightPanic(), {}, 1)
    assert KnightPanic().winning_cells(state) == ()
    tally = Tally()
    options = tally.parse_options({}, 2)
    assert tally.winning_cells(tally.initial_state(options, 2, 1)) == ()
    lox = Lox()
    running = lox.initial_state(lox.parse_options({"size": "9"}, 2), 2, 1)
    assert lox.winning_cells(running) == ()


@pytest.mark.parametrize(
    "game,raw,first",
    [(Lox(), {"size": "9"}, "f6"), (KnightVision(), {"size": "9"}, "e5"), (Uknight(), {}, None)],
    ids=["lox", "knightvision", "uknight"],
)
def test_after_a_swap_the_picture_marks_the_stone_the_text_marks(game, raw, first):
    """The swap changes no state: the text board still brackets the first stone, and the
    picture (which the core gives the last ply's text, `swap`) now marks it too."""
    options = game.parse_options(raw, 2)
    state = game.initial_state(options, 2, 1)
    first = first or min(game.legal_moves(state, 0))
    state = game.apply_move(state, 0, game.parse_move(state, 0, first))
    assert "[" in game.render_board(state, None)
    picture = game.drawing(state, None, "swap")
    assert len(picture.highlights) == 1
    assert picture.highlights[0].fill == drawing.HIGHLIGHT
