"""Lox (Luis Bolanos Mures, Steven Metzger and Christian Freeling, 2021), docs/spec/games/lox.md.

A Hex-like connection game on the n x n rhombus of games/hexgrid.py. A cell sees the first
stone along each of its six rays; a player controls a cell that sees more of their stones
than half its neighbour count. You place on empty cells the opponent does not control and
replace opponent stones on cells you control.

Listing the legal moves must be fast on 19x19, so the state carries, for each seat, how
many of its stones every cell sees. Every rule goes through the engine of
games/lox/engine.py, which updates those counts incrementally.
"""

import re

from games.hexgrid import Cell, RhombusBoard, cell_tables, hex_picture
from games.lox.engine import LoxEngine, layout
from pbm import drawing, hookimpl
from pbm.engine import StateEngines
from pbm.game import BaseGame, Flag, MoveError, Number

RED, BLUE = 0, 1
EMPTY = "."
STONES = ("R", "B")
CONTROL_MARKS = ("+", "-")  # not r/b: a mark must not look like a stone (R, B)
MIN_SIZE, MAX_SIZE, DEFAULT_SIZE = 9, 19, 11
MOVE_RE = re.compile(r"(x?)([a-z][0-9]+)")
# Pictures: a stone carries its seat's letter; a control mark is a small square (Red) or
# diamond (Blue), so shape tells them apart as well as colour (Okabe-Ito vermillion, blue).
SEAT_COLOURS = (drawing.VERMILLION, drawing.BLUE)
MARK_SHAPES = ("square", "diamond")
EDGE_COLOURS = SEAT_COLOURS * 2  # top, right, bottom, left: Red joins top-bottom


def last_column(size: int) -> str:
    return chr(ord("a") + size - 1)


def needed_to_control(board: RhombusBoard, cell: Cell) -> int:
    """More than half of the cell's neighbours (docs/spec/games/lox.md §3)."""
    return board.neighbour_count[cell] // 2 + 1


def count_seen(board: RhombusBoard, rows: list[str]) -> list[list[str]]:
    """For each seat, the rows of digits saying how many of its stones each cell sees."""
    return _engine_of_rows(board, rows).state()["seen"]


def put_stone(
    board: RhombusBoard, rows: list[str], seen: list[list[str]], cell: Cell, seat: int
) -> tuple[list[str], list[list[str]]]:
    """New (rows, seen) with seat's stone on cell, which is empty or holds the other colour;
    the engine updates the counts along the cell's six rays only."""
    state = {"options": {"size": board.size}, "board": rows, "seen": seen}
    engine = LoxEngine.from_state(dict(state, to_move=seat, winner=None, last=None))
    engine.put(cell_tables(board).index[cell], seat)
    new = engine.state()
    return new["board"], new["seen"]


def _engine_of_rows(board: RhombusBoard, rows: list[str]) -> LoxEngine:
    index = cell_tables(board).index
    stones = {
        index[(q, r)]: STONES.index(content)
        for r, row in enumerate(rows)
        for q, content in enumerate(row)
        if content != EMPTY
    }
    return LoxEngine.from_stones({"size": board.size}, stones, RED)


class Lox(BaseGame):
    name = "lox"
    display_name = "Lox"
    same_view_for_all = True  # no hidden information: one board for every reader
    player_names = ("Red", "Blue")
    seat_symbols = STONES
    min_players = 2
    max_players = 2
    swap_after = 1
    # One ply per line: after a swap Blue moves at odd plies, which the core's seat columns
    # would show under Red.
    move_layout = "lines"
    view_options = ("control",)

    options = (
        Number("size", DEFAULT_SIZE, "board N x N,", low=MIN_SIZE, high=MAX_SIZE, example=13),
        Flag(
            "control",
            "every board of the game marks the empty cells each side controls, + for Red "
            "and - for Blue",
        ),
    )

    def __init__(self):
        self._engines = StateEngines(LoxEngine.from_state)

    # -- state ---------------------------------------------------------------------

    def initial_state(self, options, players, seed):
        return self.state_with_stones(options, {}, RED)

    def state_with_stones(self, options: dict, stones: dict[str, int], to_move: int) -> dict:
        """A position set up directly: stones maps cell names to seats (docs/spec/games/lox.md §10
        examples)."""
        board = RhombusBoard(options["size"])
        index = cell_tables(board).index
        stones_by_index = {index[board.parse(name)]: seat for name, seat in stones.items()}
        return LoxEngine.from_stones(dict(options), stones_by_index, to_move).state()

    # -- reading a state -----------------------------------------------------------

    @staticmethod
    def board(state) -> RhombusBoard:
        return RhombusBoard(state["options"]["size"])

    @staticmethod
    def owner(state, cell: Cell) -> int | None:
        content = state["board"][cell[1]][cell[0]]
        return None if content == EMPTY else STONES.index(content)

    @staticmethod
    def seen_count(state, seat: int, cell: Cell) -> int:
        return int(state["seen"][seat][cell[1]][cell[0]])

    def controls(self, state, seat: int, cell: Cell) -> bool:
        return self.seen_count(state, seat, cell) >= needed_to_control(self.board(state), cell)

    def controller(self, state, cell: Cell) -> int | None:
        """The seat controlling the cell; never both (a cell sees at most a(X) stones)."""
        return next((seat for seat in (RED, BLUE) if self.controls(state, seat, cell)), None)

    @staticmethod
    def stones(state, seat: int) -> list[Cell]:
        stone = STONES[seat]
        return [
            (q, r)
            for r, row in enumerate(state["board"])
            for q, content in enumerate(row)
            if content == stone
        ]

    # -- moves ---------------------------------------------------------------------

    def engine(self, state) -> LoxEngine:
        return self._engines.fresh(state)

    def legal_moves(self, state, seat):
        if self.to_move(state) != seat:
            return []
        return self._engines.of(state).placement_texts()

    def can_pass(self, state, seat):
        # docs/spec/games/lox.md §4.2: a pass is only ever forced, and the server plays it
        return False

    def pass_refusal(self, state, seat):
        return (
            "Lox has no voluntary pass: you pass only when no placement or replacement is "
            "legal, and the server then passes for you"
        )

    def forced_move(self, state):
        if self.to_move(state) is None or self._engines.of(state).placements():
            return None
        return "pass"

    def parse_move(self, state, seat, text):
        compact = "".join(text.split()).lower()
        match = MOVE_RE.fullmatch(compact)
        if not match:
            raise MoveError(
                f'Invalid move "{text.strip()}": write the cell as column letter and row '
                "number, e.g. f6; to replace an opponent stone on a cell you control write "
                "xf6 (the x is optional)"
            )
        board = self.board(state)
        try:
            cell = board.parse(match.group(2))
        except ValueError as error:
            raise MoveError(f'Invalid move "{compact}": {error}') from None
        name = board.name(cell)
        wants_replacement = bool(match.group(1))
        given = "x" + name if wants_replacement else name
        colour, other = self.player_names[seat], self.player_names[1 - seat]
        content = self.owner(state, cell)

        def refuse(reason):
            return MoveError(f'Invalid move "{given}": {reason}')

        if content == seat:
            raise refuse(
                f"{name} already holds a {colour} stone of yours; place on an empty cell "
                f"or replace a {other} stone on a cell you control"
            )
        if content is None:
            if self.controls(state, 1 - seat, cell):
                raise refuse(
                    f"{other} controls {name}, so {colour} cannot place a stone there: "
                    f"{self.sight_text(state, cell)}; {self.need_text(state, cell)}"
                )
            if wants_replacement:
                raise refuse(
                    f"{name} is empty, so there is no stone to replace; write {name} to place "
                    "a stone there"
                )
            return name
        if not self.controls(state, seat, cell):
            raise refuse(
                f"{colour} does not control {name}, so {colour} cannot replace the {other} "
                f"stone there: {self.sight_text(state, cell)}; {self.need_text(state, cell)}, "
                f"and {colour} has {self.seen_count(state, seat, cell)}"
            )
        return "x" + name

    def sight_text(self, state, cell: Cell) -> str:
        """Which stones the cell sees, by colour: "f6 sees Red b6, f2, f9 and Blue f7"."""
        board = self.board(state)
        seen = board.seen(cell, _Stones(state))
        parts = []
        for seat in (RED, BLUE):
            names = board.names(other for other in seen if self.owner(state, other) == seat)
            if names:
                parts.append(f"{self.player_names[seat]} {', '.join(names)}")
        return f"{board.name(cell)} sees " + (" and ".join(parts) if parts else "no stone")

    def need_text(self, state, cell: Cell) -> str:
        board = self.board(state)
        return (
            f"{board.name(cell)} has {board.neighbour_count[cell]} neighbours, so control "
            f"takes {needed_to_control(board, cell)} stones seen (more than half)"
        )

    def apply_move(self, state, seat, move):
        engine = self._engines.fresh(state)
        engine.seat = seat
        engine.play(move if move == "pass" else self._index(state, move.removeprefix("x")))
        return self._engines.made(engine)

    def _index(self, state, name: str) -> int:
        board = self.board(state)
        return cell_tables(board).index[board.parse(name)]

    # -- display -------------------------------------------------------------------

    def render_board(self, state, perspective, control: bool | None = None):
        """control None follows the board's -control option; True (`lox show 101 -control`)
        or False overrides it."""
        template = self._environment().get_template(f"{self.name}/board.txt")
        shown = state["options"]["control"] if control is None else control
        return template.render(
            game=self,
            state=state,
            perspective=perspective,
            options=state["options"],
            show_control=shown,
        ).strip("\n")

    def winning_chain(self, state) -> frozenset[Cell]:
        """The winner's chain of a finished game (docs/spec/games/lox.md §5)."""
        outcome = self.outcome(state)
        if outcome is None or not outcome.winners:
            return frozenset()
        seat, board = outcome.winners[0], self.board(state)
        own = [cell for cell in board.cells if self.owner(state, cell) == seat]
        first, second = (board.top, board.bottom) if seat == RED else (board.left, board.right)
        return board.chain(own, first, second)

    def winning_cells(self, state):
        board = self.board(state)
        return tuple(board.names(self.winning_chain(state)))

    def drawing(self, state, perspective, last_move):
        """Open information: every reader sees the same picture, with the control marks when
        the board's -control option asks for them, as the text board does, and its last move
        (the state's own: after a swap, the stone swapped)."""
        board = self.board(state)
        picture = hex_picture(board, EDGE_COLOURS)
        show_control = state["options"]["control"]
        rows, seen = state["board"], state["seen"]
        pieces = []
        tables, needed_at, _ = layout(board.size)
        for q, r in board.cells:
            needed = needed_at[tables.index[(q, r)]]
            x, y = picture.centres[(q, r)]
            content = rows[r][q]
            if content != EMPTY:
                seat = STONES.index(content)
                pieces.append(
                    drawing.Piece(
                        x, y, picture.piece_radius, SEAT_COLOURS[seat], content, drawing.WHITE
                    )
                )
            elif show_control:
                # controller() read straight from the seen counts: this runs for every cell
                holder = next((s for s in (RED, BLUE) if int(seen[s][r][q]) >= needed), None)
                if holder is not None:
                    pieces.append(
                        drawing.Piece(
                            x,
                            y,
                            picture.radius * 0.3,
                            SEAT_COLOURS[holder],
                            shape=MARK_SHAPES[holder],
                        )
                    )
        chain = sorted(self.winning_chain(state))
        control = "; small square, diamond: empty cell Red, Blue controls" if show_control else ""
        won = "; green: the winning chain" if chain else ""
        return drawing.Drawing(
            backdrop=picture.backdrop,
            pieces=tuple(pieces),
            highlights=tuple(drawing.highlight(picture.hexagons[c]) for c in self.last_cell(state))
            + tuple(drawing.winning(picture.hexagons[cell]) for cell in chain),
            legend=f"R B: Red, Blue stone{control}; yellow cell: last move{won}\n"
            "Red joins top-bottom (vermillion edges), Blue left-right (blue edges)",
        )

    def picture(self, state, show_control: bool) -> str:
        board = self.board(state)
        # A state's rows hold each cell's character already (EMPTY or a seat's STONES).
        symbols = {
            (q, r): content
            for r, row in enumerate(state["board"])
            for q, content in enumerate(row)
            if content != EMPTY
        }
        if show_control:
            for cell in board.cells:
                holder = None if cell in symbols else self.controller(state, cell)
                if holder is not None:
                    symbols[cell] = CONTROL_MARKS[holder]
        return board.draw(symbols, marks=self.last_cell(state))

    def last_cell(self, state) -> list[Cell]:
        if state["last"] is None or state["last"][1] == "pass":
            return []
        return [self.board(state).parse(state["last"][1].removeprefix("x"))]

    def legend(self, state, show_control: bool) -> list[str]:
        n = state["options"]["size"]
        lines = ["R B  Red, Blue stone"]
        if show_control:
            lines.append(
                f"{' '.join(CONTROL_MARKS)}  empty cell controlled by Red, Blue (the other may "
                "not place there)"
            )
        lines += [
            ".    empty cell",
            "[ ]  the last move",
            f"Red: top-bottom (rows 1 and {n}), Blue: left-right (columns a and {last_column(n)})",
        ]
        if state["last"] is not None:
            seat, move = state["last"]
            if move == "pass":
                lines.append(f"Last move: {self.player_names[seat]} passed (no legal move)")
            else:
                lines.append(f"Last move: {self.player_names[seat]} {move}")
        if state["to_move"] is not None:
            # The core names the user on move; after a swap this tells them their colour.
            lines.append(f"To move: {self.player_names[state['to_move']]}")
        return lines


class _Stones:
    """The occupied cells of a state, for the geometry's sight lookups."""

    def __init__(self, state):
        self.rows = state["board"]

    def __contains__(self, cell) -> bool:
        return self.rows[cell[1]][cell[0]] != EMPTY


@hookimpl
def register_games(register):
    register(Lox())


@hookimpl
def register_robots(register):
    # deferred: only robot work needs the search, never a mail about the game
    from games import connection
    from pbm.robots import Robot

    def sides(engine):
        edges = engine.tables.edge_masks
        return (
            connection.Side(
                engine.stones[RED], connection.flags_to_bits(engine.legal[RED]), edges[0], edges[2]
            ),
            connection.Side(
                engine.stones[BLUE],
                connection.flags_to_bits(engine.legal[BLUE]),
                edges[3],
                edges[1],
            ),
        )

    def cell_of(move):  # a cell's index, or "pass"
        return move if move.__class__ is int else None

    game = connection.ConnectionGame(lambda engine: engine.tables, sides, cell_of)
    register(
        Robot(
            game="lox",
            name="mcts",
            description="Tree search scoring positions by connection distance, expanding the "
            "moves on either side's shortest join: the cells it may play on, a controlled "
            "stone of the other colour among them",
            knowledge=connection.knowledge(game),
        )
    )
