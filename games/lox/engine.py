"""The Lox rules (docs/spec/games/lox.md) as a fast engine (issue 21), the one
implementation the plugin contract goes through too.

Representation: a cell is its index in games/hexgrid.py's cell_tables; `owner` is a list
by index (EMPTY, RED or BLUE), `seen[seat]` a list by index of how many of seat's stones
the cell sees, `legal[seat]` a bytearray by index flagging the cells seat may play on, and
`stones[seat]` the seat's stones as an int bit set. A stone changes what is seen only
along its own six rays, up to and including the first stone on each, so play updates the
counts and flags there and nowhere else, and listing the moves is one C-level compress of
the flags. The win test (the seat now on move has a chain, docs/spec/games/lox.md §5) is
a bit-set flood from one of its edges through its stones, made only when its stones touch
both edges. A move is the int index of its cell (placement or replacement follows from
what stands there) or "pass"; the move text and the JSON state are built only when asked
for.
"""

import functools
from itertools import compress
from operator import itemgetter

from games.hexgrid import RhombusBoard, cell_tables
from pbm.engine import Engine
from pbm.game import Outcome

RED, BLUE = 0, 1
EMPTY = -1
SYMBOLS = {".": EMPTY, "R": RED, "B": BLUE}
STONES = ("R", "B")
DIGITS = "0123456789"
PASS = "pass"
SYMBOL_OF = {EMPTY: ".", RED: "R", BLUE: "B"}.__getitem__


@functools.cache
def layout(size: int):
    """(tables, stones needed to control each index, indices of each row in column order)."""
    board = RhombusBoard(size)
    tables = cell_tables(board)
    needed = [None if count is None else count // 2 + 1 for count in tables.neighbour_count]
    rows = tuple(tuple(tables.index[(q, r)] for q in range(size)) for r in range(size))
    return tables, needed, rows


@functools.cache
def row_getters(size: int) -> tuple[itemgetter, ...]:
    """For each row, what picks its cells out of a list by index, in column order."""
    return tuple(itemgetter(*row) for row in layout(size)[2])


def chain_text(seat: int, size: int) -> str:
    if seat == RED:
        return f"Red's chain joins the top and bottom edges (rows 1 and {size})"
    return f"Blue's chain joins the left and right edges (columns a and {chr(ord('a') + size - 1)})"


class LoxEngine(Engine):
    __slots__ = (
        "options", "tables", "needed", "owner", "seen", "stones", "legal", "seat", "winner", "last"
    )  # fmt: skip

    @classmethod
    def from_state(cls, state) -> "LoxEngine":
        engine = cls._empty(state["options"])
        rows = engine._rows
        owner, seen, stones = engine.owner, engine.seen, engine.stones
        bits = engine.tables.bits
        for row_cells, row, red_row, blue_row in zip(rows, state["board"], *state["seen"]):
            for index, symbol, red, blue in zip(row_cells, row, red_row, blue_row):
                seat = SYMBOLS[symbol]
                owner[index] = seat
                if seat != EMPTY:
                    stones[seat] |= bits[index]
                seen[RED][index] = int(red)
                seen[BLUE][index] = int(blue)
        engine._mark_legal(engine.tables.cells)
        engine.seat = state["to_move"]
        engine.winner = state["winner"]
        engine.last = state["last"]  # [seat, text] as the state has it, until a move is played
        return engine

    @classmethod
    def from_stones(cls, options, stones: dict[int, int], to_move: int) -> "LoxEngine":
        """A position set up directly, stones mapping indices to seats; counts and the win
        test are worked out from scratch."""
        engine = cls._empty(options)
        for index, seat in stones.items():
            engine.owner[index] = seat
            engine.stones[seat] |= engine.tables.bits[index]
        engine._count_seen()
        engine._mark_legal(engine.tables.cells)
        engine.seat, engine.winner, engine.last = to_move, None, None
        engine._judge()
        return engine

    @classmethod
    def _empty(cls, options) -> "LoxEngine":
        engine = object.__new__(cls)
        engine.options = options
        engine.tables, engine.needed, _ = layout(options["size"])
        length = engine.tables.length
        engine.owner = [EMPTY] * length
        engine.seen = [[0] * length, [0] * length]
        engine.stones = [0, 0]
        engine.legal = [bytearray(length), bytearray(length)]
        return engine

    @property
    def _rows(self):
        return layout(self.options["size"])[2]

    def _count_seen(self) -> None:
        owner, seen, rays = self.owner, self.seen, self.tables.rays
        for index in self.tables.cells:
            seat = owner[index]
            if seat == EMPTY:
                continue
            counts = seen[seat]
            for ray in rays[index]:
                for other in ray:
                    counts[other] += 1
                    if owner[other] != EMPTY:
                        break

    # -- the search contract -----------------------------------------------------------

    def to_move(self):
        return self.seat

    def placements(self) -> list[int]:
        """The legal placements and replacements of the seat on move (no pass)."""
        seat = self.seat
        if seat is None:
            return []
        return list(compress(range(self.tables.length), self.legal[seat]))

    def legal_moves(self):
        if self.seat is None:
            return []
        return self.placements() or [PASS]

    def placement_texts(self) -> list[str]:
        """The move texts of placements(), in the same order."""
        names, owner = self.tables.names, self.owner
        return [
            names[index] if owner[index] == EMPTY else "x" + names[index]
            for index in self.placements()
        ]

    def play(self, move) -> None:
        seat = self.seat
        if move == PASS:
            self.last = (seat, PASS)
        else:
            self.last = (seat, move, self.owner[move] != EMPTY)
            self.put(move, seat)
        self.seat = 1 - seat
        self._judge()

    def put(self, index: int, seat: int) -> None:
        """seat's stone on index, which is empty or holds the other colour (counts kept)."""
        owner = self.owner
        rays = self.tables.rays[index]
        own = self.seen[seat]
        replaced = owner[index]
        if replaced == EMPTY:
            # Each cell along ray d up to its first stone saw the first stone of the
            # opposite ray beyond the cell; it now sees this stone instead.
            walks, firsts = [], []
            for ray in rays:
                walked, first = [], EMPTY
                for other in ray:
                    walked.append(other)
                    if owner[other] != EMPTY:
                        first = owner[other]
                        break
                walks.append(walked)
                firsts.append(first)
            touched = [index]
            for direction in range(6):
                touched += walks[direction]
                hidden = firsts[(direction + 3) % 6]
                if hidden == EMPTY:
                    for other in walks[direction]:
                        own[other] += 1
                else:
                    lost = self.seen[hidden]
                    for other in walks[direction]:
                        own[other] += 1
                        lost[other] -= 1
        else:
            lost = self.seen[replaced]
            touched = [index]
            for ray in rays:
                for other in ray:
                    touched.append(other)
                    own[other] += 1
                    lost[other] -= 1
                    if owner[other] != EMPTY:
                        break
            self.stones[replaced] &= ~self.tables.bits[index]
        owner[index] = seat
        self.stones[seat] |= self.tables.bits[index]
        self._mark_legal(touched)

    def _mark_legal(self, indices) -> None:
        """Recompute, for both seats, whether a move on each of indices is legal."""
        owner, needed = self.owner, self.needed
        red_seen, blue_seen = self.seen
        red_legal, blue_legal = self.legal
        for index in indices:
            content = owner[index]
            if content == EMPTY:
                red_legal[index] = blue_seen[index] < needed[index]
                blue_legal[index] = red_seen[index] < needed[index]
            elif content == RED:
                red_legal[index] = 0
                blue_legal[index] = blue_seen[index] >= needed[index]
            else:
                red_legal[index] = red_seen[index] >= needed[index]
                blue_legal[index] = 0

    def _judge(self) -> None:
        """docs/spec/games/lox.md §5: the seat now on move wins with a chain between its edges."""
        seat = self.seat
        edges = self.tables.edge_masks
        first, second = (edges[0], edges[2]) if seat == RED else (edges[3], edges[1])
        if self.tables.joins(self.stones[seat], first, second):
            self.winner, self.seat = seat, None

    def copy(self) -> "LoxEngine":
        twin = object.__new__(LoxEngine)
        twin.options, twin.tables, twin.needed = self.options, self.tables, self.needed
        twin.owner = self.owner[:]
        twin.seen = [self.seen[0][:], self.seen[1][:]]
        twin.stones = self.stones[:]
        twin.legal = [self.legal[0][:], self.legal[1][:]]
        twin.seat, twin.winner, twin.last = self.seat, self.winner, self.last
        return twin

    def outcome(self):
        if self.winner is None:
            return None
        return Outcome(winners=(self.winner,), reason=chain_text(self.winner, self.options["size"]))

    def move_text(self, move) -> str:
        if move == PASS:
            return PASS
        name = self.tables.names[move]
        return name if self.owner[move] == EMPTY else "x" + name

    def state(self) -> dict:
        rows = row_getters(self.options["size"])
        owner, (red, blue) = self.owner, self.seen
        last = self.last
        if last.__class__ is tuple:
            if last[1] == PASS:
                last = [last[0], PASS]
            else:
                seat, index, replaced = last
                last = [seat, ("x" if replaced else "") + self.tables.names[index]]
        elif last is not None:
            last = list(last)
        digit = DIGITS.__getitem__
        return {
            "options": self.options,
            "board": ["".join(map(SYMBOL_OF, row(owner))) for row in rows],
            "seen": [["".join(map(digit, row(counts))) for row in rows] for counts in (red, blue)],
            "to_move": self.seat,
            "last": last,
            "winner": self.winner,
            "reason": "" if self.winner is None else chain_text(self.winner, self.options["size"]),
        }
