"""The flat 4x4 game solved exhaustively, for the robot's perfect play there, its votes
and resignation, and `make strength`'s check of it (docs/robots.md).

Knight Panic has no move limit (docs/spec/games/knightpanic.md §9), so play can cycle and a
depth-first negamax would be wrong: the solve is retrograde. From a position it enumerates
every position reachable from it (about 400,000 running ones from the start), then works
back from the moves that end the game: a position is won when a move reaches one lost for
the opponent, lost when every move reaches one won for the opponent, and drawn (endless
play) when neither is ever shown. Positions are processed by distance, so a won position's
value is its shortest win and a lost one's its longest resistance.

The flat game has no levels and nothing is ever pinned, so the solve does not go through
the engine: a position is two 16-bit masks of the 4x4 cells, the knights of the seat on
move and those of the other seat (the rules are the same for both colours, so whose colour
is on move does not matter), packed into one int key. A move's judgement only looks at the
knights a jump from the landing cell away, the only ones the move can have left without a
move; a position's predecessors are found by moving a knight of the seat that just moved
back, so no list of moves is kept. Solved values are kept per process and per tiebreak
option, so the start's solve serves every later position.
"""

import time
from array import array

from pbm.engine import Engine

DRAW = 0  # a value: +d wins in d plies for the seat on move, -d loses in d plies, 0 a draw
SIDE = 4
CELLS = SIDE * SIDE
FULL = (1 << CELLS) - 1
CLOCK_EVERY = 4096  # positions between two looks at the deadline


def _jumps(cell: int) -> int:
    x, y = divmod(cell, SIDE)
    mask = 0
    for dx, dy in ((1, 2), (2, 1), (-1, 2), (-2, 1), (1, -2), (2, -1), (-1, -2), (-2, -1)):
        if 0 <= x + dx < SIDE and 0 <= y + dy < SIDE:
            mask |= 1 << ((x + dx) * SIDE + y + dy)
    return mask


JUMPS = tuple(_jumps(cell) for cell in range(CELLS))  # cell -> mask of the cells a jump away


def _cells_of_every_mask() -> tuple[tuple[int, ...], ...]:
    cells: list[tuple[int, ...]] = [()]
    for mask in range(1, 1 << CELLS):
        lowest = mask & -mask
        cells.append((lowest.bit_length() - 1, *cells[mask ^ lowest]))
    return tuple(cells)


BITS = _cells_of_every_mask()  # mask -> its cells, for looping over knights


def solvable(state) -> bool:
    options = state["options"]
    return options["size"] == 4 and not options["3d"]


def position_key(engine) -> int:
    """The position as the rules see it: the cells of the knights of the seat on move,
    and those of the other seat above them."""
    span = engine.geometry.span
    masks = [0, 0]
    for seat in (0, 1):
        for point in engine.pieces[seat]:
            x, y = divmod(point >> 3, span)
            masks[seat] |= 1 << (x // 2 * SIDE + y // 2)
    mover = engine.on_move
    return masks[mover] | masks[1 - mover] << CELLS


class _Solved:
    """The solves of one tiebreak option: their positions' keys, each to its value."""

    def __init__(self):
        self.parts: list[tuple[dict[int, int], array]] = []

    def get(self, key: int) -> int | None:
        for index, values in self.parts:
            position = index.get(key)
            if position is not None:
                return values[position]
        return None


_solved: dict[bool, _Solved] = {}  # per mover_loses


def _table(engine: Engine) -> _Solved:
    return _solved.setdefault(engine.options["mover_loses"], _Solved())


def known(engine: Engine) -> bool:
    """Whether a running position's value is at hand without a solve."""
    return _table(engine).get(position_key(engine)) is not None


def solve(engine: Engine, deadline: float | None = None) -> bool:
    """Solves a running position (and every one reachable from it) unless already solved;
    False, with nothing kept, when the deadline (a time.perf_counter() value) passes
    first."""
    table = _table(engine)
    key = position_key(engine)
    if table.get(key) is not None:
        return True
    part = _solve(key, engine.options["mover_loses"], deadline)
    if part is None:
        return False
    table.parts.append(part)
    return True


def value(engine: Engine) -> int:
    """The exact value of a running 4x4 flat position for the seat on move."""
    solve(engine)
    return _table(engine).get(position_key(engine))


def best_move(engine: Engine):
    """A move keeping the best value there is: the quickest win, else a draw, else the
    longest resistance."""
    seat = engine.to_move()
    best, best_score = None, None
    for move in engine.legal_moves():
        after = engine.copy()
        after.play(move)
        outcome = after.outcome()
        if outcome is not None:
            score = 10_000 if outcome.winners == (seat,) else -10_000
        else:
            theirs = value(after)
            score = DRAW if theirs == DRAW else theirs + (1000 if theirs < 0 else -1000)
        if best_score is None or score > best_score:
            best, best_score = move, score
    return best


def _solve(root: int, mover_loses: bool, deadline: float | None):
    """The index of every running position reachable from root (a key) and their values,
    or None when the deadline passes first."""
    jumps, bits, clock = JUMPS, BITS, time.perf_counter
    index = {root: 0}
    keys = [root]
    unanswered = array("i")  # per position: its moves to running positions not yet lost
    first = []  # the positions decided at a distance of one ply
    first_values = []
    position = 0
    while position < len(keys):
        if deadline is not None and position % CLOCK_EVERY == 0 and clock() > deadline:
            return None
        key = keys[position]
        own, other = key & FULL, key >> CELLS
        free = FULL ^ own ^ other
        running = 0
        wins = False
        for cell in bits[own]:
            rest = own ^ 1 << cell
            for target in bits[jumps[cell] & free]:
                after = free ^ 1 << cell ^ 1 << target
                near = jumps[target]
                # only knights a jump from the landing cell can have lost their last move;
                # the knight that moved can always jump back
                theirs = mine = False
                for knight in bits[near & other]:
                    if not jumps[knight] & after:
                        theirs = True
                        break
                for knight in bits[near & rest]:
                    if not jumps[knight] & after:
                        mine = True
                        break
                if theirs and (not mine or not mover_loses):
                    wins = True
                    continue
                if mine:
                    continue  # a move that loses at once
                child = other | (rest | 1 << target) << CELLS
                if child not in index:
                    index[child] = len(keys)
                    keys.append(child)
                running += 1
        unanswered.append(running)
        if wins or not running:
            first.append(position)
            first_values.append(1 if wins else -1)
        position += 1
    count = len(keys)
    values = array("h", bytes(2 * count))
    for position, won in zip(first, first_values):
        values[position] = won
    layer = first
    distance = 1
    while layer:
        following = []
        for number, position in enumerate(layer):
            if deadline is not None and number % CLOCK_EVERY == 0 and clock() > deadline:
                return None
            key = keys[position]
            own, other = key & FULL, key >> CELLS
            free = FULL ^ own ^ other
            lost = values[position] < 0
            # the seat that moved here is `other`: each of its knights came from a free
            # cell a jump away
            for target in bits[other]:
                rest = other ^ 1 << target
                for origin in bits[jumps[target] & free]:
                    parent = index.get(rest | 1 << origin | own << CELLS)
                    if parent is None or values[parent]:
                        continue
                    if lost:
                        values[parent] = distance + 1
                    else:
                        unanswered[parent] -= 1
                        if unanswered[parent]:
                            continue
                        values[parent] = -distance - 1
                    following.append(parent)
        layer = following
        distance += 1
    return index, values
