"""Hexagonal board geometry shared by the hex games (docs/spec/games/hexgrid.md); no game rules.

A cell is an axial ``(q, r)`` tuple. Two board shapes exist:

- ``RhombusBoard(n)``: the n x n Hex board of KnightVision and Lox, named in Hex-board
  notation (``a1``, ``k11``), row 1 drawn at the top;
- ``HexHexBoard(base)``: the hexagon of Uknight, named in MindSports notation (``A1`` at the
  bottom corner, ``E5`` the centre of base 5).

Listing the legal moves of a position must take milliseconds, so every table a game looks
up (neighbours, rays, knight cells, lines, edges) is built once per board size: boards are
cached, and ``RhombusBoard(11) is RhombusBoard(11)``. The rays, knight cells and lines are
built when first looked up: a mail pays for the tables it builds, and Lox never looks at
knight cells or lines. Treat a board and its tables as read-only.
"""

import functools
import math
import re
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Collection, Iterable, Mapping
from typing import NamedTuple

from pbm import drawing

Cell = tuple[int, int]
Symbols = Mapping[Cell, str] | Callable[[Cell], str]

# D0..D5 of docs/spec/games/hexgrid.md §1.1; D(i+3) is the opposite of D(i).
DIRECTIONS: tuple[Cell, ...] = ((1, 0), (1, -1), (0, -1), (-1, 0), (-1, 1), (0, 1))

# docs/spec/games/hexgrid.md §3.2 order: two steps along D0 then one along D5, two along D0 and one
# along D1, ...
KNIGHT_OFFSETS: tuple[Cell, ...] = (
    (2, 1), (3, -1), (3, -2), (2, -3), (1, -3), (-1, -2),
    (-2, -1), (-3, 1), (-3, 2), (-2, 3), (-1, 3), (1, 2),
)  # fmt: skip
_KNIGHT_OFFSET_SET = frozenset(KNIGHT_OFFSETS)


def cube(cell: Cell) -> tuple[int, int, int]:
    q, r = cell
    return q, -q - r, r


def distance(a: Cell, b: Cell) -> int:
    dq, dr = b[0] - a[0], b[1] - a[1]
    return max(abs(dq), abs(dr), abs(dq + dr))


def step(cell: Cell, direction: int, times: int = 1) -> Cell:
    dq, dr = DIRECTIONS[direction]
    return cell[0] + times * dq, cell[1] + times * dr


def opposite(direction: int) -> int:
    return (direction + 3) % 6


def line_direction(start: Cell, end: Cell) -> int | None:
    """The direction leading from start to end along a line, or None (also when equal)."""
    dq, dr = end[0] - start[0], end[1] - start[1]
    if (dq, dr) == (0, 0) or (dq and dr and dq != -dr):
        return None
    length = max(abs(dq), abs(dr))
    return DIRECTIONS.index((dq // length, dr // length))


def cells_between(start: Cell, end: Cell) -> tuple[Cell, ...]:
    """The cells strictly between two cells of one line; ValueError if not on a line."""
    direction = line_direction(start, end)
    if direction is None:
        raise ValueError(f"{start} and {end} are not on one line")
    return tuple(step(start, direction, i) for i in range(1, distance(start, end)))


def is_knight_move(start: Cell, end: Cell) -> bool:
    return (end[0] - start[0], end[1] - start[1]) in _KNIGHT_OFFSET_SET


class HexBoard(ABC):
    """Precomputed geometry of one board; use RhombusBoard or HexHexBoard.

    Public attributes (all read-only):
      size            n for a rhombus, the base b for a hexhex board
      cells           every cell, ordered by letter then number (see sort_key)
      neighbours      cell -> adjacent cells, in direction order D0..D5
      neighbour_count cell -> len(neighbours[cell]) (docs/spec/games/hexgrid.md §5)
      knights         cell -> its knight cells on the board, in docs/spec/games/hexgrid.md §3.2 order
      rays            cell -> six tuples, ray d = cells along direction d to the edge
      lines           every line of the board, each ordered along D0, D1 or D2
      corners         the corner cells, in the spec's order round the board
      edges           edge i = the straight side from corners[i] to corners[i + 1]
      border          every cell with fewer than six neighbours
      direction_names how D0..D5 look on this shape's picture
    """

    shape: str
    direction_names: tuple[str, ...]
    min_size: int
    max_size: int

    size: int
    cells: tuple[Cell, ...]
    neighbours: dict[Cell, tuple[Cell, ...]]
    neighbour_count: dict[Cell, int]
    corners: tuple[Cell, ...]
    edges: tuple[frozenset[Cell], ...]
    border: frozenset[Cell]

    def __new__(cls, size: int):
        if type(size) is not int or not cls.min_size <= size <= cls.max_size:
            raise ValueError(
                f"a {cls.shape} board size must be an integer from {cls.min_size} "
                f"to {cls.max_size}, not {size!r}"
            )
        return _built_board(cls, size)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.size})"

    def __contains__(self, cell: object) -> bool:
        return cell in self._cell_set

    def __len__(self) -> int:
        return len(self.cells)

    # -- construction, once per (shape, size) ----------------------------------------

    def _build(self, size: int) -> None:
        self.size = size
        self.cells = tuple(self._generate_cells())
        self._cell_set = cell_set = frozenset(self.cells)
        self.neighbours = {
            cell: tuple(
                near
                for near in ((cell[0] + dq, cell[1] + dr) for dq, dr in DIRECTIONS)
                if near in cell_set
            )
            for cell in self.cells
        }
        self.neighbour_count = {cell: len(near) for cell, near in self.neighbours.items()}
        self.corners = self._corner_cells()
        self.edges = tuple(
            frozenset((corner,) + cells_between(corner, following) + (following,))
            for corner, following in zip(self.corners, self.corners[1:] + self.corners[:1])
        )
        self.border = frozenset(cell for cell, count in self.neighbour_count.items() if count < 6)
        self._names = {cell: self._format(cell) for cell in self.cells}
        self._by_name = {name: cell for cell, name in self._names.items()}

    @functools.cached_property
    def rays(self) -> dict[Cell, tuple[tuple[Cell, ...], ...]]:
        # Both shapes are convex, so the ray from a cell along d is the rest of its line
        # along d: sliced from the lines, not walked a step at a time.
        six: dict[Cell, list[tuple[Cell, ...]]] = {
            cell: [(), (), (), (), (), ()] for cell in self.cells
        }
        for d, lines in enumerate(self._lines_by_direction):
            for line in lines:
                for i, cell in enumerate(line):
                    six[cell][d] = line[i + 1 :]
                    six[cell][d + 3] = line[i - 1 :: -1] if i else ()
        return {cell: tuple(rays) for cell, rays in six.items()}

    @functools.cached_property
    def knights(self) -> dict[Cell, tuple[Cell, ...]]:
        return {
            cell: tuple(
                target
                for target in ((cell[0] + dq, cell[1] + dr) for dq, dr in KNIGHT_OFFSETS)
                if target in self._cell_set
            )
            for cell in self.cells
        }

    @functools.cached_property
    def _lines_by_direction(self) -> tuple[tuple[tuple[Cell, ...], ...], ...]:
        """The lines along D0, D1 and D2, each walked from its first cell."""
        return tuple(
            tuple(
                self._walk(cell, d)
                for cell in self.cells
                if step(cell, opposite(d)) not in self._cell_set
            )
            for d in range(3)
        )

    @functools.cached_property
    def lines(self) -> tuple[tuple[Cell, ...], ...]:
        return sum(self._lines_by_direction, ())

    def _walk(self, cell: Cell, direction: int) -> tuple[Cell, ...]:
        """The cell and the cells after it along the direction, to the edge."""
        line = [cell]
        current = step(cell, direction)
        while current in self._cell_set:
            line.append(current)
            current = step(current, direction)
        return tuple(line)

    # -- notation ----------------------------------------------------------------------

    def name(self, cell: Cell) -> str:
        """The canonical name of a cell of this board; KeyError for a cell off the board."""
        return self._names[cell]

    def names(self, cells: Iterable[Cell]) -> list[str]:
        """Canonical names of the cells, sorted in notation order (e.g. for messages)."""
        return [self._names[cell] for cell in sorted(cells, key=self.sort_key)]

    def parse(self, text: str) -> Cell:
        """The cell named by text, in any case; ValueError saying what is wrong otherwise."""
        cell = self._by_name.get(self._normalise(text.strip()))
        if cell is None:
            raise ValueError(self._explain_bad_name(text.strip()))
        return cell

    @abstractmethod
    def sort_key(self, cell: Cell) -> tuple[int, int]:
        """Orders cells by letter, then by number, as names are usually listed."""

    # -- lines and line of sight (docs/spec/games/hexgrid.md §2 and §4) ----------------

    def sight(self, cell: Cell, occupied: Collection[Cell]) -> tuple[Cell | None, ...]:
        """For each direction D0..D5, the first occupied cell on the ray, or None.

        occupied is anything supporting `in` (a set, or a dict keyed by cell). The cell
        itself is never part of its rays, so a stone standing on it is ignored.
        """
        seen: list[Cell | None] = []
        for ray in self.rays[cell]:
            first = None
            for other in ray:
                if other in occupied:
                    first = other
                    break
            seen.append(first)
        return tuple(seen)

    def seen(self, cell: Cell, occupied: Collection[Cell]) -> list[Cell]:
        """The stones the cell sees (at most one per direction), in direction order."""
        return [other for other in self.sight(cell, occupied) if other is not None]

    def seen_map(self, occupied: Collection[Cell]) -> dict[Cell, list[Cell]]:
        """seen(cell, occupied) for every cell at once.

        One sweep each way along every line instead of a walk per cell: about twice as fast
        as calling seen() for each cell of a sparse 19x19 board.
        """
        firsts: dict[Cell, list[Cell | None]] = {cell: [None] * 6 for cell in self.cells}
        for direction, lines in enumerate(self._lines_by_direction):
            behind = opposite(direction)
            for line in lines:
                last = None
                for cell in line:
                    firsts[cell][behind] = last
                    if cell in occupied:
                        last = cell
                last = None
                for cell in reversed(line):
                    firsts[cell][direction] = last
                    if cell in occupied:
                        last = cell
        return {cell: [other for other in row if other is not None] for cell, row in firsts.items()}

    # -- connectivity ------------------------------------------------------------------

    def groups(self, cells: Iterable[Cell]) -> list[frozenset[Cell]]:
        """The given cells split into groups connected through shared edges."""
        remaining = set(cells)
        found = []
        while remaining:
            frontier = [remaining.pop()]
            group = set(frontier)
            while frontier:
                for near in self.neighbours[frontier.pop()]:
                    if near in remaining:
                        remaining.discard(near)
                        group.add(near)
                        frontier.append(near)
            found.append(frozenset(group))
        return found

    def joins(self, cells: Iterable[Cell], edge: Collection[Cell], other: Collection[Cell]) -> bool:
        """Whether some group of the cells touches both edges (a Hex-style chain)."""
        return bool(self.chain(cells, edge, other))

    def chain(
        self, cells: Iterable[Cell], edge: Collection[Cell], other: Collection[Cell]
    ) -> frozenset[Cell]:
        """The cells of every group that touches both edges: the chain that wins a
        connection game, with its branches; empty when there is none."""
        return frozenset().union(
            *(
                group
                for group in self.groups(cells)
                if not group.isdisjoint(edge) and not group.isdisjoint(other)
            )
        )

    # -- subclass hooks ----------------------------------------------------------------

    @abstractmethod
    def _generate_cells(self) -> Iterable[Cell]: ...

    @abstractmethod
    def _corner_cells(self) -> tuple[Cell, ...]: ...

    @abstractmethod
    def _format(self, cell: Cell) -> str: ...

    @abstractmethod
    def _normalise(self, text: str) -> str: ...

    @abstractmethod
    def _explain_bad_name(self, text: str) -> str: ...


@functools.cache
def _built_board(cls: type[HexBoard], size: int) -> HexBoard:
    board = object.__new__(cls)
    board._build(size)
    return board


_NAME_RE = re.compile(r"([a-z])([0-9]+)", re.IGNORECASE)


class RhombusBoard(HexBoard):
    """The n x n Hex board (docs/spec/games/hexgrid.md §6): columns a.., rows 1..n, row 1 at the
    top.

    Corners (a1, last of row 1, last of row n, first of row n) and edges (top, right,
    bottom, left) go clockwise round the picture. a1 and the last cell of row n are the
    acute corners.
    """

    shape = "rhombus"
    direction_names = ("right", "up-right", "up-left", "left", "down-left", "down-right")
    min_size = 2
    max_size = 26

    @property
    def top(self) -> frozenset[Cell]:
        return self.edges[0]

    @property
    def right(self) -> frozenset[Cell]:
        return self.edges[1]

    @property
    def bottom(self) -> frozenset[Cell]:
        return self.edges[2]

    @property
    def left(self) -> frozenset[Cell]:
        return self.edges[3]

    def sort_key(self, cell: Cell) -> tuple[int, int]:
        return cell

    def _generate_cells(self) -> Iterable[Cell]:
        return ((q, r) for q in range(self.size) for r in range(self.size))

    def _corner_cells(self) -> tuple[Cell, ...]:
        last = self.size - 1
        return (0, 0), (last, 0), (last, last), (0, last)

    def _format(self, cell: Cell) -> str:
        return f"{chr(ord('a') + cell[0])}{cell[1] + 1}"

    def _normalise(self, text: str) -> str:
        return text.lower()

    def _explain_bad_name(self, text: str) -> str:
        n = self.size
        where = f"the columns are a to {chr(ord('a') + n - 1)} and the rows 1 to {n}"
        if not _NAME_RE.fullmatch(text):
            return f'"{text}" is not a cell name: write a column letter and a row number, e.g. e5'
        return f'"{text}" is not a cell of this {n}x{n} board: {where}'

    def draw(self, symbols: Symbols, marks: Iterable[Cell] = ()) -> str:
        """The Hex-board picture of docs/spec/games/hexgrid.md §6.3, one character per cell.

        symbols gives each cell's character: a function of the cell, or a mapping where
        missing cells are drawn "." . Cells in marks (e.g. the last move) are drawn in
        brackets, "[R]", which take the place of the blanks around the cell; two marked
        cells side by side share a "|", "[R|B]". Two blanks always stay between a row label
        and the brackets, so no mark moves a label or a cell.
        """
        n = self.size
        symbol = _symbol_function(self, symbols)
        marked = _checked_marks(self, marks)
        letters = " ".join(chr(ord("a") + q) for q in range(n))
        picture = [" " * 7 + letters]
        marked_rows = {r for _, r in marked}
        for r in range(n):
            texts = [symbol((q, r)) for q in range(n)]
            row = _row(texts, [(q, r) in marked for q in range(n)] if r in marked_rows else ())
            label = str(r + 1)
            picture.append(f"{' ' * r}{label:>4}  {row}  {label}")
        picture.append(" " * (n + 7) + letters)
        return "\n".join(picture)


class HexHexBoard(HexBoard):
    """The hexhex board of base b (docs/spec/games/hexgrid.md §7), MindSports notation, A1 at the
    bottom corner.

    Letter L and number N (0-based) are the axial (q, r) = (L, -N). Corners go round as in
    docs/spec/games/hexgrid.md §7.2: A1, E1, I5, I9, E9, A5 on base 5.
    """

    shape = "hexhex"
    direction_names = ("up-right", "up", "up-left", "down-left", "down", "down-right")
    min_size = 2
    max_size = 13

    def sort_key(self, cell: Cell) -> tuple[int, int]:
        return cell[0], -cell[1]

    def _generate_cells(self) -> Iterable[Cell]:
        span = 2 * self.size - 1
        return (
            (letter, -number)
            for letter in range(span)
            for number in range(span)
            if abs(letter - number) <= self.size - 1
        )

    def _corner_cells(self) -> tuple[Cell, ...]:
        side, span = self.size - 1, 2 * self.size - 2
        return (0, 0), (side, 0), (span, -side), (span, -span), (side, -span), (0, -side)

    def _format(self, cell: Cell) -> str:
        return f"{chr(ord('A') + cell[0])}{1 - cell[1]}"

    def _normalise(self, text: str) -> str:
        return text.upper()

    def _explain_bad_name(self, text: str) -> str:
        span = 2 * self.size - 1
        last_letter = chr(ord("A") + span - 1)
        match = _NAME_RE.fullmatch(text)
        if not match:
            return f'"{text}" is not a cell name: write a letter and a number, e.g. E5'
        letter = ord(match.group(1).upper()) - ord("A")
        if letter >= span:
            return (
                f'"{text}" is not a cell of this base-{self.size} board: '
                f"the letters are A to {last_letter}"
            )
        numbers = [1 - r for q, r in self.cells if q == letter]
        line = chr(ord("A") + letter)
        return (
            f'"{text}" is not a cell of this base-{self.size} board: line {line} holds '
            f"{line}{min(numbers)} to {line}{max(numbers)}"
        )

    def draw(self, symbols: Symbols, marks: Iterable[Cell] = ()) -> str:
        """The hexhex picture for mail (docs/spec/games/hexgrid.md §7.4, pbm note): one text
        row per number line, number 1 at the bottom, labelled on both ends.

        Drawn like the rhombus picture, cells 2 characters apart and each row one character
        further left than the row below, so a letter line runs up-left. A letter stands at
        an end of its line: above the top row for the lines that reach it, below the bottom
        row for those that start on it. symbols and marks work as in RhombusBoard.draw.
        """
        b, span = self.size, 2 * self.size - 1
        symbol = _symbol_function(self, symbols)
        marked = _checked_marks(self, marks)
        margin = b + 4  # room for the label of the longest row, the lowest left

        def column(letter: int, number: int) -> int:  # 0-based letter and number
            return margin + 2 * letter - number

        marked_rows = {r for _, r in marked}
        letters = [chr(ord("A") + index) for index in range(span)]
        # The lines from the middle one on reach the top row; those up to it start on the
        # bottom row (docs/spec/games/hexgrid.md §7.4).
        top, bottom = letters[b - 1 :], letters[:b]
        picture = [_spread(top, column(b - 1, span - 1), column(span - 1, span - 1))]
        for number in range(span - 1, -1, -1):
            row_letters = range(max(0, number - (b - 1)), min(span - 1, number + b - 1) + 1)
            row_cells = [(letter, -number) for letter in row_letters]
            flags = [c in marked for c in row_cells] if -number in marked_rows else ()
            row = _row([symbol(cell) for cell in row_cells], flags)
            label = str(number + 1)
            start = column(row_letters[0], number) - 1  # the separator before the first cell
            picture.append(f"{' ' * (start - 4)}{label:>2}  {row}  {label}")
        picture.append(_spread(bottom, column(0, -1), column(b - 1, -1)))
        return "\n".join(picture)


def _spread(letters: list[str], first: int, last: int) -> str:
    """The letters one every other column, the first in column first."""
    assert last - first == 2 * (len(letters) - 1)
    return " " * first + " ".join(letters)


def _symbol_function(board: HexBoard, symbols: Symbols) -> Callable[[Cell], str]:
    """Each cell's character, checked: a mapping's characters all at once (a board has a
    handful of pieces and many cells, so a cell is then one look-up), a function's as it
    gives them, each different one once."""
    valid = {"."}

    def check(cell: Cell, text) -> None:
        if not (
            isinstance(text, str)
            and len(text) == 1
            and text.isascii()
            and text.isprintable()
            and text != " "
        ):
            raise ValueError(
                f"the symbol for {board.name(cell)} must be one printable ASCII character "
                f"other than a blank, not {text!r}"
            )
        valid.add(text)

    if isinstance(symbols, Mapping):
        for cell, text in symbols.items():
            if not (isinstance(text, str) and text in valid) and cell in board:
                check(cell, text)
        get = symbols.get
        return lambda cell: get(cell, ".")

    def checked(cell: Cell) -> str:
        text = symbols(cell)
        if not (isinstance(text, str) and text in valid):
            check(cell, text)
        return text

    return checked


def _checked_marks(board: HexBoard, marks: Iterable[Cell]) -> frozenset[Cell]:
    marked = frozenset(marks)
    strays = [cell for cell in marked if cell not in board]
    if strays:
        raise ValueError(f"cannot mark {strays}: not cells of {board!r}")
    return marked


def _row(texts: list[str], marked) -> str:
    """One row of a text board: the cells one blank apart and a blank at each end, where a
    marked cell's blanks become brackets and two marked neighbours share a "|". `marked`:
    a flag for each cell, or none for a row without a mark."""
    if not any(marked):  # all rows but the last move's: drawn at the speed of a join
        return " " + " ".join(texts) + " "
    flags = [False, *marked, False]
    return "".join(
        _separator(flags[i], flags[i + 1]) + text for i, text in enumerate(texts)
    ) + _separator(flags[-2], False)


def _separator(left_marked: bool, right_marked: bool) -> str:
    if left_marked:
        return "|" if right_marked else "]"
    return "[" if right_marked else " "


# -- pictures (docs/spec/server.md §10.4): cells as pointy-top hexagons -------------------

SQRT3 = math.sqrt(3)
PICTURE_WIDTH = 600  # px: a hex board picture is this wide whatever its size


def pixel_centre(cell: Cell, radius: float) -> tuple[float, float]:
    """The centre of a cell's hexagon of the given circumradius, a1 (or A1) at (0, 0).

    The same formula draws both shapes as their text pictures do: on the rhombus each row
    starts half a cell further right than the one above; on the hexhex board a higher
    number is higher up and its row starts half a cell further left.
    """
    q, r = cell
    return radius * SQRT3 * (q + r / 2), radius * 1.5 * r


def hexagon(centre: tuple[float, float], radius: float) -> tuple[tuple[float, float], ...]:
    """The six corners of a pointy-top hexagon, clockwise from the lower right."""
    x, y = centre
    return tuple(
        (
            x + radius * math.cos(math.radians(30 + 60 * k)),
            y + radius * math.sin(math.radians(30 + 60 * k)),
        )
        for k in range(6)
    )


def side(
    centre: tuple[float, float], radius: float, direction: int
) -> tuple[tuple[float, float], ...]:
    """The two corners of a hexagon's side facing the neighbour in the given direction."""
    dx, dy = pixel_centre(DIRECTIONS[direction], 1.0)
    facing = math.degrees(math.atan2(dy, dx))
    x, y = centre
    return tuple(
        (
            x + radius * math.cos(math.radians(facing + turn)),
            y + radius * math.sin(math.radians(facing + turn)),
        )
        for turn in (-30, 30)
    )


class HexPicture(NamedTuple):
    """A hex board laid out for pictures: its drawing.Backdrop, and per cell its centre and
    hexagon in pixels, and the circumradius of a cell."""

    backdrop: "drawing.Backdrop"  # quoted: pbm.drawing loads its types at first use
    centres: dict[Cell, tuple[float, float]]
    hexagons: dict[Cell, tuple[tuple[float, float], ...]]
    radius: float

    @property
    def piece_radius(self) -> float:
        """A piece leaves a rim of its cell free, where the last move's highlight shows."""
        return self.radius * 0.64


@functools.cache
def hex_picture(board: HexBoard, edge_colours: tuple[str | None, ...] = ()) -> HexPicture:
    """The picture of a board: its cells, and the letters and numbers at both ends of every
    line, one step beyond the last cell. edge_colours colours the outer sides of edge i
    (board.edges order; None leaves an edge plain), e.g. the edges each side must join."""
    spots: dict[Cell, str] = {}
    names = {cell: _NAME_RE.fullmatch(board.name(cell)).groups() for cell in board.cells}
    # numbers first, at both ends of their rows; then letters at both ends of their lines,
    # a step further out where a number already stands (the hexhex board's slanted sides)
    for index, directions in ((1, (3, 0)), (0, (2, 5))):
        for cell, name in names.items():
            for direction in directions:
                beyond = step(cell, direction)
                if beyond in board:
                    continue
                while spots.get(beyond, name[index]) != name[index]:
                    beyond = step(beyond, direction)
                spots[beyond] = name[index]
    label_spots = list(spots.items())
    unit_spots = [pixel_centre(cell, 1.0) for cell in board.cells]
    unit_spots += [pixel_centre(spot, 1.0) for spot, _ in label_spots]
    left = min(x for x, _ in unit_spots) - 1.0
    top = min(y for _, y in unit_spots) - 1.0
    span_x = max(x for x, _ in unit_spots) + 1.0 - left
    span_y = max(y for _, y in unit_spots) + 1.0 - top
    radius = PICTURE_WIDTH / span_x

    def place(cell: Cell) -> tuple[float, float]:
        x, y = pixel_centre(cell, radius)
        return x - left * radius, y - top * radius

    centres = {cell: place(cell) for cell in board.cells}
    hexagons = {cell: hexagon(centre, radius) for cell, centre in centres.items()}
    lines = []
    for edge, colour in zip(board.edges, edge_colours):
        if colour is None:
            continue
        middle = sorted(edge, key=board.sort_key)[len(edge) // 2]
        outward = [d for d in range(6) if step(middle, d) not in board]
        for cell in edge:
            for direction in outward:
                if step(cell, direction) not in board:
                    start, end = side(centres[cell], radius, direction)
                    lines.append(drawing.Line(start, end, colour, max(3.0, radius / 4)))
    labels = tuple(
        drawing.Text(*place(spot), text, min(16.0, radius * 0.8)) for spot, text in label_spots
    )
    backdrop = drawing.Backdrop(
        width=PICTURE_WIDTH,
        height=math.ceil(span_y * radius),
        cells=tuple(drawing.Polygon(hexagons[cell], drawing.CELL) for cell in board.cells),
        lines=tuple(lines),
        labels=labels,
    )
    return HexPicture(backdrop, centres, hexagons, radius)


# -- flat tables for the fast game engines (issue 21) ----------------------------------------
#
# The engines of KnightVision, Lox and Uknight keep a cell as an int and a set of cells as an
# int bit set. With (a, b) = board.sort_key(cell), (q, r) or (q, -r), a cell is bit
# (a - a0) * stride + (b - b0) of a grid one cell taller than the board's bounding box (a0, b0
# its lowest corner), so that indices ascend in notation order (listings come out in the order
# the rules' texts always had), every step D0..D5 is a fixed shift, and a step off the board
# lands on a bit no cell has (the spare row, or outside the hexagon): a shift of a whole bit set
# moves every stone one step at once, and masking with the board drops what fell off.


class CellTables:
    """One board's geometry as flat per-cell tables indexed by a cell's bit number.

    Attributes (read-only):
      board       the HexBoard
      cells       every cell's index, in the board's notation order (board.cells)
      index       Cell -> index;  cell_at: index -> Cell (None on spare bits)
      names       index -> canonical name (None on spare bits)
      neighbours  index -> adjacent indices, D0..D5 order;  neighbour_count likewise
      knights     index -> knight-cell indices, docs/spec/games/hexgrid.md §3.2 order
      rays        index -> six tuples of indices, ray d outwards along direction d
      line_masks  index -> the cells of its six rays as a bit set (the cells on a line with it)
      knight_masks  index -> its knight cells as a bit set
      bits        index -> 1 << index;  mask: every cell's bit
      edge_masks  edge i of board.edges as a bit set
      shifts      the index step of D0..D5
    """

    def __init__(self, board: HexBoard):
        self.board = board
        keys = {cell: board.sort_key(cell) for cell in board.cells}
        a0 = min(a for a, _ in keys.values())
        b0 = min(b for _, b in keys.values())
        self.stride = stride = max(b for _, b in keys.values()) - b0 + 2
        self.index = {cell: (a - a0) * stride + (b - b0) for cell, (a, b) in keys.items()}
        self.cells = tuple(self.index[cell] for cell in board.cells)
        length = max(self.cells) + 1
        self.length = length
        self.cell_at: list[Cell | None] = [None] * length
        for cell, number in self.index.items():
            self.cell_at[number] = cell

        index = self.index
        self.names = self._per_cell(board.name)
        self.neighbours = self._per_cell(
            lambda cell: tuple(index[c] for c in board.neighbours[cell])
        )
        self.neighbour_count = self._per_cell(board.neighbour_count.get)
        self.bits = [1 << number for number in range(length)]
        self.mask = sum(1 << number for number in self.cells)
        self.edge_masks = tuple(sum(1 << index[c] for c in edge) for edge in board.edges)
        origin = board.sort_key((0, 0))
        self.shifts = tuple(
            (a - origin[0]) * stride + (b - origin[1])
            for a, b in (board.sort_key(direction) for direction in DIRECTIONS)
        )
        self._grow_shifts = tuple(abs(shift) for shift in self.shifts[:3])  # D3..D5: opposites
        self._byte_count = (length + 7) // 8

    def _per_cell(self, value: Callable[[Cell], object]) -> list:
        table: list = [None] * self.length
        for cell, number in self.index.items():
            table[number] = value(cell)
        return table

    # Built when first looked up, as the board's own rays and knight cells are.
    @functools.cached_property
    def knights(self) -> list:
        index, knights = self.index, self.board.knights
        return self._per_cell(lambda cell: tuple(index[c] for c in knights[cell]))

    @functools.cached_property
    def rays(self) -> list:
        index, rays = self.index, self.board.rays
        return self._per_cell(
            lambda cell: tuple(tuple(index[c] for c in ray) for ray in rays[cell])
        )

    @functools.cached_property
    def knight_masks(self) -> list:
        return [
            None if near is None else sum(1 << other for other in near) for near in self.knights
        ]

    @functools.cached_property
    def line_masks(self) -> list:
        return [
            None if rays is None else sum(1 << other for ray in rays for other in ray)
            for rays in self.rays
        ]

    def grow(self, cells: int, within: int) -> int:
        """The cells of within connected to cells (a bit set) through cells of within."""
        reached = cells & within
        one, two, three = self._grow_shifts
        while True:
            grown = (
                reached
                | reached << one
                | reached >> one
                | reached << two
                | reached >> two
                | reached << three
                | reached >> three
            ) & within
            if grown == reached:
                return reached
            reached = grown

    def adjacent(self, cells: int) -> int:
        """Every cell next to one of the cells (a bit set), as a bit set."""
        one, two, three = self._grow_shifts
        return (
            cells << one
            | cells >> one
            | cells << two
            | cells >> two
            | cells << three
            | cells >> three
        ) & self.mask

    def joins(self, cells: int, edge: int, other: int) -> bool:
        """Whether a group of the cells (a bit set) touches both edge bit sets."""
        if not (cells & edge and cells & other):
            return False
        return bool(self.grow(cells & edge, cells) & other)

    def united(self, cells: int) -> bool:
        """Whether the cells (a bit set) are at least one and all in one group."""
        return bool(cells) and self.grow(cells & -cells, cells) == cells

    def indices(self, cells: int) -> list[int]:
        """The indices of a bit set, lowest first: byte by byte, each byte's bits looked up."""
        found = []
        for byte, bits in zip(cells.to_bytes(self._byte_count, "little"), self._bits_at):
            if byte:
                found += bits[byte]
        return found

    @functools.cached_property
    def _bits_at(self) -> list[tuple[tuple[int, ...], ...]]:
        """_BITS_AT grown to this board's bytes when it first lists a bit set (Lox never
        does: its mails do not build the 256 lists of each byte)."""
        with _BITS_AT_GROWING:
            for offset in range(len(_BITS_AT), self._byte_count):
                # byte k's lists are byte 0's shifted by 8k: mapped, not recounted bit by bit
                shift = (8 * offset).__add__
                _BITS_AT.append(tuple([tuple(map(shift, bits)) for bits in _BITS_AT[0]]))
        return _BITS_AT


# _BITS_AT[k][byte]: the indices of the bits of byte k of a bit set; shared by every board,
# grown to the largest board's length, by one thread at a time (a row at a wrong offset
# would list wrong cells).
_BITS_AT: list[tuple[tuple[int, ...], ...]] = [
    tuple(tuple(b for b in range(8) if byte >> b & 1) for byte in range(256))
]
_BITS_AT_GROWING = threading.Lock()


@functools.cache
def cell_tables(board: HexBoard) -> CellTables:
    """The flat tables of a board, built once per board (boards are cached per size)."""
    return CellTables(board)
