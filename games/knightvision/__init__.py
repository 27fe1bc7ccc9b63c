"""KnightVision (Christian Freeling, 2021): Hex with knight's-move placement and axes.

Rules: docs/spec/games/knightvision.md; geometry and notation: games/hexgrid.py.

The state stores the board as one string per row (row 1 first), one character per cell:
"." vacant, "w"/"b" a white/black knight, "W"/"B" a white/black stack (a knight carrying
an axe). Seat 0 is White and seat 1 Black for the whole game: the pie rule's swap is a seat
swap done by the core, so the state never changes on a swap. "free" lists the seats whose
first placement (free: any vacant cell, a single knight) is still to come; "last" is the
canonical text of the last move or "pass" (None at the start); "winner" is the winning seat
(None while the game goes on) and "reason" says how it was won.
"""

import re
from collections import Counter

from games.hexgrid import Cell, RhombusBoard, cells_between, line_direction
from pbm import hookimpl
from pbm.game import BaseGame, MoveError, Number

WHITE, BLACK = 0, 1
COLOURS = ("White", "Black")
KNIGHT_SYMBOLS = ("w", "b")
STACK_SYMBOLS = ("W", "B")
VACANT = "."
OWNER = {"w": WHITE, "W": WHITE, "b": BLACK, "B": BLACK}
MIN_SIZE, MAX_SIZE, DEFAULT_SIZE = 9, 14, 11
# friendly pieces at a knight's move needed to place a stack (docs/spec/games/knightvision.md §4.1)
STACK_THRESHOLD = 3

CELL = r"([a-z][0-9]+)"  # one letter: columns go up to n, boards up to 14x14
PLACEMENT_RE = re.compile(CELL + r"(\+?)")
THROW_RE = re.compile(CELL + r"([-x])" + CELL)
NOTATION = (
    "write a cell to place a knight (e5), the cell and + to place a stack (e5+), or a "
    "stack's cell, - or x, and the landing cell to throw its axe (e5-e9, e5xe8)"
)


def _joined(words: list[str]) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


class Position:
    """The pieces of a state by cell, with the placement and throw rules of
    docs/spec/games/knightvision.md §4."""

    def __init__(self, state):
        self.board = RhombusBoard(state["options"]["size"])
        self.pieces: dict[Cell, str] = {
            (q, r): symbol
            for r, row in enumerate(state["rows"])
            for q, symbol in enumerate(row)
            if symbol != VACANT
        }

    def describe(self, cell: Cell) -> str:
        """e.g. "Black's stack on e7"."""
        symbol = self.pieces[cell]
        kind = "stack" if symbol in STACK_SYMBOLS else "knight"
        return f"{COLOURS[OWNER[symbol]]}'s {kind} on {self.board.name(cell)}"

    def own(self, seat: int) -> list[Cell]:
        return [cell for cell, symbol in self.pieces.items() if OWNER[symbol] == seat]

    def stacks(self, seat: int) -> list[Cell]:
        symbol = STACK_SYMBOLS[seat]
        return sorted(cell for cell, owned in self.pieces.items() if owned == symbol)

    def knight_counts(self, seat: int) -> Counter:
        """For every vacant cell with any, the number of the seat's pieces at a knight's move."""
        counts = Counter()
        knights = self.board.knights
        for cell in self.own(seat):
            counts.update(knights[cell])
        for cell in self.pieces:
            counts.pop(cell, None)
        return counts

    def landings(self, stack: Cell, seat: int):
        """(landing cell, is a capture) for every legal throw of the axe on stack
        (docs/spec/games/knightvision.md §4.2)."""
        for ray in self.board.rays[stack]:
            for cell in ray:
                symbol = self.pieces.get(cell)
                if symbol is None:
                    yield cell, False
                elif OWNER[symbol] != seat:
                    yield cell, True
                    break

    def has_action(self, seat: int, free: bool) -> bool:
        vacant = len(self.pieces) < len(self.board)
        if vacant and (free or self.knight_counts(seat)):
            return True
        return any(
            next(self.landings(stack, seat), None) is not None for stack in self.stacks(seat)
        )

    def has_chain(self, seat: int) -> bool:
        board = self.board
        edges = (board.top, board.bottom) if seat == WHITE else (board.left, board.right)
        return board.joins(self.own(seat), *edges)


class KnightVision(BaseGame):
    name = "knightvision"
    display_name = "KnightVision"
    player_names = COLOURS
    seat_symbols = KNIGHT_SYMBOLS
    min_players = 2
    max_players = 2
    swap_after = 1
    # After a swap seat 1 moves twice in a row (the swap, then Black's first placement), so
    # the core's two-column move list would put Black's moves under White from then on;
    # one line per ply names the side and the player of every move.
    move_layout = "lines"

    options = (Number("size", DEFAULT_SIZE, "board size", low=MIN_SIZE, high=MAX_SIZE),)

    # -- state ---------------------------------------------------------------------

    def initial_state(self, options, players, seed):
        n = options["size"]
        return {
            "options": options,
            "rows": [VACANT * n] * n,
            "to_move": WHITE,
            "free": [WHITE, BLACK],
            "last": None,
            "winner": None,
            "reason": "",
        }

    def pass_refusal(self, state, seat):
        return (
            "KnightVision has no voluntary pass: you pass only when no placement or throw is "
            "legal, and the server then passes for you"
        )

    def forced_move(self, state):
        seat = self.to_move(state)
        if seat is None or Position(state).has_action(seat, seat in state["free"]):
            return None
        return "pass"

    # -- moves ---------------------------------------------------------------------

    def legal_moves(self, state, seat):
        if self.to_move(state) != seat:
            return []
        position = Position(state)
        name = position.board.name
        if seat in state["free"]:
            return [name(cell) for cell in position.board.cells if cell not in position.pieces]
        counts = position.knight_counts(seat)
        moves = []
        for cell in sorted(counts):
            moves.append(name(cell))
            if counts[cell] >= STACK_THRESHOLD:
                moves.append(name(cell) + "+")
        for stack in position.stacks(seat):
            start = name(stack)
            moves.extend(
                f"{start}{'x' if capture else '-'}{name(cell)}"
                for cell, capture in position.landings(stack, seat)
            )
        return moves

    def parse_move(self, state, seat, text):
        position = Position(state)
        compact = "".join(text.split()).lower()
        placement = PLACEMENT_RE.fullmatch(compact)
        throw = THROW_RE.fullmatch(compact)
        if placement is None and throw is None:
            raise MoveError(f'Invalid move "{text}": {NOTATION}')

        def cell_of(written: str) -> Cell:
            try:
                return position.board.parse(written)
            except ValueError as error:
                raise MoveError(f'Invalid move "{text}": {error}') from None

        if placement is not None:
            target = cell_of(placement.group(1))
            return self._placement(state, position, seat, target, stack=bool(placement.group(2)))
        start, landing = cell_of(throw.group(1)), cell_of(throw.group(3))
        return self._throw(state, position, seat, start, landing, throw.group(2))

    def _placement(self, state, position, seat, target, stack) -> str:
        name = position.board.name(target)
        canonical = name + ("+" if stack else "")

        def refuse(reason):
            return MoveError(f'Invalid move "{canonical}": {reason}')

        if target in position.pieces:
            raise refuse(f"{name} is not vacant: it holds {position.describe(target)}")
        if seat in state["free"]:
            if stack:
                raise refuse(
                    f"your first placement is free but always a single knight; write {name}"
                )
            return canonical
        friends = [
            cell
            for cell in position.board.knights[target]
            if OWNER.get(position.pieces.get(cell)) == seat
        ]
        if not friends:
            knight_cells = _joined(position.board.names(position.board.knights[target]))
            raise refuse(
                f"{name} is not a knight's move from any of your pieces: none of its knight "
                f"cells ({knight_cells}) holds a {COLOURS[seat]} piece. A placement must be "
                "two steps along a line and one step at 60 degrees from one of your pieces"
            )
        if stack and len(friends) < STACK_THRESHOLD:
            at = _joined(position.board.names(friends))
            raise refuse(
                f"a stack needs three of your pieces at a knight's move, and {name} has "
                f"{len(friends)} ({at}); write {name} to place a knight"
            )
        return canonical

    def _throw(self, state, position, seat, start, landing, separator) -> str:
        name = position.board.name
        written = f"{name(start)}{separator}{name(landing)}"

        def refuse(reason):
            return MoveError(f'Invalid move "{written}": {reason}')

        if seat in state["free"]:
            raise refuse(
                "you have no stack yet: your first move is the free placement of a single "
                "knight on any vacant cell, e.g. e5"
            )
        symbol = position.pieces.get(start)
        if symbol != STACK_SYMBOLS[seat]:
            if symbol is None:
                raise refuse(f"there is no stack on {name(start)}")
            raise refuse(
                f"only one of your stacks can throw an axe, and {name(start)} holds "
                f"{position.describe(start)}"
            )
        direction = line_direction(start, landing)
        if direction is None:
            raise refuse(
                "the landing cell must be on one line with the stack: an axe flies along a "
                "row (e5-h5), a column (e5-e9) or the third line, where the letter goes up "
                "as the number goes down (e5-g3)"
            )
        for cell in cells_between(start, landing):
            symbol = position.pieces.get(cell)
            if symbol is not None and OWNER[symbol] != seat:
                raise refuse(
                    f"the axe cannot pass {position.describe(cell)}; it can capture it with "
                    f"{name(start)}x{name(cell)}"
                )
        symbol = position.pieces.get(landing)
        if symbol is None:
            return f"{name(start)}-{name(landing)}"
        if OWNER[symbol] == seat:
            raise refuse(
                f"the axe flies over your own pieces but cannot land on them, and "
                f"{name(landing)} holds {position.describe(landing)}"
            )
        return f"{name(start)}x{name(landing)}"

    def apply_move(self, state, seat, move):
        new = dict(state, to_move=1 - seat, last=move)
        if move != "pass":
            board = RhombusBoard(state["options"]["size"])
            rows = list(state["rows"])

            def put(cell: Cell, symbol: str) -> None:
                q, r = cell
                rows[r] = rows[r][:q] + symbol + rows[r][q + 1 :]

            throw = THROW_RE.fullmatch(move)
            if throw is not None:
                put(board.parse(throw.group(1)), KNIGHT_SYMBOLS[seat])
                put(board.parse(throw.group(3)), KNIGHT_SYMBOLS[seat])
            else:
                placement = PLACEMENT_RE.fullmatch(move)
                symbols = STACK_SYMBOLS if placement.group(2) else KNIGHT_SYMBOLS
                put(board.parse(placement.group(1)), symbols[seat])
            new["rows"] = rows
            new["free"] = [other for other in state["free"] if other != seat]
        self._judge(new)
        return new

    def _judge(self, state):
        """docs/spec/games/knightvision.md §5: only the player now to move can win, by a chain that
        survived a turn."""
        seat = state["to_move"]
        if Position(state).has_chain(seat):
            edges = "top and bottom" if seat == WHITE else "left and right"
            state["winner"] = seat
            state["reason"] = f"{COLOURS[seat]}'s chain joins the {edges} edges"

    # -- display ---------------------------------------------------------------------

    def picture(self, state) -> str:
        """The Hex-board drawing with the cells of the last move in brackets."""
        position = Position(state)
        last = state["last"]
        written = [] if last in (None, "pass") else re.findall(CELL, last)
        marks = [position.board.parse(name) for name in written]
        return position.board.draw(position.pieces, marks=marks)

    @staticmethod
    def last_column(state) -> str:
        return chr(ord("a") + state["options"]["size"] - 1)

    def last_mover(self, state) -> str:
        return COLOURS[1 - state["to_move"]]


@hookimpl
def register_games(register):
    register(KnightVision())


@hookimpl
def register_robots(register):
    # deferred: only robot work needs the search, never a mail about the game
    from pbm.robots import Robot

    register(
        Robot(
            game="knightvision",
            name="mcts",
            description="Monte Carlo tree search with random playouts, which suit a connection game",
        )
    )
