"""Uknight (Christian Freeling, 2021): unite your stones, placed and moved by knight's moves.

Spec: docs/spec/games/uknight.md, on the hexhex geometry of docs/spec/games/hexgrid.md
(games/hexgrid.py).

The state keeps the pieces as {cell name: symbol}, "w"/"b" a plain stone and "W"/"B" a
double (a stone with an axe), so that stored states read like the board. Seat 0 is
White and always moves first; the pie rule's swap only exchanges who holds the seats.
Every rule goes through the engine of games/uknight/engine.py; UknightPieces serves the move
parser's checks and messages and the picture.
"""

import functools
import re
import textwrap
from typing import NamedTuple

from games.hexgrid import (
    Cell,
    HexHexBoard,
    cell_tables,
    hex_picture,
    is_knight_move,
    line_direction,
    step,
)
from games.uknight.engine import (
    BLACK,
    COLOURS,
    DOUBLE,
    MOVE,
    PASS,
    PHASE_TWO_AXES,
    PLAIN,
    REMOVAL,
    REMOVE,
    THROW,
    WHITE,
    UknightEngine,
    qualifying,
)
from pbm import drawing, hookimpl
from pbm.engine import StateEngines
from pbm.game import BaseGame, MoveError, Number, Outcome

OWNER = {"w": WHITE, "W": WHITE, "b": BLACK, "B": BLACK}
SIZES = (5, 6, 7)
DEFAULT_SIZE = 6
LINE_WIDTH = 76
# Pictures: White's pieces white, Black's black, each with its symbol of the text board (w b
# a stone, drawn as a disc; W B a double, a stone with an axe, a square).
PIECE_FILLS = (drawing.WHITE, drawing.BLACK)
LETTER_COLOURS = (drawing.INK, drawing.WHITE)

REMOVAL_WORD = r"(?:remove|rem)"
SEPARATOR = r"[,;+/&]"
CELL_TEXT = r"[a-z]+\d+"
PAIR_RE = re.compile(rf"({CELL_TEXT})([-x*])({CELL_TEXT})", re.IGNORECASE)
CELL_RE = re.compile(CELL_TEXT, re.IGNORECASE)
LEADING_REMOVAL_RE = re.compile(rf"{REMOVAL_WORD}{SEPARATOR}?(.*)", re.IGNORECASE)
LATE_REMOVAL_RE = re.compile(rf"(?:.*{SEPARATOR})?{REMOVAL_WORD}{SEPARATOR}?", re.IGNORECASE)
NOTATION = (
    "write a cell to place a stone (E5), FROM-TO for a knight move (H7-E5) or an axe "
    "throw (C3-E5, C3xF6), rem to remove your qualifying stones, or rem,E5 to remove "
    "them and then act"
)
FIRST_TURN = (
    "the first turn must be a placement: put a White stone a knight's move from one of "
    "your stones, e.g. E3 (a knight's move from B1)"
)


class Action(NamedTuple):
    """The action part of a turn: a placement (start None), a knight move or a throw."""

    kind: str  # "place", "move" or "throw"
    end: Cell
    start: Cell | None = None
    captures: bool = False


class Turn(NamedTuple):
    removes: bool
    action: Action | None


@functools.cache
def cells_by_name(size) -> dict[str, Cell]:
    """Canonical name to cell, for reading stored states without parsing each name."""
    board = HexHexBoard(size)
    return {board.name(cell): cell for cell in board.cells}


class UknightPieces:
    """The pieces of a state by axial cell, with the rules of docs/spec/games/uknight.md §4 for one
    seat."""

    def __init__(self, state):
        size = state["options"]["size"]
        self.board = HexHexBoard(size)
        self.phase = state["phase"]
        cell_of = cells_by_name(size)
        self.pieces: dict[Cell, str] = {
            cell_of[name]: symbol for name, symbol in state["pieces"].items()
        }

    def stones(self, seat) -> set[Cell]:
        return {cell for cell, symbol in self.pieces.items() if OWNER[symbol] == seat}

    def axes(self, seat=None) -> int:
        return sum(
            symbol.isupper() and (seat is None or OWNER[symbol] == seat)
            for symbol in self.pieces.values()
        )

    def qualifying(self, seat) -> list[Cell]:
        """docs/spec/games/uknight.md §4.1, in notation order (the engine's test)."""
        tables = cell_tables(self.board)
        own, theirs = self._bits(seat), self._bits(1 - seat)
        return sorted(
            (tables.cell_at[index] for index in qualifying(tables, own, theirs)),
            key=self.board.sort_key,
        )

    def _bits(self, seat) -> int:
        index = cell_tables(self.board).index
        return sum(1 << index[cell] for cell in self.stones(seat))

    def without(self, cells) -> "UknightPieces":
        trimmed = object.__new__(UknightPieces)
        trimmed.board, trimmed.phase = self.board, self.phase
        trimmed.pieces = {cell: s for cell, s in self.pieces.items() if cell not in cells}
        return trimmed

    def knight_friends(self, cell, seat) -> int:
        pieces = self.pieces
        return sum(
            target in pieces and OWNER[pieces[target]] == seat
            for target in self.board.knights[cell]
        )

    def united(self, seat) -> bool:
        """docs/spec/games/uknight.md §2: at least one stone, and all of them in a single group."""
        return cell_tables(self.board).united(self._bits(seat))


class Uknight(BaseGame):
    name = "uknight"
    display_name = "Uknight"
    same_view_for_all = True  # no hidden information: one board for every reader
    player_names = COLOURS
    seat_symbols = PLAIN
    min_players = 2
    max_players = 2
    swap_after = 1

    options = (Number("size", DEFAULT_SIZE, "board base", choices=SIZES),)

    def __init__(self):
        self._engines = StateEngines(UknightEngine.from_state)

    # -- state -------------------------------------------------------------------------

    def initial_state(self, options, players, seed):
        board = HexHexBoard(options["size"])
        corners = board.corners
        pieces = {}
        for index, corner in enumerate(corners):
            following, previous = corners[(index + 1) % 6], corners[index - 1]
            pieces[board.name(self._towards(corner, following))] = PLAIN[WHITE]
            pieces[board.name(self._towards(corner, previous))] = PLAIN[BLACK]
        return {
            "options": dict(options),
            "pieces": pieces,
            "to_move": WHITE,
            "turns": 0,
            "phase": 1,
            "passes": 0,
            "last": None,
            "result": None,
        }

    @staticmethod
    def _towards(corner, other) -> Cell:
        return step(corner, line_direction(corner, other))

    def to_move(self, state):
        return None if state["result"] is not None else state["to_move"]

    def outcome(self, state):
        result = state["result"]
        if result is None:
            return None
        return Outcome(winners=tuple(result["winners"]), reason=result["reason"])

    def can_pass(self, state, seat):
        return state["result"] is None and state["turns"] > 0

    def pass_refusal(self, state, seat):
        if state["turns"] == 0:
            return "The first turn must be a placement: White cannot pass on move 1"
        return None

    def forced_move(self, state):
        """A player with no removal and no action can only pass (a full pass)."""
        if self.to_move(state) is None or self._engines.of(state).turns_without_pass():
            return None
        return "pass"

    # -- reading a move ----------------------------------------------------------------

    def parse_move(self, state, seat, text):
        turn = self._read(state, seat, text)
        return self._text(HexHexBoard(state["options"]["size"]), turn)

    def _read(self, state, seat, text) -> Turn:
        """The turn a move text asks for, checked against the rules, or a MoveError."""

        def refuse(reason):
            return MoveError(f'Invalid move "{text}": {reason}')

        if self.to_move(state) is None:
            raise refuse("the game is over")
        if self.to_move(state) != seat:
            raise refuse(f"it is {COLOURS[state['to_move']]}'s turn")
        compact = "".join(text.split())
        leading = LEADING_REMOVAL_RE.fullmatch(compact)
        removes = leading is not None
        rest = leading.group(1) if removes else compact
        if LATE_REMOVAL_RE.fullmatch(rest):
            if removes:
                raise refuse("write rem once: it takes every qualifying stone off at once")
            raise refuse("a removal can only come before the action; write it first, e.g. rem,E5")
        if removes and rest.lower() in ("", "pass"):
            return self._checked(state, seat, Turn(True, None), refuse)
        board = HexHexBoard(state["options"]["size"])
        pair = PAIR_RE.fullmatch(rest)
        if pair:
            start = self._cell(board, pair.group(1), refuse)
            end = self._cell(board, pair.group(3), refuse)
            return self._checked(state, seat, Turn(removes, self._pair(start, end)), refuse)
        if CELL_RE.fullmatch(rest):
            action = Action("place", self._cell(board, rest, refuse))
            return self._checked(state, seat, Turn(removes, action), refuse)
        if len([part for part in re.split(SEPARATOR, rest) if part]) > 1:
            raise refuse(f"a turn holds at most a removal and one action; {NOTATION}")
        raise refuse(NOTATION)

    @staticmethod
    def _cell(board, text, refuse) -> Cell:
        try:
            return board.parse(text)
        except ValueError as error:
            raise refuse(str(error)) from None

    @staticmethod
    def _pair(start, end) -> Action:
        """A FROM-TO pair as written; which kind it is depends on the geometry alone."""
        if is_knight_move(start, end):
            return Action("move", end, start)
        return Action("throw", end, start)

    def _checked(self, state, seat, turn: Turn, refuse) -> Turn:
        """The turn with the capture flag settled, or the MoveError saying why it is illegal."""
        piece_map = UknightPieces(state)
        board, colour = piece_map.board, COLOURS[seat]
        placing_only = not turn.removes and turn.action is not None and turn.action.kind == "place"
        if state["turns"] == 0 and not placing_only:
            raise refuse(FIRST_TURN)
        removed = []
        if turn.removes:
            removed = piece_map.qualifying(seat)
            if not removed:
                raise refuse(
                    f"no {colour} stone qualifies for removal: a stone qualifies when no "
                    f"{colour} stone is next to it and every knight cell of it holds a "
                    f"{COLOURS[1 - seat]} piece"
                )
            piece_map = piece_map.without(removed)
        action = turn.action
        if action is None:
            return turn
        if action.start is not None and action.start in removed:
            raise refuse(
                f"rem takes your stone on {board.name(action.start)} off the board before "
                "the action"
            )
        if action.kind == "place":
            self._check_placement(piece_map, seat, action.end, refuse)
            return turn
        if action.kind == "move":
            self._check_knight_move(piece_map, seat, action, refuse)
            return turn
        return Turn(turn.removes, self._check_throw(piece_map, seat, action, refuse))

    def _check_placement(self, piece_map, seat, cell, refuse):
        board, name = piece_map.board, piece_map.board.name(cell)
        if piece_map.phase == 2:
            raise refuse(
                "placing is over in phase 2: move a stone a knight's move (e.g. H7-E5) or "
                "throw an axe (e.g. C3xF6)"
            )
        if cell in piece_map.pieces:
            raise refuse(f"{name} is not vacant: it holds {self._piece(piece_map, cell)}")
        if not piece_map.knight_friends(cell, seat):
            raise refuse(
                f"{name} is not a knight's move from any {COLOURS[seat]} stone; place a "
                "stone a knight's move (two steps in one direction, then one step turning "
                f"60 degrees) from one of your stones: from {name} that means "
                f"{' '.join(board.names(board.knights[cell]))}"
            )

    def _check_knight_move(self, piece_map, seat, action, refuse):
        start, end = piece_map.board.name(action.start), piece_map.board.name(action.end)
        self._check_own_stone(piece_map, seat, action.start, refuse)
        if piece_map.phase == 1:
            raise refuse(
                f"{start}-{end} is a knight move, and stones move only in phase 2, which "
                f"begins when {PHASE_TWO_AXES[piece_map.board.size]} axes are on the board; "
                "in phase 1 place a stone (e.g. E5) or throw an axe along a line (e.g. C3xF6)"
            )
        if action.end in piece_map.pieces:
            raise refuse(
                f"{end} is not vacant: it holds {self._piece(piece_map, action.end)}, and a "
                "knight move never captures"
            )

    def _check_throw(self, piece_map, seat, action, refuse) -> Action:
        board, pieces = piece_map.board, piece_map.pieces
        start, end = board.name(action.start), board.name(action.end)
        if action.start == action.end:
            raise refuse(f"FROM and TO are both {start}; {NOTATION}")
        self._check_own_stone(piece_map, seat, action.start, refuse)
        direction = line_direction(action.start, action.end)
        if direction is None:
            raise refuse(
                f"{end} is neither a knight's move from {start} nor on a line through it; "
                "a knight move goes two steps in one direction and one step turning 60 "
                "degrees, a throw goes straight along one of the three lines"
            )
        if pieces[action.start].islower():
            raise refuse(
                f"the {COLOURS[seat]} stone on {start} has no axe: only a double "
                f"({DOUBLE[seat]}) can throw"
            )
        for cell in board.rays[action.start][direction]:
            symbol = pieces.get(cell)
            if cell == action.end:
                break
            if symbol is not None and OWNER[symbol] != seat:
                raise refuse(
                    f"the path is blocked: the axe stops at the first opponent piece, "
                    f"{self._piece(piece_map, cell)} on {board.name(cell)}, and cannot go past it"
                )
        target = pieces.get(action.end)
        if target is None:
            return Action("throw", action.end, action.start)
        if OWNER[target] == seat:
            raise refuse(
                f"the axe cannot stop on your own {self._kind(target)} on {end}: it passes "
                "over your pieces and stops on a vacant cell or an opponent piece"
            )
        if target.isupper() and piece_map.phase == 1:
            raise refuse(
                f"in phase 1 an axe cannot take a double ({self._piece(piece_map, action.end)} "
                f"on {end}); doubles can be taken from phase 2 on, which begins when "
                f"{PHASE_TWO_AXES[board.size]} axes are on the board"
            )
        return Action("throw", action.end, action.start, captures=True)

    @staticmethod
    def _check_own_stone(piece_map, seat, cell, refuse):
        symbol, name = piece_map.pieces.get(cell), piece_map.board.name(cell)
        if symbol is None:
            raise refuse(f"there is no {COLOURS[seat]} stone on {name}")
        if OWNER[symbol] != seat:
            raise refuse(
                f"{name} holds {Uknight._piece(piece_map, cell)}, not a {COLOURS[seat]} stone"
            )

    @staticmethod
    def _kind(symbol) -> str:
        return "double" if symbol.isupper() else "stone"

    @staticmethod
    def _piece(piece_map, cell) -> str:
        symbol = piece_map.pieces[cell]
        return f"a {COLOURS[OWNER[symbol]]} {Uknight._kind(symbol)}"

    @staticmethod
    def _text(board, turn: Turn) -> str:
        parts = [REMOVAL] if turn.removes else []
        if turn.action is not None:
            parts.append(Uknight._action_text(board.name, turn.action))
        return ",".join(parts)

    @staticmethod
    def _action_text(name, action: Action) -> str:
        if action.kind == "place":
            return name(action.end)
        joint = "x" if action.captures else "-"
        return f"{name(action.start)}{joint}{name(action.end)}"

    # -- listing and playing moves, through the engine --------------------------------

    def engine(self, state) -> UknightEngine:
        return self._engines.fresh(state)

    def legal_moves(self, state, seat):
        if self.to_move(state) != seat:
            return []
        engine = self._engines.of(state)
        return [engine.move_text(move) for move in engine.turns_without_pass()]

    def apply_move(self, state, seat, move):
        engine = self._engines.fresh(state)
        engine.seat = seat
        if move == "pass":
            engine.play(PASS)
        else:
            engine.play(self._engine_move(engine, self._read(state, seat, move)))
        new = engine.state()
        new["pieces"] = _in_stored_order(state["pieces"], new["pieces"], new["last"]["removed"])
        self._engines.keep(new, engine)
        return new

    @staticmethod
    def _engine_move(engine: UknightEngine, turn: Turn):
        index = engine.tables.index
        action = turn.action
        if action is not None:
            if action.kind == "place":
                action = index[action.end]
            else:
                code = MOVE if action.kind == "move" else THROW
                action = (code, index[action.start], index[action.end])
        return (REMOVE, action) if turn.removes else action

    # -- display -----------------------------------------------------------------------

    def status_line(self, state) -> str:
        piece_map = UknightPieces(state)
        counts = f"White {piece_map.axes(WHITE)}, Black {piece_map.axes(BLACK)}"
        threshold = PHASE_TWO_AXES[piece_map.board.size]
        if state["phase"] == 1:
            return f"Phase 1, axes {piece_map.axes()} of {threshold} ({counts})"
        return f"Phase 2 (began with {threshold} axes on the board), axes {piece_map.axes()} ({counts})"

    def picture(self, state) -> str:
        piece_map = UknightPieces(state)
        last = state["last"]
        marks = [] if last is None else [piece_map.board.parse(name) for name in last["cells"]]
        return piece_map.board.draw(piece_map.pieces, marks=marks)

    def winning_cells(self, state):
        """The winner's stones, all in one group (docs/spec/games/uknight.md §6)."""
        outcome = self.outcome(state)
        if outcome is None or not outcome.winners:
            return ()
        piece_map = UknightPieces(state)
        return tuple(piece_map.board.names(piece_map.stones(outcome.winners[0])))

    def drawing(self, state, perspective, last_move):
        """Open information: every reader sees the same picture. The legend carries the
        status line of the text board (phase and axes); the last move is the state's own,
        as the text board marks it (a swap keeps it)."""
        piece_map = UknightPieces(state)
        picture = hex_picture(piece_map.board)
        radius = picture.piece_radius
        pieces = []
        for cell, symbol in piece_map.pieces.items():
            seat = OWNER[symbol]
            shape = "square" if symbol in DOUBLE else "disc"
            x, y = picture.centres[cell]
            pieces.append(
                drawing.Piece(x, y, radius, PIECE_FILLS[seat], symbol, LETTER_COLOURS[seat], shape)
            )
        last = state["last"]
        marked = [] if last is None else [piece_map.board.parse(name) for name in last["cells"]]
        united = [piece_map.board.parse(name) for name in self.winning_cells(state)]
        won = "; green: the united stones" if united else ""
        return drawing.Drawing(
            backdrop=picture.backdrop,
            pieces=tuple(pieces),
            highlights=tuple(drawing.highlight(picture.hexagons[cell]) for cell in marked)
            + tuple(drawing.winning(picture.hexagons[cell]) for cell in united),
            legend="w b: White, Black stone (disc); W B: White, Black double, a stone with an "
            f"axe (square); yellow cells: last move{won}\n{self.status_line(state)}",
        )

    def report_lines(self, state) -> list[str]:
        """What the last turn did (docs/spec/games/uknight.md §8: removed stones, new doubles),
        wrapped to fit."""
        last = state["last"]
        if last is None:
            return []
        colour = COLOURS[last["seat"]]
        if last["text"] == "pass":
            return [f"Last move: {colour} passed (a full pass)"]
        deeds = []
        if last["removed"]:
            deeds.append(f"removed {self._listed(last['removed'])}")
        if last["kind"] is not None:
            deeds.append(self._deed(last))
        lines = textwrap.wrap(
            f"Last move: {colour} {last['text']} ({'; then '.join(deeds)})", LINE_WIDTH
        )
        if last["phase_begins"]:
            lines.append(
                f"{PHASE_TWO_AXES[state['options']['size']]} axes are on the board: phase 2 "
                "begins, placing is over."
            )
        return lines

    def _deed(self, last) -> str:
        axe = ", which became a double" if last["axe"] else ""
        if last["kind"] == "place":
            return f"placed {last['cells'][0]}{axe}"
        start, end = last["cells"]
        if last["kind"] == "move":
            return f"moved {start}-{end}{axe}"
        taken = last["taken"]
        if taken is None:
            return f"threw the axe from {start} to {end}"
        return (
            f"threw the axe from {start} and took {COLOURS[OWNER[taken]]}'s "
            f"{self._kind(taken)} on {end}"
        )

    @staticmethod
    def _listed(names) -> str:
        return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _in_stored_order(old: dict, new: dict, removed: list[str]) -> dict:
    """new's pieces in the key order the stored states have always had: the pieces kept in
    their places, a piece arriving on a cell vacant before the turn last."""
    kept = {name: new[name] for name in old if name in new and name not in removed}
    kept.update(new)
    return kept


@hookimpl
def register_games(register):
    register(Uknight())


@hookimpl
def register_robots(register):
    # deferred: only robot work needs the search, never a mail about the game
    from games.uknight.robot import KNOWLEDGE
    from pbm.robots import Robot

    register(
        Robot(
            game="uknight",
            name="mcts",
            description="Monte Carlo tree search over the estimated distance to unification",
            knowledge=KNOWLEDGE,
        )
    )
