"""The 4x4 games, flat and 3D, solved exhaustively, for the robot's perfect play there, its
votes and resignation, and `make strength`'s check of it (docs/robots.md).

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
back, so no list of moves is kept. The 3D board is solved the same way on two 30-bit
masks of its points (about 500,000 running positions from the start; the game is a draw).
Solved values are kept per process, board and tiebreak options, so the start's solve
serves every later position.
"""

import time
from array import array

from pbm.engine import Engine

from .engine import geometry

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
FLAT_POINTS = tuple(
    (x * 2 * (2 * SIDE - 1) + y * 2) * 8 + 1 for x in range(SIDE) for y in range(SIDE)
)  # cell -> the engine's point


def _points_3d() -> list[tuple[int, int, int]]:
    """The (x, y, level) of every point of the 4x4 3D board (docs/spec/games/knightpanic.md
    §5.1), lowest level first."""
    top = 2 * SIDE - 1
    return [
        (x, y, level)
        for level in range(1, SIDE + 1)
        for x in range(level - 1, top - level + 1)
        for y in range(level - 1, top - level + 1)
        if x % 2 == y % 2 == (level - 1) % 2
    ]


def _tables_3d():
    board = geometry(SIDE, True)
    points = _points_3d()
    place = {point: bit for bit, point in enumerate(points)}
    engine_points = [(x * board.span + y) * 8 + level for x, y, level in points]
    engine_bit = {point: bit for bit, point in enumerate(engine_points)}

    def mask(cells) -> int:
        return sum(1 << place[cell] for cell in cells if cell in place)

    jumps = tuple(
        sum(
            1 << engine_bit[target * 8 + level]
            for _move, target, levels in board.jumps[point]
            for level in levels
        )
        for point in engine_points
    )
    diagonal = ((-1, -1), (-1, 1), (1, -1), (1, 1))
    above = tuple(
        mask((x + dx, y + dy, level + 1) for dx, dy in diagonal) for x, y, level in points
    )
    upper = tuple(
        (1 << bit, mask((x + dx, y + dy, level - 1) for dx, dy in diagonal))
        for bit, (x, y, level) in enumerate(points)
        if level > 1
    )
    level_one = mask(point for point in points if point[2] == 1)
    return engine_bit, jumps, above, upper, level_one


POINTS = len(_points_3d())
POINTS_FULL = (1 << POINTS) - 1
# per point of the 3D board: the engine's point -> bit, the points a jump away, the points
# resting on it (a knight is pinned when one is taken); the points above level 1 with their
# supports; the points of level 1
POINT_BITS, JUMPS_3D, ABOVE_3D, UPPER_3D, LEVEL_ONE = _tables_3d()


def solvable(state) -> bool:
    return state["options"]["size"] == SIDE


def position_key(engine) -> int:
    """The position as the rules see it: the cells (in 3D the points) of the knights of the
    seat on move, and those of the other seat above them."""
    if engine.options["3d"]:
        bit, width = POINT_BITS, POINTS
    else:
        bit, width = {point: cell for cell, point in enumerate(FLAT_POINTS)}, CELLS
    masks = [0, 0]
    for seat in (0, 1):
        for point in engine.pieces[seat]:
            masks[seat] |= 1 << bit[point]
    mover = engine.on_move
    return masks[mover] | masks[1 - mover] << width


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


_solved: dict[tuple, _Solved] = {}  # per board and tiebreak options


def _rules(engine: Engine) -> tuple:
    options = engine.options
    if options["3d"]:
        return True, options["mover_loses"], options["win_no_move"]
    return False, options["mover_loses"], False  # -win_no_move has no effect in 2D


def _table(engine: Engine) -> _Solved:
    return _solved.setdefault(_rules(engine), _Solved())


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
    three_d, mover_loses, win_no_move = _rules(engine)
    if three_d:
        part = _solve_3d(key, mover_loses, win_no_move, deadline)
    else:
        part = _solve(key, mover_loses, deadline)
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


def drawing_moves(engine: Engine) -> list:
    """The moves that keep a drawn position drawn."""
    kept = []
    for move in engine.legal_moves():
        after = engine.copy()
        after.play(move)
        if after.outcome() is None and value(after) == DRAW:
            kept.append(move)
    return kept


def _retrograde(root: int, moves_from, moves_into, deadline: float | None):
    """The index of every running position reachable from root (a key) and their values,
    or None when the deadline passes first. moves_from(key) gives (whether the mover wins
    at once, the running positions its other moves lead to, those losing at once left out);
    moves_into(key) the positions a move leads here from. Values are worked back from the
    ended games by distance: a won position's is its shortest win, a lost one's its
    longest resistance, a draw by endless play's 0."""
    clock = time.perf_counter
    index = {root: 0}
    keys = [root]
    unanswered = array("i")  # per position: its moves to running positions not yet lost
    first = []  # the positions decided at a distance of one ply
    first_values = []
    position = 0
    while position < len(keys):
        if deadline is not None and position % CLOCK_EVERY == 0 and clock() > deadline:
            return None
        wins, children = moves_from(keys[position])
        for child in children:
            if child not in index:
                index[child] = len(keys)
                keys.append(child)
        unanswered.append(len(children))
        if wins or not children:
            first.append(position)
            first_values.append(1 if wins else -1)
        position += 1
    values = array("h", bytes(2 * len(keys)))
    for position, won in zip(first, first_values):
        values[position] = won
    layer = first
    distance = 1
    while layer:
        following = []
        for number, position in enumerate(layer):
            if deadline is not None and number % CLOCK_EVERY == 0 and clock() > deadline:
                return None
            lost = values[position] < 0
            for parent_key in moves_into(keys[position]):
                parent = index.get(parent_key)
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


def _solve(root: int, mover_loses: bool, deadline: float | None):
    """_retrograde on the flat 4x4 board: a position is two 16-bit masks of its cells."""
    jumps, bits = JUMPS, BITS

    def moves_from(key):
        own, other = key & FULL, key >> CELLS
        free = FULL ^ own ^ other
        children = []
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
                children.append(other | (rest | 1 << target) << CELLS)
        return wins, children

    def moves_into(key):
        own, other = key & FULL, key >> CELLS
        free = FULL ^ own ^ other
        # the seat that moved here is `other`: each of its knights came from a free cell a
        # jump away
        for target in bits[other]:
            rest = other ^ 1 << target
            for origin in bits[jumps[target] & free]:
                yield rest | 1 << origin | own << CELLS

    return _retrograde(root, moves_from, moves_into, deadline)


def _landable(occupied: int) -> int:
    """The empty points a knight may land on: on level 1, or on all four of its supports."""
    landable = LEVEL_ONE
    for bit, supports in UPPER_3D:
        if occupied & supports == supports:
            landable |= bit
    return landable & ~occupied


def _all_pinned(knights: int, occupied: int) -> bool:
    while knights:
        low = knights & -knights
        knights ^= low
        if not occupied & ABOVE_3D[low.bit_length() - 1]:
            return False
    return True


def _stuck(knights: int, occupied: int, landable: int) -> bool:
    """Whether a seat loses by a trap: all of its knights pinned, or an unpinned one
    without a jump (docs/spec/games/knightpanic.md §4, §5.4)."""
    all_pinned = True
    while knights:
        low = knights & -knights
        knights ^= low
        point = low.bit_length() - 1
        if occupied & ABOVE_3D[point]:
            continue
        all_pinned = False
        if not JUMPS_3D[point] & landable:
            return True
    return all_pinned


def _solve_3d(root: int, mover_loses: bool, win_no_move: bool, deadline: float | None):
    """_retrograde on the 4x4 3D board: a position is two 30-bit masks of its points. Every
    knight is judged after each move, since a move can pin, free or strand knights far
    from where it lands."""
    jumps, above = JUMPS_3D, ABOVE_3D

    def moves_from(key):
        own, other = key & POINTS_FULL, key >> POINTS
        occupied = own | other
        landable = _landable(occupied)
        children = []
        wins = False
        knights = own
        while knights:
            low = knights & -knights
            knights ^= low
            origin = low.bit_length() - 1
            if occupied & above[origin]:
                continue  # pinned
            targets = jumps[origin] & landable
            while targets:
                target = targets & -targets
                targets ^= target
                mine = own ^ low | target
                after = occupied ^ low | target
                if win_no_move and _all_pinned(mine, after):
                    wins = True
                    continue
                if win_no_move and _all_pinned(other, after):
                    continue
                reachable = _landable(after)
                theirs = _stuck(other, after, reachable)
                stuck = _stuck(mine, after, reachable)
                if theirs and (not stuck or not mover_loses):
                    wins = True
                    continue
                if stuck:
                    continue
                children.append(other | mine << POINTS)
        return wins, children

    def moves_into(key):
        own, other = key & POINTS_FULL, key >> POINTS
        occupied = own | other
        landable = _landable(occupied)
        # the knight that moved here rests free on its point, and came from a point a jump
        # away where it could land now
        knights = other
        while knights:
            low = knights & -knights
            knights ^= low
            target = low.bit_length() - 1
            if occupied & above[target]:
                continue
            origins = jumps[target] & landable
            rest = other ^ low
            while origins:
                origin = origins & -origins
                origins ^= origin
                yield rest | origin | own << POINTS

    return _retrograde(root, moves_from, moves_into, deadline)
