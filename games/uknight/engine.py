"""The Uknight rules (docs/spec/games/uknight.md) as a fast engine (issue 21), the one
implementation the plugin contract goes through too.

Representation: a cell is its index in games/hexgrid.py's cell_tables. `owner` is a list by
index (VACANT, WHITE or BLACK), `vacant` a bytearray of the vacant cells; `stones[seat]` and
`doubles[seat]` are int bit sets of the seat's stones and of those carrying an axe.
`near[seat]` counts, by index, the seat's stones a knight's move away (for placements and
axes won on arrival), `reach[seat]` flags the vacant cells with at least one, and
`movable[seat]` flags the seat's knight moves among all the board's, precomputed one slot
each; all are kept up to date around each cell that changes, so that the placements and
the knight moves are each one C-level compress of their flags. Qualifying stones and the
single group are bit-set tests; throws are walked along the doubles' rays.

A move is a placement's cell index, (MOVE, start, end) or (THROW, start, end) for an
action (precomputed tuples), (REMOVE, action or None) for a turn that removes first, or
"pass". Texts and the JSON state are built only when asked for.
"""

import functools
from itertools import compress

from games.hexgrid import HexHexBoard, cell_tables
from pbm.engine import Engine
from pbm.game import Outcome

WHITE, BLACK = 0, 1
VACANT = -1
COLOURS = ("White", "Black")
PLAIN = ("w", "b")
DOUBLE = ("W", "B")
PIECES = {"w": (WHITE, False), "b": (BLACK, False), "W": (WHITE, True), "B": (BLACK, True)}
# axes on the board that start phase 2 (docs/spec/games/uknight.md §1)
PHASE_TWO_AXES = {5: 4, 6: 6, 7: 8}
AXE_FRIENDS = 3  # own stones a knight's move away that give an arriving stone an axe
MOVE, THROW, REMOVE = 1, 2, 3
KINDS = {MOVE: "move", THROW: "throw"}
PASS = "pass"
REMOVAL = "rem"


@functools.cache
def layout(size: int):
    """(tables, name -> index, knight_moves, first_slot, towards, throws): knight_moves, every
    (MOVE, start, end) of the board in notation order, a slot each, start's from slot
    first_slot[start] on; towards[i], the (start, slot) of every knight move ending on i;
    throws[i], the throws from i ray by ray."""
    tables = cell_tables(HexHexBoard(size))
    knight_moves, first_slot = [], [None] * tables.length
    towards = [[] for _ in range(tables.length)]
    throws = [None] * tables.length
    for start in tables.cells:
        first_slot[start] = len(knight_moves)
        for end in tables.knights[start]:
            towards[end].append((start, len(knight_moves)))
            knight_moves.append((MOVE, start, end))
        throws[start] = tuple(
            tuple((THROW, start, end) for end in ray) for ray in tables.rays[start]
        )
    by_name = {tables.names[index]: index for index in tables.cells}
    towards = [tuple(moves) for moves in towards]
    return tables, by_name, knight_moves, first_slot, towards, throws


def qualifying(tables, own: int, theirs: int) -> list[int]:
    """docs/spec/games/uknight.md §4.1: of the own stones (a bit set), those with no own
    neighbour whose every knight cell holds an opponent piece (theirs, a bit set)."""
    knights = tables.knight_masks
    alone = own & ~tables.adjacent(own)
    return [index for index in tables.indices(alone) if not knights[index] & ~theirs]


class UknightEngine(Engine):
    __slots__ = (
        "options", "tables", "layout", "owner", "vacant", "stones", "doubles", "near", "reach", "movable",
        "seat", "turns", "phase", "passes", "last", "result",
    )  # fmt: skip

    @classmethod
    def from_state(cls, state) -> "UknightEngine":
        engine = object.__new__(cls)
        engine.options = state["options"]
        engine.layout = layout(state["options"]["size"])
        tables, by_name, knight_moves, *_ = engine.layout
        engine.tables = tables
        length = tables.length
        engine.owner = [VACANT] * length
        engine.vacant = bytearray(length)
        for index in tables.cells:
            engine.vacant[index] = 1
        engine.stones, engine.doubles = [0, 0], [0, 0]
        engine.near = [[0] * length, [0] * length]
        engine.reach = [bytearray(length), bytearray(length)]
        engine.movable = [bytearray(len(knight_moves)), bytearray(len(knight_moves))]
        for name, symbol in state["pieces"].items():
            seat, double = PIECES[symbol]
            engine._put(by_name[name], seat, double)
        engine.seat = state["to_move"]
        engine.turns, engine.phase, engine.passes = state["turns"], state["phase"], state["passes"]
        engine.last = state["last"]  # the state's own until a move is played
        engine.result = state["result"]
        return engine

    # -- changing one cell, with the counts and flags around it -------------------------

    def _put(self, index: int, seat: int, double: bool) -> None:
        bit = self.tables.bits[index]
        self.owner[index] = seat
        self.vacant[index] = 0
        self.stones[seat] |= bit
        if double:
            self.doubles[seat] |= bit
        vacant = self.vacant
        knights = self.tables.knights[index]
        near, reach = self.near[seat], self.reach[seat]
        for knight in knights:
            near[knight] += 1
            if vacant[knight]:
                reach[knight] = 1
        self.reach[0][index] = self.reach[1][index] = 0
        _, _, _, first_slot, towards, _ = self.layout
        slot = first_slot[index]
        self.movable[seat][slot : slot + len(knights)] = bytes(map(vacant.__getitem__, knights))
        owner, movable = self.owner, self.movable
        for start, slot in towards[index]:
            if owner[start] != VACANT:
                movable[owner[start]][slot] = 0

    def _take(self, index: int) -> None:
        seat = self.owner[index]
        bit = self.tables.bits[index]
        self.owner[index] = VACANT
        self.vacant[index] = 1
        self.stones[seat] &= ~bit
        self.doubles[seat] &= ~bit
        knights = self.tables.knights[index]
        near, reach = self.near[seat], self.reach[seat]
        for knight in knights:
            near[knight] -= 1
            if not near[knight]:
                reach[knight] = 0
        self.reach[0][index] = self.near[0][index] > 0
        self.reach[1][index] = self.near[1][index] > 0
        _, _, _, first_slot, towards, _ = self.layout
        slot = first_slot[index]
        self.movable[seat][slot : slot + len(knights)] = bytes(len(knights))
        owner, movable = self.owner, self.movable
        for start, slot in towards[index]:
            if owner[start] != VACANT:
                movable[owner[start]][slot] = 1

    # -- the rules ---------------------------------------------------------------------

    def qualifying(self, seat: int) -> list[int]:
        return qualifying(self.tables, self.stones[seat], self.stones[1 - seat])

    def actions(self, seat: int) -> list:
        """The placements (phase 1) or knight moves (phase 2), then the throws
        (docs/spec/games/uknight.md §4)."""
        tables = self.tables
        _, _, knight_moves, _, _, throws = self.layout
        if self.phase == 1:
            moves = list(compress(range(tables.length), self.reach[seat]))
        else:
            moves = list(compress(knight_moves, self.movable[seat]))
        doubles = self.doubles[seat]
        if doubles:
            owner = self.owner
            any_target = self.phase == 2
            their_doubles = self.doubles[1 - seat]
            for start in tables.indices(doubles):
                for ray, moves_along in zip(tables.rays[start], throws[start]):
                    for cell, throw in zip(ray, moves_along):
                        content = owner[cell]
                        if content == VACANT:
                            moves.append(throw)
                        elif content != seat:
                            if any_target or not their_doubles >> cell & 1:
                                moves.append(throw)
                            break
        return moves

    def turns_without_pass(self) -> list:
        """Every legal turn of the seat on move but the pass."""
        if self.result is not None:
            return []
        seat = self.seat
        if self.turns == 0:
            return list(compress(range(self.tables.length), self.reach[seat]))
        moves = self.actions(seat)
        removed = self.qualifying(seat)
        if removed:
            twin = self.copy()
            for index in removed:
                twin._take(index)
            moves.append((REMOVE, None))
            moves += [(REMOVE, action) for action in twin.actions(seat)]
        return moves

    # -- the search contract -----------------------------------------------------------

    def to_move(self):
        return None if self.result is not None else self.seat

    def legal_moves(self):
        if self.result is not None:
            return []
        moves = self.turns_without_pass()
        if self.turns > 0 or not moves:
            moves.append(PASS)
        return moves

    def play(self, move) -> None:
        seat = self.seat
        removed, action = [], move
        if move == PASS:
            action = None
        elif move.__class__ is tuple and move[0] == REMOVE:
            removed = self.qualifying(seat)
            for index in removed:
                self._take(index)
            action = move[1]
        kind = captures = gains_axe = None
        taken = None
        if action is None:
            gains_axe = False
        elif action.__class__ is int:
            kind = "place"
            gains_axe = self.near[seat][action] >= AXE_FRIENDS
            self._put(action, seat, gains_axe)
        else:
            code, start, end = action
            kind = KINDS[code]
            bit = self.tables.bits[start]
            if code == MOVE:
                double = bool(self.doubles[seat] & bit)
                self._take(start)
                gains_axe = not double and self.near[seat][end] >= AXE_FRIENDS
                self._put(end, seat, double or gains_axe)
            else:
                gains_axe = False
                self.doubles[seat] &= ~bit
                content = self.owner[end]
                captures = content != VACANT
                if captures:
                    double = bool(self.doubles[content] & self.tables.bits[end])
                    taken = (DOUBLE if double else PLAIN)[content]
                    self._take(end)
                    self._put(end, seat, double)
                else:
                    self._put(end, seat, False)
        phase_begins = (
            self.phase == 1
            and kind == "place"
            and (self.doubles[0] | self.doubles[1]).bit_count()
            >= PHASE_TWO_AXES[self.options["size"]]
        )
        if phase_begins:
            self.phase = 2
        self.last = (seat, move, captures, removed, kind, gains_axe, taken, phase_begins)
        self.seat = 1 - seat
        self.turns += 1
        self.passes = self.passes + 1 if move == PASS else 0
        self._judge(seat)

    def _judge(self, mover: int) -> None:
        """docs/spec/games/uknight.md §6: the mover wins if united, else the opponent if united;
        two passes draw."""
        other = 1 - mover
        for seat, by_whom in ((mover, ""), (other, f" after {COLOURS[mover]}'s turn")):
            if self.tables.united(self.stones[seat]):
                self.result = {
                    "winners": [seat],
                    "reason": f"{COLOURS[seat]}'s stones form a single group{by_whom}",
                }
                return
        if self.passes >= 2:
            self.result = {"winners": [], "reason": "two full passes in a row"}

    def copy(self) -> "UknightEngine":
        twin = object.__new__(UknightEngine)
        twin.options, twin.tables, twin.layout = self.options, self.tables, self.layout
        twin.owner = self.owner[:]
        twin.vacant = self.vacant[:]
        twin.stones, twin.doubles = self.stones[:], self.doubles[:]
        twin.near = [self.near[0][:], self.near[1][:]]
        twin.reach = [self.reach[0][:], self.reach[1][:]]
        twin.movable = [self.movable[0][:], self.movable[1][:]]
        twin.seat, twin.turns, twin.phase = self.seat, self.turns, self.phase
        twin.passes, twin.last, twin.result = self.passes, self.last, self.result
        return twin

    def outcome(self):
        if self.result is None:
            return None
        return Outcome(winners=tuple(self.result["winners"]), reason=self.result["reason"])

    def move_text(self, move) -> str:
        if move == PASS:
            return PASS
        if move.__class__ is tuple and move[0] == REMOVE:
            if move[1] is None:
                return REMOVAL
            return f"{REMOVAL},{self.move_text(move[1])}"
        if move.__class__ is int:
            return self.tables.names[move]
        # Against the opponent only: after a removal a throw may land where an own stone was.
        return self._action_text(move, self.owner[move[2]] == 1 - self.seat)

    def _action_text(self, action, captures: bool) -> str:
        names = self.tables.names
        if action.__class__ is int:
            return names[action]
        _, start, end = action
        return f"{names[start]}{'x' if captures else '-'}{names[end]}"

    def state(self) -> dict:
        owner, doubles, names = self.owner, self.doubles, self.tables.names
        pieces = {}
        for index in self.tables.cells:
            seat = owner[index]
            if seat != VACANT:
                double = doubles[seat] >> index & 1
                pieces[names[index]] = (DOUBLE if double else PLAIN)[seat]
        return {
            "options": self.options,
            "pieces": pieces,
            "to_move": self.seat,
            "turns": self.turns,
            "phase": self.phase,
            "passes": self.passes,
            "last": self._last_json(),
            "result": self.result,
        }

    def _last_json(self):
        if self.last is None or self.last.__class__ is dict:
            return self.last
        seat, move, captures, removed, kind, gains_axe, taken, phase_begins = self.last
        names = self.tables.names
        if move == PASS:
            text, action = PASS, None
        elif move.__class__ is tuple and move[0] == REMOVE:
            action = move[1]
            text = REMOVAL if action is None else f"{REMOVAL},{self._action_text(action, captures)}"
        else:
            text, action = self._action_text(move, captures), move
        if action is None:
            cells = []
        elif action.__class__ is int:
            cells = [names[action]]
        else:
            cells = [names[action[1]], names[action[2]]]
        cell_at = self.tables.cell_at
        return {
            "seat": seat,
            "text": text,
            "removed": self.tables.board.names(cell_at[index] for index in removed),
            "kind": kind,
            "cells": cells,
            "axe": gains_axe,
            "taken": taken,
            "phase_begins": phase_begins,
        }
