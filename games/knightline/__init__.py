"""Knight Line (Stephen Tavener): split stacks by a knight's move; four stacks in a row win.

The board is unbounded. A cell is (x, y), x growing to the right and y upwards, and keeps
its name for the whole game (docs/spec/games/knightline.md §1). The state stores each stack as
[x, y, seat, height], sorted by cell, and the grey tile of the promotion variants as [x, y].
"""

import functools
import math
from typing import NamedTuple

from pbm import drawing, hookimpl
from pbm.engine import StateEngines
from pbm.game import BaseGame, Flag, MoveError, Number

from .engine import PLAYER_NAMES, WHITE, KnightLineEngine, cell_index, cell_of
from .notation import CELL_RE, MISSING_K_RE, MOVE_RE, cell_text, leading_cell_text, move_text

LETTERS = ("W", "B", "R")
GREY_LETTER = "G"
START_CELLS = ((0, 0), (1, 0), (0, -1))  # White, Black, Red (docs/spec/games/knightline.md §3)
GREY_CELL = (0, 0)
NEIGHBOURS = tuple((dx, dy) for dx in (-1, 0, 1) for dy in (-1, 0, 1) if dx or dy)
KNIGHT_STEPS = ((1, 2), (2, 1), (2, -1), (1, -2), (-1, -2), (-2, -1), (-2, 1), (-1, 2))
STACK_SIZES = range(10, 31)
DEFAULT_STACK = 20
# 5 characters of row label, 4 per cell and 4 of row label again: 16 cells fit in 76.
PANEL_COLUMNS = 16

# Pictures: each seat's stacks have their own shape and colour, the height written on them.
SEAT_SHAPES = ("disc", "square", "diamond")
SEAT_FILLS = (drawing.WHITE, drawing.BLACK, drawing.VERMILLION)
SEAT_INK = (drawing.INK, drawing.WHITE, drawing.WHITE)
PICTURE_WIDTH = 600  # px at most; a small area gets cells of CELL_MAX px
CELL_MAX = 44
LABEL_ROOM = 30  # px for the coordinates on each side

NOTATION_HINT = "write FROM/TO/K with cells as x,y, e.g. 0,0/2,1/1 moves 1 tile from 0,0 to 2,1"


def tiles(count) -> str:
    return f"{count} tile" if count == 1 else f"{count} tiles"


def either(words) -> str:
    words = list(words)
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]


def cell_choices(cells) -> str:
    """Cells to choose from, each in parentheses: "1,1, -1,0" would not say where a cell ends."""
    return either(f"({cell_text(cell)})" for cell in cells)


class Table:
    """The occupied cells of a state, indexed for look-ups."""

    def __init__(self, state):
        self.stacks = {(x, y): (seat, height) for x, y, seat, height in state["stacks"]}
        self.grey = tuple(state["grey"]) if state["grey"] is not None else None

    def is_occupied(self, cell) -> bool:
        return cell in self.stacks or cell == self.grey

    def touches_group(self, cell) -> bool:
        x, y = cell
        return any(self.is_occupied((x + dx, y + dy)) for dx, dy in NEIGHBOURS)

    def destinations(self, source) -> list[tuple[int, int]]:
        x, y = source
        return sorted(
            (x + dx, y + dy)
            for dx, dy in KNIGHT_STEPS
            if not self.is_occupied((x + dx, y + dy)) and self.touches_group((x + dx, y + dy))
        )

    def stacks_of(self, seat) -> list[tuple[tuple[int, int], int]]:
        return sorted(
            (cell, height) for cell, (owner, height) in self.stacks.items() if owner == seat
        )

    def setup_cells(self) -> list[tuple[int, int]]:
        gx, gy = self.grey
        return sorted(
            (gx + dx, gy + dy) for dx, dy in NEIGHBOURS if not self.is_occupied((gx + dx, gy + dy))
        )

    def describe(self, cell, names) -> str:
        if cell == self.grey:
            return "the grey tile"
        if cell in self.stacks:
            seat, height = self.stacks[cell]
            return f"a {names[seat]} stack of {tiles(height)}"
        return "empty"


class KnightLine(BaseGame):
    name = "knightline"
    display_name = "KnightLine"
    same_view_for_all = True  # no hidden information: one board for every reader
    player_names = PLAYER_NAMES
    seat_symbols = LETTERS
    min_players = 2
    max_players = 3

    options = (
        Number(
            "stack",
            DEFAULT_STACK,
            "tiles per player,",
            low=STACK_SIZES[0],
            high=STACK_SIZES[-1],
            unit="tiles",
            example=15,
        ),
        Flag(
            "blocker",
            "promotion tile, variation 1: a grey tile on 0,0 blocks every line through it",
            excludes="wildcard",
            why="there is one grey tile",
        ),
        Flag(
            "wildcard",
            "promotion tile, variation 2: the grey tile on 0,0 counts as a stack of every player",
        ),
    )

    def __init__(self):
        self._engines = StateEngines(KnightLineEngine.from_state)

    # -- state ---------------------------------------------------------------------

    def initial_state(self, options, players, seed):
        with_grey = options["blocker"] or options["wildcard"]
        stacks = (
            []
            if with_grey
            else [[*START_CELLS[seat], seat, options["stack"]] for seat in range(players)]
        )
        return {
            "options": options,
            "players": players,
            "stacks": sorted(stacks),
            "grey": list(GREY_CELL) if with_grey else None,
            "to_move": WHITE,
            "out": [],
            "last": None,
            "winners": None,
            "reason": "",
        }

    # -- rules: all through the engine (games/knightline/engine.py) -----------------

    def engine(self, state):
        return self._engines.fresh(state)

    @staticmethod
    def _is_setup_turn(table, seat) -> bool:
        """In the variants a seat owns no stack until it has placed one, and stacks never go."""
        return table.grey is not None and not table.stacks_of(seat)

    @staticmethod
    def _first_move_restricted(state, table, seat) -> bool:
        return state["players"] == 2 and seat == WHITE and len(table.stacks_of(WHITE)) == 1

    def legal_moves(self, state, seat):
        if self.to_move(state) != seat:
            return []
        engine = self._engines.of(state)
        return engine.move_texts_of(seat)

    def can_pass(self, state, seat):
        return False

    def pass_refusal(self, state, seat):
        table = Table(state)
        if self._is_setup_turn(table, seat):
            free = table.setup_cells()
            choice = "put your stack on " + cell_choices(free)
        else:
            choice = self._movable(table, seat)
        return (
            f"{self.display_name} does not allow passing while you have a legal move ({choice}); "
            "a player without one passes automatically in a two-player game"
        )

    def forced_move(self, state):
        seat = self.to_move(state)
        if seat is None or self._engines.of(state).has_move(seat):
            return None
        return "pass"

    def apply_move(self, state, seat, move):
        engine = self._engines.fresh(state)
        engine.play_as(seat, engine.parse_text(move))
        return self._engines.made(engine)

    # -- move input ------------------------------------------------------------------

    @staticmethod
    def _cell(match, group) -> tuple[int, int]:
        """The cell of a cell_pattern whose "(" is the given group."""
        return int(match[group + 1]), int(match[group + 2])

    def parse_move(self, state, seat, text):
        compact = "".join(text.split()).lower()
        table = Table(state)
        name = self.player_names[seat]
        if state["winners"] is not None:
            raise MoveError(f'Invalid move "{text}": the game is over')
        if compact == "pass":
            raise MoveError(self.pass_refusal(state, seat))
        if self._is_setup_turn(table, seat):
            return self._parse_setup(table, name, text, compact)
        match = MOVE_RE.fullmatch(compact)
        if match is None:
            raise MoveError(f'Invalid move "{text}": {self._syntax_problem(compact)}')
        source, destination, count = self._cell(match, 1), self._cell(match, 4), int(match[7])
        canonical = move_text(source, destination, count)
        problem = self._move_problem(state, table, seat, source, destination, count)
        if problem:
            raise MoveError(f'Invalid move "{canonical}": {problem}')
        return canonical

    @staticmethod
    def _syntax_problem(compact) -> str:
        if CELL_RE.fullmatch(compact):
            return f"a single cell is only a set-up turn; a move splits a stack: {NOTATION_HINT}"
        if MISSING_K_RE.fullmatch(compact):
            return f"say how many tiles move: K is always required, e.g. {compact.rstrip('/')}/1"
        return NOTATION_HINT

    def _parse_setup(self, table, name, text, compact):
        free = cell_choices(table.setup_cells())
        match = CELL_RE.fullmatch(compact)
        if match is None:
            raise MoveError(
                f'Invalid move "{text}": this is your set-up turn: write the cell x,y next to '
                f"the grey tile where your stack goes, e.g. 1,1; free cells: {free}"
            )
        cell = self._cell(match, 1)
        canonical = leading_cell_text(cell)
        gx, gy = table.grey
        if max(abs(cell[0] - gx), abs(cell[1] - gy)) != 1:
            raise MoveError(
                f'Invalid move "{canonical}": {name}\'s stack must go next to the grey tile on '
                f"{cell_text(table.grey)} (diagonals count); free cells: {free}"
            )
        if table.is_occupied(cell):
            raise MoveError(
                f'Invalid move "{canonical}": {cell_text(cell)} is taken by '
                f"{table.describe(cell, self.player_names)}; free cells: {free}"
            )
        return canonical

    def _move_problem(self, state, table, seat, source, destination, count) -> str:
        name = self.player_names[seat]
        owner, height = table.stacks.get(source, (None, 0))
        if owner != seat:
            return (
                f"there is no {name} stack on {cell_text(source)} (it is "
                f"{table.describe(source, self.player_names)}); {self._movable(table, seat)}"
            )
        if height == 1:
            return (
                f"the {name} stack on {cell_text(source)} has a single tile, and a single tile "
                f"never moves again; {self._movable(table, seat)}"
            )
        reachable = table.destinations(source)
        where = (
            f"from {cell_text(source)} you can move to {cell_choices(reachable)}"
            if reachable
            else f"the stack on {cell_text(source)} has no free knight's move now"
        )
        step = (destination[0] - source[0], destination[1] - source[1])
        if step not in KNIGHT_STEPS:
            return (
                f"{cell_text(destination)} is not a knight's move from {cell_text(source)} "
                f"(one step one way and two the other); {where}"
            )
        if table.is_occupied(destination):
            return (
                f"{cell_text(destination)} is occupied by "
                f"{table.describe(destination, self.player_names)}; {where}"
            )
        if not table.touches_group(destination):
            return (
                f"{cell_text(destination)} touches no occupied cell, and all tiles must stay "
                f"connected, at least diagonally; {where}"
            )
        if self._first_move_restricted(state, table, seat) and count != 1:
            return (
                f"White's first move moves exactly one tile: write "
                f"{move_text(source, destination, 1)}"
            )
        if not 1 <= count <= height - 1:
            return (
                f"K must be from 1 to {height - 1}: the stack on {cell_text(source)} has "
                f"{tiles(height)} and at least one tile stays behind"
            )
        return ""

    def _movable(self, table, seat) -> str:
        movable = [
            f"{cell_text(cell)} ({tiles(height)})"
            for cell, height in table.stacks_of(seat)
            if height >= 2 and table.destinations(cell)
        ]
        if not movable:
            return f"no {self.player_names[seat]} stack can move now"
        return f"{self.player_names[seat]}'s stacks that can move: {', '.join(movable)}"

    # -- display -------------------------------------------------------------------

    def board_lines(self, state) -> list[str]:
        """The occupied area plus a margin of one cell, in panels of at most 16 columns.

        The cells of the last move are drawn in brackets, "[W1]": a cell is right-aligned in
        its 4 characters, so "[" takes the blank before it and "]" the blank that starts the
        next cell (or the row label), and no cell moves.
        """
        table = Table(state)
        symbols = {
            cell: f"{LETTERS[seat]}{height}" for cell, (seat, height) in table.stacks.items()
        }
        if table.grey is not None:
            symbols[table.grey] = GREY_LETTER
        marked = self.last_cells(state)
        xs = [x for x, _ in symbols]
        ys = [y for _, y in symbols]
        columns = list(range(min(xs) - 1, max(xs) + 2))
        panels = math.ceil(len(columns) / PANEL_COLUMNS)
        width = math.ceil(len(columns) / panels)
        lines = []
        for start in range(0, len(columns), width):
            chunk = columns[start : start + width]
            if lines:
                lines.append("")
            header = " " * 5 + "".join(f"{x:>4}" for x in chunk)
            lines.append(header)
            for y in range(max(ys) + 1, min(ys) - 2, -1):
                row = list(f"{y:>4} " + "".join(f"{symbols.get((x, y), '.'):>4}" for x in chunk))
                row += list(f"{y:>4}")
                for index, x in enumerate(chunk):
                    if (x, y) in marked:
                        text = symbols.get((x, y), ".")
                        opening = 5 + 4 * index + 4 - len(text) - 1
                        row[opening] = "|" if row[opening] == "]" else "["
                        row[5 + 4 * index + 4] = "]"
                lines.append("".join(row))
            lines.append(header)
        return lines

    def winning_line(self, state) -> list[tuple[int, int]]:
        """The cells of the line that won, first to last (docs/spec/games/knightline.md §5):
        through the last move's new stack; none for a blocked game's win."""
        if not state["winners"] or state["last"] is None:
            return []
        seat, move = state["last"]
        found = MOVE_RE.fullmatch(move) or CELL_RE.fullmatch(move)
        if found is None:
            return []
        destination = self._cell(found, 4 if found.re is MOVE_RE else 1)
        line = self._engines.of(state).longest_line(seat, cell_index(*destination))
        if line is None:
            return []
        first, last, _, step = line
        return [cell_of(cell) for cell in range(first, last + step, step)]

    def winning_cells(self, state):
        return tuple(cell_text(cell) for cell in self.winning_line(state))

    def drawing(self, state, perspective, last_move):
        """Open information: every reader sees the same picture, the occupied area and a
        margin of one cell, as on the text board."""
        table = Table(state)
        occupied = list(table.stacks) + ([table.grey] if table.grey is not None else [])
        xs = [x for x, _ in occupied]
        ys = [y for _, y in occupied]
        area = _area_picture(min(xs) - 1, max(xs) + 1, min(ys) - 1, max(ys) + 1)
        side = area.side

        def centre(cell):
            return area.left + (cell[0] - area.first_x + 0.5) * side, area.top + (
                area.last_y - cell[1] + 0.5
            ) * side

        pieces = []
        if table.grey is not None:
            pieces.append(
                drawing.Piece(
                    *centre(table.grey), side * 0.4, drawing.GREY, GREY_LETTER, "#000000", "square"
                )
            )
        for cell, (seat, height) in sorted(table.stacks.items()):
            pieces.append(
                drawing.Piece(
                    *centre(cell),
                    side * 0.4,
                    SEAT_FILLS[seat],
                    str(height),
                    SEAT_INK[seat],
                    SEAT_SHAPES[seat],
                )
            )

        def square(cell):
            x, y = cell
            return drawing.square(
                area.left + (x - area.first_x) * side, area.top + (area.last_y - y) * side, side
            )

        marked = sorted(self._move_cells(last_move)) if last_move else []
        line = self.winning_line(state)
        highlights = tuple(
            drawing.highlight(square(cell))
            for cell in marked
            if area.first_x <= cell[0] <= area.last_x and area.first_y <= cell[1] <= area.last_y
        ) + tuple(drawing.winning(square(cell)) for cell in line)
        notes = self.notes(state)
        situation = [line for line in notes if line.startswith(("Set-up", "White's first"))]
        seats = ", ".join(
            f"{self.player_names[seat]} {SEAT_SHAPES[seat]}" for seat in range(state["players"])
        )
        grey = (
            " G: the grey tile "
            + ("(blocks lines)" if state["options"]["blocker"] else "(wildcard)")
            if table.grey is not None
            else ""
        )
        won = "; green: the winning line" if line else ""
        legend = [
            f"Stacks: {seats}; the number is the height;{grey} yellow: last move{won}",
            *situation,
        ]
        return drawing.Drawing(
            backdrop=area.backdrop,
            pieces=tuple(pieces),
            highlights=highlights,
            legend="\n".join(legend),
        )

    @staticmethod
    def _move_cells(move) -> set[tuple[int, int]]:
        found = MOVE_RE.fullmatch(move)
        if found:
            return {KnightLine._cell(found, 1), KnightLine._cell(found, 4)}
        found = CELL_RE.fullmatch(move)
        return {KnightLine._cell(found, 1)} if found else set()

    @staticmethod
    def last_cells(state) -> set[tuple[int, int]]:
        """The cells the last move named: FROM and TO, or the set-up cell."""
        if state["last"] is None:
            return set()
        _mover, move = state["last"]
        found = MOVE_RE.fullmatch(move)
        if found:
            return {KnightLine._cell(found, 1), KnightLine._cell(found, 4)}
        found = CELL_RE.fullmatch(move)
        return {KnightLine._cell(found, 1)} if found else set()

    def notes(self, state) -> list[str]:
        """Lines under the board: the grey tile's role, set-up or restriction, last move."""
        names = self.player_names
        options = state["options"]
        players = state["players"]
        table = Table(state)
        letters = " ".join(LETTERS[:players])
        colours = ", ".join(names[:players])
        lines = [f"{letters:<3}  {colours} stack; the number is its height"]
        if options["blocker"]:
            lines.append("G    the grey tile; it blocks every line (-blocker)")
        if options["wildcard"]:
            lines.append("G    the grey tile; it counts as a stack of every player (-wildcard)")
        lines.append("[ ]  the last move (from and to)")
        seat = self.to_move(state)
        if seat is not None and self._is_setup_turn(table, seat):
            lines.append(
                f"Set-up: {names[seat]} puts a stack of {options['stack']} on an empty cell "
                "next to G."
            )
        elif seat is not None and self._first_move_restricted(state, table, seat):
            lines.append("White's first move moves exactly one tile.")
        if state["last"] is not None:
            mover, move = state["last"]
            shown = "passed" if move == "pass" else move
            lines.append(f"Last move: {names[mover]} {shown}")
        return lines


class AreaPicture(NamedTuple):
    """The picture of a part of the unbounded board (the occupied area and a margin): its
    drawing.Backdrop and where its cells go."""

    backdrop: "drawing.Backdrop"  # quoted: pbm.drawing loads its types at first use
    first_x: int
    last_x: int
    first_y: int
    last_y: int
    side: float  # px of a cell
    left: float  # px of the left edge of column first_x
    top: float  # px of the top edge of row last_y


@functools.lru_cache(maxsize=64)
def _area_picture(first_x: int, last_x: int, first_y: int, last_y: int) -> AreaPicture:
    """Squares in a checkered pattern, x written above and below, y on both sides."""
    columns, rows = last_x - first_x + 1, last_y - first_y + 1
    side = min(CELL_MAX, (PICTURE_WIDTH - 2 * LABEL_ROOM) / columns)
    left, top = LABEL_ROOM, LABEL_ROOM * 0.8
    width = math.ceil(2 * left + columns * side)
    height = math.ceil(2 * top + rows * side)
    cells, labels = [], []
    size = min(14.0, side * 0.45)
    for column, x in enumerate(range(first_x, last_x + 1)):
        for row, y in enumerate(range(last_y, first_y - 1, -1)):
            fill = drawing.CELL if (x + y) % 2 == 0 else drawing.CELL_DARK
            cells.append(
                drawing.Polygon(drawing.square(left + column * side, top + row * side, side), fill)
            )
        middle = left + (column + 0.5) * side
        labels.append(drawing.Text(middle, top / 2, str(x), size))
        labels.append(drawing.Text(middle, height - top / 2, str(x), size))
    for row, y in enumerate(range(last_y, first_y - 1, -1)):
        middle = top + (row + 0.5) * side
        labels.append(drawing.Text(left / 2, middle, str(y), size))
        labels.append(drawing.Text(width - left / 2, middle, str(y), size))
    backdrop = drawing.Backdrop(width, height, tuple(cells), labels=tuple(labels))
    return AreaPicture(backdrop, first_x, last_x, first_y, last_y, side, left, top)


@hookimpl
def register_games(register):
    register(KnightLine())


@hookimpl
def register_robots(register):
    # deferred: only robot work needs the search, never a mail about the game
    from pbm.robots import Knowledge, Robot

    def playout(engine, moves, rng):
        # Players who take a line when they have one make the playouts' verdicts about
        # threats true; uniformly random ones miss most lines.
        winning = engine.line_move(moves)
        return winning if winning is not None else moves[rng.randrange(len(moves))]

    def can_win(engine, seat):
        # a seat out of the game (resigned) never moves again, so it threatens nothing
        return seat not in engine.out and engine.line_move(engine.moves_of(seat), seat) is not None

    register(
        Robot(
            game="knightline",
            name="mcts",
            description="Monte Carlo tree search for two or three players, its playouts taking "
            "a line when there is one: takes a line that wins, keeps every other player from "
            "one",
            knowledge=Knowledge(playout=playout, can_win=can_win),
        )
    )
