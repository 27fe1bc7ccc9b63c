"""Knight Panic's rules as a mutable position (pbm/engine.py): the one implementation the
plugin contract and search both go through.

Representation. A column is the (X, Y) of doubled coordinates as the int X * (2n - 1) + Y,
and a point is column * 8 + level, so sorting points sorts them by (X, Y, level). The
knights of one column fill its levels from the bottom without gaps
(docs/spec/games/knightpanic.md §5.1), so `top` (the highest occupied level of each column,
0 for none) says which points are occupied: the lowest empty point of a column is two levels
above its top, a knight is pinned when a diagonal neighbour column reaches the level above
it, and only a column's top knight can be unpinned. `landing` keeps for each column the
level a knight jumping there lands on (its lowest empty point if that is on level 1 or
supported; else 0, or a level above the column when it is full), refreshed around the two
columns a move changes, so a jump is legal when landing[target] is one of the levels the
jump allows. Per board size a Geometry holds the tables: each point's jumps (the move, the
target column, the levels it may land on, docs/spec/games/knightpanic.md §5.3), each
column's diagonal neighbours, and which columns' knights a move can leave without a move. A
move is the int point << 4 | direction, its text built only in move_text. Once a position is
settled (judged, and no unpinned knight is trapped and nobody is all pinned, or the game
would be over), only the knights the next move can have trapped or pinned are examined;
anything found there ends the game, and the full judgement (docs/spec/games/knightpanic.md
§4, §5.4) then names every trapped knight.
"""

import re
from functools import cache

from pbm.engine import Engine

WHITE, BLACK = 0, 1
PLAYER_NAMES = ("White", "Black")
KNIGHT_STEPS = ((2, 4), (4, 2), (-2, 4), (-4, 2), (2, -4), (4, -2), (-2, -4), (-4, -2))
DIAGONALS = ((-1, -1), (-1, 1), (1, -1), (1, 1))  # so that points come sorted by name
# docs/spec/games/knightpanic.md §5.3: a knight jumps any distance sqrt(5), cells 1 apart and levels
# sqrt(2)/2 apart, so a doubled offset (dX, dY) with level change dk satisfies dX^2 + dY^2 + 2 dk^2
# = 20. The flat steps come first so that 2D move lists keep their order.
LEVEL_CHANGES = (
    {step: (0,) for step in KNIGHT_STEPS}
    | {(3 * dx, 3 * dy): (1, -1) for dx, dy in DIAGONALS}
    | {(dx, dy): (3, -3) for dx, dy in DIAGONALS}
)
DIRECTIONS = tuple(LEVEL_CHANGES)
MOVE_RE = re.compile(r"([a-z])(\d{1,2})-([a-z])(\d{1,2})")


def cell_name(x: int, y: int) -> str:
    return f"{chr(ord('a') + x)}{y + 1}"


class Geometry:
    """The tables of one board size, 2D or 3D."""

    def __init__(self, size: int, three_d: bool):
        span = 2 * size - 1
        self.span = span
        top_level = size if three_d else 1

        def exists(x, y, level) -> bool:
            low, high = level - 1, 2 * size - 1 - level
            return (
                1 <= level <= top_level
                and x % 2 == y % 2 == (level - 1) % 2
                and low <= x <= high
                and low <= y <= high
            )

        self.three_d = three_d
        columns = range(span * span)
        self.base = [1 + (column // span) % 2 for column in columns]
        self.diagonal = [
            tuple(
                (x + dx) * span + y + dy
                for dx, dy in DIAGONALS
                if 0 <= x + dx < span and 0 <= y + dy < span
            )
            for x, y in (divmod(column, span) for column in columns)
        ]
        # The columns whose landing a change of a column's top can change.
        self.around = [(column, *self.diagonal[column]) for column in columns]
        self.offsets = tuple(dx * span + dy for dx, dy in DIRECTIONS)
        self.jumps = [()] * (span * span * 8)
        for column in columns:
            x, y = divmod(column, span)
            for level in range(1, top_level + 1):
                if not exists(x, y, level):
                    continue
                jumps = []
                for direction, ((dx, dy), changes) in enumerate(LEVEL_CHANGES.items()):
                    levels = tuple(
                        level + change
                        for change in changes
                        if exists(x + dx, y + dy, level + change)
                    )
                    if levels:
                        move = (column * 8 + level) << 4 | direction
                        jumps.append((move, (x + dx) * span + y + dy, levels))
                self.jumps[column * 8 + level] = tuple(jumps)
        # The columns whose top knight a move may leave without a move: around the column a
        # knight arrives on, those that jumped there; around the one it left, those that
        # jumped there or onto a point it helped support, and the knights it rested on.
        sources = [set() for _ in columns]
        for point, jumps in enumerate(self.jumps):
            for _move, target, _levels in jumps:
                sources[target].add(point // 8)
        self.watch_arrival = [tuple(sorted(sources[c] | {c})) for c in columns]
        self.watch_departure = [
            tuple(
                sorted(sources[c].union(*(sources[d] for d in self.diagonal[c]), self.diagonal[c]))
            )
            if three_d
            else ()
            for c in columns
        ]


@cache
def geometry(size: int, three_d: bool) -> Geometry:
    return Geometry(size, three_d)


class KnightPanicEngine(Engine):
    __slots__ = (
        "options",
        "geometry",
        "top",
        "landing",
        "owner",
        "pieces",
        "on_move",
        "last",
        "winner",
        "reason",
        "settled",
    )

    @classmethod
    def from_state(cls, state) -> "KnightPanicEngine":
        self = cls.__new__(cls)
        options = state["options"]
        self.options = options
        self.geometry = board = geometry(options["size"], options["3d"])
        self.top = [0] * len(board.base)
        self.owner = {}
        self.pieces = ([], [])
        for x, y, level, seat in state["pieces"]:
            column = x * board.span + y
            self.top[column] = max(self.top[column], level)
            self.owner[column * 8 + level] = seat
            self.pieces[seat].append(column * 8 + level)
        self.landing = [0] * len(board.base)
        self.update_landing(range(len(board.base)))
        self.on_move = state["to_move"]
        self.last = state["last"]
        self.winner = state["winner"]
        self.reason = state["reason"]
        # Unknown until judged: a state need not come from play (a test may set one up).
        self.settled = False
        return self

    def copy(self) -> "KnightPanicEngine":
        other = KnightPanicEngine.__new__(KnightPanicEngine)
        other.options = self.options
        other.geometry = self.geometry
        other.top = self.top[:]
        other.landing = self.landing[:]
        other.owner = self.owner.copy()
        other.pieces = (self.pieces[0][:], self.pieces[1][:])
        other.on_move = self.on_move
        other.last = self.last
        other.winner = self.winner
        other.reason = self.reason
        other.settled = self.settled
        return other

    # -- the search contract ---------------------------------------------------------

    def to_move(self) -> int | None:
        return None if self.winner is not None else self.on_move

    def outcome(self):
        from pbm.game import Outcome

        if self.winner is None:
            return None
        return Outcome(winners=(self.winner,), reason=self.reason)

    def legal_moves(self) -> list:
        if self.winner is not None:
            return []
        top, landing = self.top, self.landing
        diagonal, jumps = self.geometry.diagonal, self.geometry.jumps
        moves = []
        for point in self.pieces[self.on_move]:
            column, level = point >> 3, point & 7
            if top[column] != level:
                continue  # a knight under another in its column is pinned
            above = level + 1
            for neighbour in diagonal[column]:
                if top[neighbour] >= above:
                    break
            else:
                for move, target, levels in jumps[point]:
                    if landing[target] in levels:
                        moves.append(move)
        return moves

    def update_landing(self, columns) -> None:
        """The level a knight jumping to each column lands on: its lowest empty point, if
        that is on level 1 or supported (docs/spec/games/knightpanic.md §5.1); else 0, or a
        level above the column when it is full: no jump allows either."""
        top, landing = self.top, self.landing
        base, diagonal = self.geometry.base, self.geometry.diagonal
        for column in columns:
            reached = top[column]
            level = reached + 2 if reached else base[column]
            if level > 1:
                below = level - 1
                for support in diagonal[column]:
                    if top[support] < below:
                        level = 0
                        break
            landing[column] = level

    def pinned(self, point) -> bool:
        top, column = self.top, point >> 3
        above = (point & 7) + 1
        if top[column] != above - 1:
            return True
        for neighbour in self.geometry.diagonal[column]:
            if top[neighbour] >= above:
                return True
        return False

    def can_move(self, point) -> bool:
        """Whether the unpinned knight on point has a jump
        (docs/spec/games/knightpanic.md §3, §5.3)."""
        landing = self.landing
        for _move, target, levels in self.geometry.jumps[point]:
            if landing[target] in levels:
                return True
        return False

    def play(self, move) -> None:
        self.play_as(self.on_move, move)

    def play_as(self, seat, move) -> None:
        board, top = self.geometry, self.top
        origin = move >> 4
        column, level = origin >> 3, origin & 7
        target = column + board.offsets[move & 15]
        landing = self.landing[target]
        top[column] = level - 2 if level > 2 else 0
        top[target] = landing
        if board.three_d:
            self.update_landing(board.around[column])
            self.update_landing(board.around[target])
        else:
            self.landing[column], self.landing[target] = 1, 0
        arrival = target * 8 + landing
        del self.owner[origin]
        self.owner[arrival] = seat
        own = self.pieces[seat]
        own[own.index(origin)] = arrival
        self.on_move = 1 - seat
        self.last = move
        if not self.settled or self.may_have_ended(column, level, target, landing):
            self.judge(seat)
            self.settled = True

    def may_have_ended(self, column, level, target, landing) -> bool:
        """Whether the move just made can have trapped a knight or pinned a whole army."""
        top, owner, diagonal = self.top, self.owner, self.geometry.diagonal
        if landing > 1:
            below = landing - 1
            for seat in {owner[support * 8 + below] for support in diagonal[target]}:
                if all(self.pinned(point) for point in self.pieces[seat]):
                    return True
        landing, jumps = self.landing, self.geometry.jumps
        for watched in (self.geometry.watch_arrival[target], self.geometry.watch_departure[column]):
            for other in watched:
                height = top[other]
                if not height:
                    continue
                above = height + 1
                for neighbour in diagonal[other]:
                    if top[neighbour] >= above:
                        break  # pinned
                else:
                    for _move, goal, levels in jumps[other * 8 + height]:
                        if landing[goal] in levels:
                            break
                    else:
                        return True
        return False

    def judge(self, mover) -> None:
        """docs/spec/games/knightpanic.md §4 and §5.4: the winner and the reason."""
        opponent = 1 - mover
        if self.options["win_no_move"]:
            for seat in (mover, opponent):
                if self.all_pinned(seat):
                    self.winner = seat
                    self.reason = (
                        f"all of {PLAYER_NAMES[seat]}'s knights are pinned, "
                        "which wins with -win_no_move"
                    )
                    return
        theirs = self.stuck_reason(opponent)
        mine = self.stuck_reason(mover)
        if theirs and (not mine or not self.options["mover_loses"]):
            self.winner, self.reason = mover, theirs
        elif mine:
            self.winner, self.reason = opponent, mine

    def all_pinned(self, seat) -> bool:
        return all(self.pinned(point) for point in self.pieces[seat])

    def stuck_reason(self, seat) -> str:
        colour = PLAYER_NAMES[seat]
        if self.all_pinned(seat):
            return f"all of {colour}'s knights are pinned"
        stuck = [
            self.label(point)
            for point in sorted(self.pieces[seat])
            if not self.pinned(point) and not self.can_move(point)
        ]
        if not stuck:
            return ""
        knights = "knight" if len(stuck) == 1 else "knights"
        return f"{colour}'s {knights} on {' and '.join(stuck)} cannot move"

    # -- texts and states --------------------------------------------------------------

    def label(self, point) -> str:
        """A point's name in a reason: its cell, with its level above level 1."""
        name = cell_name(*divmod(point >> 3, self.geometry.span))
        level = point & 7
        return name if level == 1 else f"{name} (level {level})"

    def move_text(self, move) -> str:
        span = self.geometry.span
        column = move >> 7
        target = column + self.geometry.offsets[move & 15]
        return f"{cell_name(*divmod(column, span))}-{cell_name(*divmod(target, span))}"

    def parse_text(self, text):
        """The move of a canonical move text, as parse_move gives it."""
        match = MOVE_RE.fullmatch(text)
        span = self.geometry.span
        x, y = ord(match[1]) - 97, int(match[2]) - 1
        dx, dy = ord(match[3]) - 97 - x, int(match[4]) - 1 - y
        column = x * span + y
        return (column * 8 + self.top[column]) << 4 | DIRECTIONS.index((dx, dy))

    def state(self):
        span = self.geometry.span
        owner = self.owner
        last = self.last
        return {
            "options": self.options,
            "pieces": [
                [*divmod(point >> 3, span), point & 7, owner[point]] for point in sorted(owner)
            ],
            "to_move": self.on_move,
            "last": last if last is None or isinstance(last, str) else self.move_text(last),
            "winner": self.winner,
            "reason": self.reason,
        }
