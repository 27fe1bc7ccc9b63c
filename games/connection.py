"""What the robots of the two hex connection games (KnightVision, Lox) know of connection,
written once: how far each side is from joining its edges, and which cells its shortest
joins run through.

A side is seen as bit sets over games/hexgrid.py's cell_tables: its own pieces, free to
pass; the cells it could take with one move (KnightVision: the vacant cells; Lox: the cells
it may play on now, a stone of the other colour it controls among them); everything else
blocks. The connection distance is the fewest such moves that join its two edges (0: it has
a chain). A search cut off at its leaves scores them by the difference of the two sides'
distances (evaluate), after a few random plies, and expands first, and only, the moves on
a shortest join of either side (the cells a join needs and a block must take), the central
ones first (candidates): a robot with 100 playouts a move on a board of 361 cells can
neither try every move at the root nor learn much from uniformly random playouts that fill
the board, which also took it some 250 plies to win against a random player.
"""

import functools
import math
import random
from collections.abc import Callable, Hashable, Sequence
from typing import NamedTuple

from games.hexgrid import CellTables, cube

STEEPNESS = 0.8  # how sure a lead of one move in connection distance makes a side
TEMPO = 0.5  # the side on move is half a move nearer than its distance says
# A playout plays this many uniformly random plies before the evaluation: a few keep the
# verdicts of a larger budget better than a smaller one's (at 0 the robot with 100 playouts
# lost to itself with 10), many make them noise again.
PLAYOUT_PLIES = 5
WIDTH = 8  # moves a search node expands at most, the best-placed first
FLAG_BITS = bytes.maketrans(b"\x00\x01", b"01")


class Side(NamedTuple):
    """One side of a position as bit sets: its pieces, the cells one move of it takes, and
    the two edges it joins."""

    own: int
    passable: int
    first_edge: int
    second_edge: int


def flags_to_bits(flags: bytes | bytearray) -> int:
    """A bytearray of 0/1 flags by index as a bit set (bit i: flags[i])."""
    return int(flags.translate(FLAG_BITS)[::-1], 2) if flags else 0


def reach(tables: CellTables, side: Side, start: int, goal: int) -> list[int]:
    """Layer d: the cells side reaches from edge `start` paying at most d moves (its own
    pieces are free, its passable cells cost one each), up to the first layer touching edge
    `goal`, or every layer when it never does."""
    own, passable = side.own, side.passable
    reached = tables.grow(start & own, own)
    layers = [reached]
    while not reached & goal:
        new = (tables.adjacent(reached) | start) & passable & ~reached
        if not new:
            break
        reached = tables.grow(reached | new, reached | new | own)
        layers.append(reached)
    return layers


class Join(NamedTuple):
    distance: int | None  # None: the side can no longer join its edges
    cells: int  # the passable cells on one of its shortest joins, as a bit set


def shortest_join(tables: CellTables, side: Side) -> Join:
    """The side's connection distance and the passable cells on its shortest joins: a cell
    costing one move lies on one when the layers from both edges meet in it with distances
    adding up to the whole plus one."""
    forward = reach(tables, side, side.first_edge, side.second_edge)
    if not forward[-1] & side.second_edge:
        return Join(None, 0)
    distance = len(forward) - 1
    backward = reach(tables, side, side.second_edge, side.first_edge)
    cells = 0
    for d in range(1, distance + 1):
        cells |= forward[d] & backward[distance + 1 - d]
    return Join(distance, cells & side.passable)


def distance(tables: CellTables, side: Side) -> int | None:
    """The side's connection distance alone (one flood, from its first edge)."""
    layers = reach(tables, side, side.first_edge, side.second_edge)
    return len(layers) - 1 if layers[-1] & side.second_edge else None


def value(own: int | None, other: int | None, on_move: bool, unreachable: int) -> float:
    """A side's expected reward from its connection distance and the other side's."""
    lead = (unreachable if other is None else other) - (unreachable if own is None else own)
    lead += TEMPO if on_move else -TEMPO
    return 1 / (1 + math.exp(-STEEPNESS * lead))


@functools.cache
def centrality(tables: CellTables) -> list[int]:
    """By index: how far a cell is from the board's centre, in steps (spare bits: 0)."""
    cells = [tables.cell_at[index] for index in tables.cells]
    centre = [sum(axis) / len(cells) for axis in zip(*(cube(cell) for cell in cells))]
    far = [0] * tables.length
    for index in tables.cells:
        offsets = (abs(a - c) for a, c in zip(cube(tables.cell_at[index]), centre))
        far[index] = round(sum(offsets) / 2)
    return far


class ConnectionGame(NamedTuple):
    """What a connection game gives the shared knowledge: its board's tables, each seat's
    Side in a position, and the cell a move is played on (None: a move without one)."""

    tables: Callable[[object], CellTables]
    sides: Callable[[object], Sequence[Side]]
    cell_of: Callable[[Hashable], int | None]


def evaluate(game: ConnectionGame, engine) -> list[float]:
    """The reward vector of a position the search cut off: a sigmoid of the difference of
    the two seats' connection distances, with the seat on move half a move ahead."""
    tables = game.tables(engine)
    first, second = (distance(tables, side) for side in game.sides(engine))
    mover = engine.to_move()
    white = value(first, second, mover == 0, tables.length)
    return [white, 1 - white]


def candidates(game: ConnectionGame, engine, moves: list, rng: random.Random) -> list:
    """The moves a search node expands, the first first: those on a shortest join of both
    seats, then of one, the central ones first and ties at random, at most WIDTH of them;
    every move, shuffled, when no move lies on a join."""
    tables = game.tables(engine)
    far = centrality(tables)
    joins = [shortest_join(tables, side).cells for side in game.sides(engine)]
    both, either = joins[0] & joins[1], joins[0] | joins[1]
    ranked = []
    for move in moves:
        cell = game.cell_of(move)
        if cell is None or not either >> cell & 1:
            continue
        ranked.append((-(both >> cell & 1), far[cell], rng.random(), move))
    if not ranked:
        shuffled = list(moves)
        rng.shuffle(shuffled)
        return shuffled
    ranked.sort()
    return [move for *_, move in ranked[:WIDTH]]


def knowledge(game: ConnectionGame):
    """The search knowledge of a connection game's robot: only the candidates expanded, and
    playouts cut off after a few random plies and scored by evaluate."""
    # deferred: only robot work needs the search
    from pbm.robots import Knowledge

    return Knowledge(
        evaluate=functools.partial(evaluate, game),
        playout_plies=PLAYOUT_PLIES,
        candidates=functools.partial(candidates, game),
    )
