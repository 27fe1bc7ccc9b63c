"""The KnightVision rules (docs/spec/games/knightvision.md) as a fast engine (issue 21), the
one implementation the plugin contract goes through too.

Representation: a cell is its index in games/hexgrid.py's cell_tables. `owner` is a list by
index (VACANT, WHITE or BLACK); `pieces[seat]` and `stacks[seat]` are int bit sets of the
seat's pieces and of those carrying an axe. `near[seat]` counts, by index, the seat's pieces
a knight's move away, and `placeable[seat]` is a bytearray flagging the seat's placements, a
knight on cell i at 2i (a vacant cell with one or more) and a stack at 2i + 1 (three or
more), both kept up to date by play around the cells it changes, so that listing the
placements is one C-level compress, in the order of their texts. The throws of each stack
are walked along its rays once and kept in `throws` until a cell on a line with it changes
hands. The win test (the seat now on move has a chain) is a bit-set flood from one of its
edges through its pieces, made only when they touch both edges.

A move is an int, 2i for a knight placed on cell i and 2i + 1 for a stack; a throw is the
pair (stack, landing) of indices; "pass". Texts and the JSON state are built only when
asked for.
"""

import functools
from itertools import compress

from games.hexgrid import RhombusBoard, cell_tables
from pbm.engine import Engine
from pbm.game import Outcome

WHITE, BLACK = 0, 1
VACANT = -1
COLOURS = ("White", "Black")
KNIGHT_SYMBOLS = ("w", "b")
STACK_SYMBOLS = ("W", "B")
PIECES = {".": (VACANT, False), "w": (WHITE, False), "b": (BLACK, False)}
PIECES.update({"W": (WHITE, True), "B": (BLACK, True)})
# friendly pieces at a knight's move needed to place a stack (docs/spec/games/knightvision.md §4.1)
STACK_THRESHOLD = 3
PASS = "pass"
NEITHER = bytes(2)  # neither a knight nor a stack may be placed


@functools.cache
def layout(size: int):
    """(tables, indices of each row in column order)."""
    tables = cell_tables(RhombusBoard(size))
    return tables, tuple(tuple(tables.index[(q, r)] for q in range(size)) for r in range(size))


def chain_reason(seat: int) -> str:
    edges = "top and bottom" if seat == WHITE else "left and right"
    return f"{COLOURS[seat]}'s chain joins the {edges} edges"


class KnightVisionEngine(Engine):
    __slots__ = (
        "options", "tables", "owner", "pieces", "stacks", "near", "placeable", "vacant",
        "throws", "free", "seat", "winner", "last",
    )  # fmt: skip

    @classmethod
    def from_state(cls, state) -> "KnightVisionEngine":
        engine = object.__new__(cls)
        engine.options = state["options"]
        tables, rows = layout(state["options"]["size"])
        engine.tables = tables
        length = tables.length
        engine.owner = [VACANT] * length
        engine.pieces, engine.stacks = [0, 0], [0, 0]
        engine.near = [[0] * length, [0] * length]
        engine.placeable = [bytearray(2 * length), bytearray(2 * length)]
        engine.vacant = bytearray(length)
        for row_cells, row in zip(rows, state["rows"]):
            for index, symbol in zip(row_cells, row):
                seat, stack = PIECES[symbol]
                if seat == VACANT:
                    engine.vacant[index] = 1
                else:
                    engine._add(index, seat)
                    if stack:
                        engine.stacks[seat] |= tables.bits[index]
        engine._mark_placeable(tables.cells)
        engine.throws = {}
        engine.free = [WHITE in state["free"], BLACK in state["free"]]
        engine.seat = state["to_move"]
        engine.winner = state["winner"]
        engine.last = state["last"]  # a text, as the state has it, until a move is played
        return engine

    def _add(self, index: int, seat: int) -> None:
        """seat's piece on index, counted at its knight cells, whose flags follow."""
        self.owner[index] = seat
        self.pieces[seat] |= self.tables.bits[index]
        vacant = self.vacant
        vacant[index] = 0
        near, flags = self.near[seat], self.placeable[seat]
        for knight in self.tables.knights[index]:
            count = near[knight] + 1
            near[knight] = count
            if vacant[knight]:
                flags[2 * knight] = 1
                flags[2 * knight + 1] = count >= STACK_THRESHOLD
        knight = 2 * index
        self.placeable[0][knight : knight + 2] = self.placeable[1][knight : knight + 2] = NEITHER

    def _remove(self, index: int, seat: int) -> None:
        """seat's piece off index (the caller puts another there), uncounted around it."""
        self.pieces[seat] &= ~self.tables.bits[index]
        self.stacks[seat] &= ~self.tables.bits[index]
        vacant, near, flags = self.vacant, self.near[seat], self.placeable[seat]
        for knight in self.tables.knights[index]:
            count = near[knight] - 1
            near[knight] = count
            if vacant[knight]:
                flags[2 * knight] = count > 0
                flags[2 * knight + 1] = count >= STACK_THRESHOLD

    def _mark_placeable(self, indices) -> None:
        vacant = self.vacant
        (white_near, black_near), (white, black) = self.near, self.placeable
        for index in indices:
            knight = 2 * index
            if vacant[index]:
                white[knight] = white_near[index] > 0
                black[knight] = black_near[index] > 0
                white[knight + 1] = white_near[index] >= STACK_THRESHOLD
                black[knight + 1] = black_near[index] >= STACK_THRESHOLD
            else:
                white[knight] = black[knight] = white[knight + 1] = black[knight + 1] = 0

    # -- the search contract -----------------------------------------------------------

    def to_move(self):
        return None if self.winner is not None else self.seat

    def actions(self) -> list:
        """The placements and throws of the seat on move (no pass)."""
        seat = self.seat
        if self.winner is not None:
            return []
        if self.free[seat]:
            return list(compress(range(0, 2 * self.tables.length, 2), self.vacant))
        moves = list(compress(range(2 * self.tables.length), self.placeable[seat]))
        stacks = self.stacks[seat]
        if stacks:
            throws = self.throws
            for stack in self.tables.indices(stacks):
                landings = throws.get(stack)
                if landings is None:
                    landings = throws[stack] = self._throws(stack, seat)
                moves += landings
        return moves

    def _throws(self, stack: int, seat: int) -> tuple:
        """The throws of the axe on stack (docs/spec/games/knightvision.md §4.2): over vacant
        cells and seat's pieces, up to
        and including the first opponent piece, landing on any but seat's pieces."""
        owner, moves = self.owner, []
        for ray in self.tables.rays[stack]:
            for cell in ray:
                content = owner[cell]
                if content == VACANT:
                    moves.append((stack, cell))
                elif content != seat:
                    moves.append((stack, cell))
                    break
        return tuple(moves)

    def _forget_throws(self, index: int) -> None:
        """A cell changed hands: the stacks on a line with it throw differently now."""
        stacks = self.stacks[0] | self.stacks[1]
        affected = stacks & self.tables.line_masks[index]
        if affected:
            throws = self.throws
            for stack in self.tables.indices(affected):
                throws.pop(stack, None)

    def legal_moves(self):
        if self.winner is not None:
            return []
        return self.actions() or [PASS]

    def play(self, move) -> None:
        seat = self.seat
        if move.__class__ is int:
            self.last = move
            index = move >> 1
            if move & 1:
                self.stacks[seat] |= self.tables.bits[index]
            self._add(index, seat)
            self._forget_throws(index)
            self.free[seat] = False
        elif move.__class__ is tuple:
            start, landing = move
            taken = self.owner[landing]
            self.last = (start, landing, taken != VACANT)
            self.stacks[seat] &= ~self.tables.bits[start]
            self.throws.pop(start, None)
            if taken != VACANT:
                self._remove(landing, taken)
            self._add(landing, seat)
            self._forget_throws(landing)
            self.free[seat] = False
        else:
            self.last = PASS
        self.seat = 1 - seat
        self._judge()

    def _last_of(self, move):
        """What the state's "last" needs of a move about to be played."""
        if move.__class__ is tuple:
            return move + (self.owner[move[1]] != VACANT,)
        return move

    def has_chain(self, seat: int) -> bool:
        edges = self.tables.edge_masks
        first, second = (edges[0], edges[2]) if seat == WHITE else (edges[3], edges[1])
        return self.tables.joins(self.pieces[seat], first, second)

    def _judge(self) -> None:
        """docs/spec/games/knightvision.md §5: only the seat now on move can win, by a chain that
        survived a turn."""
        if self.has_chain(self.seat):
            self.winner = self.seat

    def copy(self) -> "KnightVisionEngine":
        twin = object.__new__(KnightVisionEngine)
        twin.options, twin.tables = self.options, self.tables
        twin.owner = self.owner[:]
        twin.pieces, twin.stacks = self.pieces[:], self.stacks[:]
        twin.near = [self.near[0][:], self.near[1][:]]
        twin.placeable = [self.placeable[0][:], self.placeable[1][:]]
        twin.vacant = self.vacant[:]
        twin.throws = dict(self.throws)
        twin.free = self.free[:]
        twin.seat, twin.winner, twin.last = self.seat, self.winner, self.last
        return twin

    def outcome(self):
        if self.winner is None:
            return None
        return Outcome(winners=(self.winner,), reason=chain_reason(self.winner))

    def move_text(self, move) -> str:
        return self._text(self._last_of(move) if move != PASS else move)

    def _text(self, last) -> str:
        if last is None or last.__class__ is str:
            return last
        names = self.tables.names
        if last.__class__ is tuple:
            start, landing, captures = last
            return f"{names[start]}{'x' if captures else '-'}{names[landing]}"
        return names[last >> 1] + ("+" if last & 1 else "")

    def state(self) -> dict:
        owner, stacks = self.owner, self.stacks
        symbols = []
        for index in range(self.tables.length):
            seat = owner[index]
            if seat == VACANT:
                symbols.append(".")
            elif stacks[seat] >> index & 1:
                symbols.append(STACK_SYMBOLS[seat])
            else:
                symbols.append(KNIGHT_SYMBOLS[seat])
        rows = layout(self.options["size"])[1]
        return {
            "options": self.options,
            "rows": ["".join([symbols[index] for index in row]) for row in rows],
            "to_move": self.seat,
            "free": [seat for seat in (WHITE, BLACK) if self.free[seat]],
            "last": self._text(self.last),
            "winner": self.winner,
            "reason": "" if self.winner is None else chain_reason(self.winner),
        }
