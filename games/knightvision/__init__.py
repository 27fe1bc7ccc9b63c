"""KnightVision (Christian Freeling, 2021): Hex with knight's-move placement and axes.

Rules: docs/spec/games/knightvision.md; geometry and notation: games/hexgrid.py.

The state stores the board as one string per row (row 1 first), one character per cell:
"." vacant, "w"/"b" a white/black knight, "W"/"B" a white/black stack (a knight carrying
an axe). Seat 0 is White and seat 1 Black for the whole game: the pie rule's swap is a seat
swap done by the core, so the state never changes on a swap. "free" lists the seats whose
first placement (free: any vacant cell, a single knight) is still to come; "last" is the
canonical text of the last move or "pass" (None at the start); "winner" is the winning seat
(None while the game goes on) and "reason" says how it was won. Every rule goes through
the engine of games/knightvision/engine.py; KnightVisionPieces serves the move parser's messages and
the picture.
"""

import re

from games.hexgrid import Cell, RhombusBoard, cells_between, hex_picture, line_direction
from games.knightvision.engine import STACK_THRESHOLD, KnightVisionEngine
from pbm import drawing, hookimpl
from pbm.engine import StateEngines
from pbm.game import BaseGame, MoveError, Number

WHITE, BLACK = 0, 1
COLOURS = ("White", "Black")
KNIGHT_SYMBOLS = ("w", "b")
STACK_SYMBOLS = ("W", "B")
VACANT = "."
OWNER = {"w": WHITE, "W": WHITE, "b": BLACK, "B": BLACK}
MIN_SIZE, MAX_SIZE, DEFAULT_SIZE = 9, 14, 11
# Pictures: White's pieces white, Black's black, each with its symbol of the text board (w b
# a knight, drawn as a disc; W B a stack, a square), so that picture and text agree. White's
# edges are drawn grey (white would not show), Black's black.
PIECE_FILLS = (drawing.WHITE, drawing.BLACK)
LETTER_COLOURS = (drawing.INK, drawing.WHITE)
EDGE_COLOURS = (drawing.GREY, drawing.BLACK, drawing.GREY, drawing.BLACK)  # top right bottom left

CELL = r"([a-z][0-9]+)"  # one letter: columns go up to n, boards up to 14x14
PLACEMENT_RE = re.compile(CELL + r"(\+?)")
THROW_RE = re.compile(CELL + r"([-x])" + CELL)
NOTATION = (
    "write a cell to place a knight (e5), the cell and + to place a stack (e5+), or a "
    "stack's cell, - or x, and the landing cell to throw its axe (e5-e9, e5xe8)"
)


def _joined(words: list[str]) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


class KnightVisionPieces:
    """The pieces of a state by cell, with the placement and throw rules of
    docs/spec/games/knightvision.md §4."""

    def __init__(self, state):
        self.state = state
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

    def has_chain(self, seat: int) -> bool:
        return KnightVisionEngine.from_state(self.state).has_chain(seat)

    def chain(self, seat: int) -> frozenset[Cell]:
        """The seat's pieces connected from one of its edges to the other
        (docs/spec/games/knightvision.md §5)."""
        board = self.board
        first, second = (board.top, board.bottom) if seat == WHITE else (board.left, board.right)
        own = [cell for cell, symbol in self.pieces.items() if OWNER[symbol] == seat]
        return board.chain(own, first, second)


class KnightVision(BaseGame):
    name = "knightvision"
    display_name = "KnightVision"
    same_view_for_all = True  # no hidden information: one board for every reader
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

    def __init__(self):
        self._engines = StateEngines(KnightVisionEngine.from_state)

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
        if self.to_move(state) is None or self._engines.of(state).actions():
            return None
        return "pass"

    # -- moves ---------------------------------------------------------------------

    def engine(self, state) -> KnightVisionEngine:
        return self._engines.fresh(state)

    def legal_moves(self, state, seat):
        if self.to_move(state) != seat:
            return []
        engine = self._engines.of(state)
        return [engine.move_text(move) for move in engine.actions()]

    def parse_move(self, state, seat, text):
        piece_map = KnightVisionPieces(state)
        compact = "".join(text.split()).lower()
        placement = PLACEMENT_RE.fullmatch(compact)
        throw = THROW_RE.fullmatch(compact)
        if placement is None and throw is None:
            raise MoveError(f'Invalid move "{text}": {NOTATION}')

        def cell_of(written: str) -> Cell:
            try:
                return piece_map.board.parse(written)
            except ValueError as error:
                raise MoveError(f'Invalid move "{text}": {error}') from None

        if placement is not None:
            target = cell_of(placement.group(1))
            return self._placement(state, piece_map, seat, target, stack=bool(placement.group(2)))
        start, landing = cell_of(throw.group(1)), cell_of(throw.group(3))
        return self._throw(state, piece_map, seat, start, landing, throw.group(2))

    def _placement(self, state, piece_map, seat, target, stack) -> str:
        name = piece_map.board.name(target)
        canonical = name + ("+" if stack else "")

        def refuse(reason):
            return MoveError(f'Invalid move "{canonical}": {reason}')

        if target in piece_map.pieces:
            raise refuse(f"{name} is not vacant: it holds {piece_map.describe(target)}")
        if seat in state["free"]:
            if stack:
                raise refuse(
                    f"your first placement is free but always a single knight; write {name}"
                )
            return canonical
        friends = [
            cell
            for cell in piece_map.board.knights[target]
            if OWNER.get(piece_map.pieces.get(cell)) == seat
        ]
        if not friends:
            knight_cells = _joined(piece_map.board.names(piece_map.board.knights[target]))
            raise refuse(
                f"{name} is not a knight's move from any of your pieces: none of its knight "
                f"cells ({knight_cells}) holds a {COLOURS[seat]} piece. A placement must be "
                "two steps along a line and one step at 60 degrees from one of your pieces"
            )
        if stack and len(friends) < STACK_THRESHOLD:
            at = _joined(piece_map.board.names(friends))
            raise refuse(
                f"a stack needs three of your pieces at a knight's move, and {name} has "
                f"{len(friends)} ({at}); write {name} to place a knight"
            )
        return canonical

    def _throw(self, state, piece_map, seat, start, landing, separator) -> str:
        name = piece_map.board.name
        written = f"{name(start)}{separator}{name(landing)}"

        def refuse(reason):
            return MoveError(f'Invalid move "{written}": {reason}')

        if seat in state["free"]:
            raise refuse(
                "you have no stack yet: your first move is the free placement of a single "
                "knight on any vacant cell, e.g. e5"
            )
        symbol = piece_map.pieces.get(start)
        if symbol != STACK_SYMBOLS[seat]:
            if symbol is None:
                raise refuse(f"there is no stack on {name(start)}")
            raise refuse(
                f"only one of your stacks can throw an axe, and {name(start)} holds "
                f"{piece_map.describe(start)}"
            )
        direction = line_direction(start, landing)
        if direction is None:
            raise refuse(
                "the landing cell must be on one line with the stack: an axe flies along a "
                "row (e5-h5), a column (e5-e9) or the third line, where the letter goes up "
                "as the number goes down (e5-g3)"
            )
        for cell in cells_between(start, landing):
            symbol = piece_map.pieces.get(cell)
            if symbol is not None and OWNER[symbol] != seat:
                raise refuse(
                    f"the axe cannot pass {piece_map.describe(cell)}; it can capture it with "
                    f"{name(start)}x{name(cell)}"
                )
        symbol = piece_map.pieces.get(landing)
        if symbol is None:
            return f"{name(start)}-{name(landing)}"
        if OWNER[symbol] == seat:
            raise refuse(
                f"the axe flies over your own pieces but cannot land on them, and "
                f"{name(landing)} holds {piece_map.describe(landing)}"
            )
        return f"{name(start)}x{name(landing)}"

    def apply_move(self, state, seat, move):
        engine = self._engines.fresh(state)
        engine.seat = seat
        engine.play(move if move == "pass" else self._engine_move(engine, move))
        return self._engines.made(engine)

    @staticmethod
    def _engine_move(engine: KnightVisionEngine, move: str):
        """The engine's move for a canonical move text."""
        board, index = engine.tables.board, engine.tables.index
        throw = THROW_RE.fullmatch(move)
        if throw is not None:
            return index[board.parse(throw.group(1))], index[board.parse(throw.group(3))]
        placement = PLACEMENT_RE.fullmatch(move)
        cell = index[board.parse(placement.group(1))]
        return 2 * cell + (1 if placement.group(2) else 0)

    # -- display ---------------------------------------------------------------------

    def picture(self, state) -> str:
        """The Hex-board drawing with the cells of the last move in brackets."""
        piece_map = KnightVisionPieces(state)
        last = state["last"]
        written = [] if last in (None, "pass") else re.findall(CELL, last)
        marks = [piece_map.board.parse(name) for name in written]
        return piece_map.board.draw(piece_map.pieces, marks=marks)

    def winning_chain(self, state) -> frozenset[Cell]:
        """The winner's chain of a finished game (docs/spec/games/knightvision.md §5)."""
        outcome = self.outcome(state)
        if outcome is None or not outcome.winners:
            return frozenset()
        return KnightVisionPieces(state).chain(outcome.winners[0])

    def winning_cells(self, state):
        board = RhombusBoard(state["options"]["size"])
        return tuple(board.names(self.winning_chain(state)))

    def drawing(self, state, perspective, last_move):
        """Everything is open (no hidden information): the same picture for every reader.
        The last move is the state's own, as the text board marks it (a swap keeps it)."""
        piece_map = KnightVisionPieces(state)
        picture = hex_picture(piece_map.board, EDGE_COLOURS)
        radius = picture.piece_radius
        pieces = []
        for cell, symbol in piece_map.pieces.items():
            seat = OWNER[symbol]
            x, y = picture.centres[cell]
            shape = "square" if symbol in STACK_SYMBOLS else "disc"
            pieces.append(
                drawing.Piece(
                    x,
                    y,
                    radius,
                    PIECE_FILLS[seat],
                    symbol,
                    LETTER_COLOURS[seat],
                    shape,
                )
            )
        last = state["last"]
        named = [] if last in (None, "pass") else re.findall(CELL, last)
        marked = [piece_map.board.parse(name) for name in named]
        chain = sorted(self.winning_chain(state))
        won = "; green: the winning chain" if chain else ""
        return drawing.Drawing(
            backdrop=picture.backdrop,
            pieces=tuple(pieces),
            highlights=tuple(drawing.highlight(picture.hexagons[cell]) for cell in marked)
            + tuple(drawing.winning(picture.hexagons[cell]) for cell in chain),
            legend=(
                "w b: White, Black knight (disc); W B: White, Black stack, a knight with an "
                f"axe (square); yellow cells: last move{won}\n"
                "White joins top-bottom (grey edges), Black left-right (black edges)"
            ),
        )

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
    from games import connection
    from pbm.robots import Robot

    def sides(engine):
        edges = engine.tables.edge_masks
        vacant = connection.flags_to_bits(engine.vacant)
        return (
            connection.Side(engine.pieces[0], vacant, edges[0], edges[2]),
            connection.Side(engine.pieces[1], vacant, edges[3], edges[1]),
        )

    def cell_of(move):  # 2i + stack for a placement on i, (stack, landing) for a throw, "pass"
        if move.__class__ is int:
            return move >> 1
        return move[1] if move.__class__ is tuple else None

    game = connection.ConnectionGame(lambda engine: engine.tables, sides, cell_of)
    register(
        Robot(
            game="knightvision",
            name="mcts",
            description="Tree search scoring positions by connection distance, expanding the "
            "placements and throws on either side's shortest join",
            knowledge=connection.knowledge(game),
        )
    )
