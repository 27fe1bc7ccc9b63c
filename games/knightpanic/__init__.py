"""Knight Panic (Cameron Browne, 2009): move chess knights, trap one of the opponent's.

Coordinates are doubled (docs/spec/games/knightpanic.md §1): files a c e g i k m and ranks 1 3 5 ...
name the cells; the letters and numbers in between (b d f ..., 2 4 6 ...) name the raised
points of the 3D variant. A piece is stored as [X, Y, level, seat] with X = letter - 'a',
Y = number - 1; the 2D game keeps every piece on level 1.
"""

import functools
import math
from typing import NamedTuple

from pbm import drawing, hookimpl
from pbm.engine import StateEngines
from pbm.game import BaseGame, MoveError, Number, Switch

from .engine import (
    BLACK,
    DIAGONALS,
    LEVEL_CHANGES,
    MOVE_RE,
    PLAYER_NAMES,
    WHITE,
    KnightPanicEngine,
    cell_name,
)

SYMBOLS = ("o", "x")

# Pictures: White's knights white, Black's black, each with its symbol of the text board (o,
# x), so the picture, the text board and "You are White (o)" agree; a pinned knight gets a
# vermillion ring, a raised one its level in a badge, and is drawn smaller the higher it is.
PIECE_FILLS = (drawing.WHITE, drawing.BLACK)
LETTER_COLOURS = (drawing.INK, drawing.WHITE)
PINNED_RING = drawing.VERMILLION
PICTURE_WIDTH = 600
CELL_MAX = 72  # px
LABEL_ROOM = 30  # px for the coordinates on each side

SETUP_ROWS = {  # White's rows from the bottom; Black's mirror them
    4: ["oooo"],
    5: ["ooooo", "o...o"],
    6: ["oooooo", "oo..oo", "o....o"],
    7: ["ooooooo", "oo...oo", "o.....o"],
}


def highest_fillable_level(piece_count: int) -> int:
    """A knight on level k stands on a pyramid of k^2 + ... + 4 + 1 knights, itself included."""
    level = 1
    while sum(k * k for k in range(1, level + 2)) <= piece_count:
        level += 1
    return level


def _joined(words: list[str]) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


class Pieces:
    """The pieces of a state by point (x, y, level), with the move rules of
    docs/spec/games/knightpanic.md §3 and §5."""

    def __init__(self, state):
        options = state["options"]
        self.size = options["size"]
        self.three_d = options["3d"]
        self.top_level = self.size if self.three_d else 1
        self.owner = {(x, y, level): seat for x, y, level, seat in state["pieces"]}
        self.highest = {}
        for x, y, level, _seat in state["pieces"]:
            self.highest[(x, y)] = max(level, self.highest.get((x, y), 0))

    def exists(self, x, y, level) -> bool:
        low, high = level - 1, 2 * self.size - 1 - level
        return (
            1 <= level <= self.top_level
            and x % 2 == y % 2 == (level - 1) % 2
            and low <= x <= high
            and low <= y <= high
        )

    def names_a_point(self, x, y) -> bool:
        return any(self.exists(x, y, level) for level in (1, 2))

    def lowest_empty(self, x, y) -> int | None:
        # The pieces at one (X, Y) fill its levels from the bottom without gaps: a piece two
        # levels up rests on four pieces that all rest on the one below.
        top = self.highest.get((x, y))
        level = top + 2 if top else 1 + x % 2
        return level if self.exists(x, y, level) else None

    @staticmethod
    def supports(x, y, level) -> list[tuple[int, int, int]]:
        return [(x + dx, y + dy, level - 1) for dx, dy in DIAGONALS]

    def resting_on(self, x, y, level) -> list[tuple[int, int, int]]:
        above = [(x + dx, y + dy, level + 1) for dx, dy in DIAGONALS]
        return [point for point in above if point in self.owner]

    def pinned(self, point) -> bool:
        return bool(self.resting_on(*point))

    def empty_supports(self, point, leaving) -> list[tuple[int, int, int]]:
        """The points under a raised point that are empty once the piece on leaving has left."""
        if point[2] == 1:
            return []
        return [s for s in self.supports(*point) if s not in self.owner or s == leaving]

    def targets(self, point):
        """The points the unpinned piece on point can jump to."""
        x, y, level = point
        for (dx, dy), changes in LEVEL_CHANGES.items():
            tx, ty = x + dx, y + dy
            target_level = self.lowest_empty(tx, ty)
            if target_level is None or target_level - level not in changes:
                continue
            target = (tx, ty, target_level)
            if not self.empty_supports(target, leaving=point):
                yield target

    def pieces_of(self, seat) -> list[tuple[int, int, int]]:
        return sorted(point for point, owner in self.owner.items() if owner == seat)

    def all_pinned(self, seat) -> bool:
        return all(self.pinned(point) for point in self.pieces_of(seat))

    def label(self, point) -> str:
        x, y, level = point
        return cell_name(x, y) if level == 1 else f"{cell_name(x, y)} (level {level})"


class KnightPanic(BaseGame):
    name = "knightpanic"
    display_name = "KnightPanic"
    same_view_for_all = True  # no hidden information: one board for every reader
    player_names = PLAYER_NAMES
    seat_symbols = SYMBOLS
    min_players = 2
    max_players = 2

    options = (
        Number("size", 4, "board size", low=4, high=7),
        Switch("3d", "2d", "the flat game or the 3D variant"),
        Switch("mover_loses", "mover_wins", "who wins a double trap"),
        Switch(
            "win_no_move",
            "lose_no_move",
            "in 3D, whether a player whose knights are all pinned loses or wins; accepted "
            "and ignored in 2D",
        ),
    )

    def __init__(self):
        self._engines = StateEngines(KnightPanicEngine.from_state)

    # -- state ---------------------------------------------------------------------

    def initial_state(self, options, players, seed):
        n = options["size"]
        pieces = []
        for row_index, row in enumerate(SETUP_ROWS[n]):
            for column, mark in enumerate(row):
                if mark == "o":
                    pieces.append([2 * column, 2 * row_index, 1, WHITE])
                    pieces.append([2 * column, 2 * (n - 1 - row_index), 1, BLACK])
        return {
            "options": options,
            "pieces": sorted(pieces),
            "to_move": WHITE,
            "last": None,
            "winner": None,
            "reason": "",
        }

    # -- moves ---------------------------------------------------------------------

    def _coordinates(self, state, board, letter, number) -> tuple[int, int]:
        x, y = ord(letter) - ord("a"), int(number) - 1
        if board.names_a_point(x, y):
            return x, y
        if not board.three_d:
            raise MoveError(
                f'"{letter}{number}" is not a cell of this board; the files are '
                f"{' '.join(self.files(state))} and the ranks {' '.join(self.ranks(state))}"
            )
        raise MoveError(
            f'"{letter}{number}" is not a point of this board; the cells are files '
            f"{' '.join(self.files(state))} with ranks {' '.join(self.ranks(state))}, and the "
            f"raised points letters {' '.join(self.files(state, 2))} with numbers "
            f"{' '.join(self.ranks(state, 2))}"
        )

    def _doubling_hint(self, state, board, seat, match) -> str:
        """How doubled coordinates work, with the move read as standard chess names
        (docs/spec/games/knightpanic.md §1) and the legal moves of the knight it names."""
        n = state["options"]["size"]
        chess_files = " ".join(chr(ord("a") + i) for i in range(n))
        chess_ranks = " ".join(str(i + 1) for i in range(n))
        explanation = (
            f"Coordinates are doubled: the chess files {chess_files} are "
            f"{' '.join(self.files(state))} here and the chess ranks {chess_ranks} are "
            f"{' '.join(self.ranks(state))}"
        )
        start = self._from_chess(board, n, match.group(1), match.group(2))
        end = self._from_chess(board, n, match.group(3), match.group(4))
        if start is None or end is None:
            return explanation
        written = f"{match.group(1)}{match.group(2)}-{match.group(3)}{match.group(4)}"
        explanation += f", so chess {written} is {cell_name(*start)}-{cell_name(*end)} here"
        level = board.highest.get(start)
        if level is None or board.owner[(*start, level)] != seat:
            return explanation
        origin = (*start, level)
        targets = [] if board.pinned(origin) else list(board.targets(origin))
        if not targets:
            return f"{explanation}; your knight on {cell_name(*start)} has no move now"
        targets.sort(key=lambda t: ((t[0] - end[0]) ** 2 + (t[1] - end[1]) ** 2, t))
        moves = ", ".join(f"{cell_name(*start)}-{cell_name(x, y)}" for x, y, _ in targets)
        return f"{explanation}. Your knight on {cell_name(*start)} can play, nearest first: {moves}"

    @staticmethod
    def _from_chess(board, n, letter, number) -> tuple[int, int] | None:
        """The cell a standard chess name (b1, c3) means on this board, or None."""
        column, row = ord(letter) - ord("a"), int(number) - 1
        if not (0 <= column < n and 0 <= row < n):
            return None
        return 2 * column, 2 * row

    def parse_move(self, state, seat, text):
        board = Pieces(state)
        match = MOVE_RE.fullmatch(text.strip().lower())
        if not match:
            if board.three_d:
                raise MoveError(
                    f'Invalid move "{text}": write the knight\'s start and end points as '
                    "from-to, e.g. a1-c5, or e1-b4 to jump onto level 2"
                )
            raise MoveError(
                f'Invalid move "{text}": write the knight\'s start and end cells as from-to, '
                "e.g. a1-c5"
            )
        try:
            start = self._coordinates(state, board, match.group(1), match.group(2))
            end = self._coordinates(state, board, match.group(3), match.group(4))
        except MoveError as error:
            raise MoveError(f"{error}. {self._doubling_hint(state, board, seat, match)}") from None
        canonical = f"{cell_name(*start)}-{cell_name(*end)}"

        def refuse(reason):
            return MoveError(f'Invalid move "{canonical}": {reason}')

        origin = self._origin(board, seat, start, refuse)
        resting = board.resting_on(*origin)
        if resting:
            riders = _joined(
                [
                    f"{self.player_names[board.owner[p]]}'s knight on {board.label(p)}"
                    for p in resting
                ]
            )
            raise refuse(
                f"{self.player_names[seat]}'s knight on {board.label(origin)} is pinned: "
                f"{riders} {'rests' if len(resting) == 1 else 'rest'} on it, and a pinned "
                "knight cannot move"
            )
        target = self._target(board, origin, end, refuse)
        empty = board.empty_supports(target, leaving=origin)
        if empty:
            under = _joined([cell_name(x, y) for x, y, _level in board.supports(*target)])
            raise refuse(
                f"{board.label(target)} is not supported: "
                f"{_joined([cell_name(x, y) for x, y, _level in empty])} on level "
                f"{target[2] - 1} {'is' if len(empty) == 1 else 'are'} empty, and a knight "
                f"can only stand there when all four points under it ({under}) are occupied"
            )
        return canonical

    def _origin(self, board, seat, start, refuse) -> tuple[int, int, int]:
        """FROM names the highest occupied point with its coordinates
        (docs/spec/games/knightpanic.md §5.2)."""
        level = board.highest.get(start)
        colour = self.player_names[seat]
        if level is None:
            raise refuse(f"there is no {colour} knight on {cell_name(*start)}")
        origin = (*start, level)
        owner = board.owner[origin]
        if owner == seat:
            return origin
        if seat in (board.owner.get((*start, lower)) for lower in range(1, level)):
            raise refuse(
                f"the highest knight on {cell_name(*start)} (level {level}) is "
                f"{self.player_names[owner]}'s; the {colour} knight under it is pinned"
            )
        raise refuse(f"there is no {colour} knight on {cell_name(*start)}")

    def _target(self, board, origin, end, refuse) -> tuple[int, int, int]:
        """TO names the lowest empty point with its coordinates
        (docs/spec/games/knightpanic.md §5.2)."""
        x, y, level = origin
        changes = LEVEL_CHANGES.get((end[0] - x, end[1] - y))
        name = cell_name(*end)
        if changes is None:
            raise refuse(self._knight_rule(board))
        reachable = [level + change for change in changes if board.exists(*end, level + change)]
        target_level = board.lowest_empty(*end)
        if target_level in reachable:
            return (*end, target_level)
        if not reachable:
            raise refuse(
                f"from level {level} this jump cannot land on any level of {name}; "
                f"{self._knight_rule(board)}"
            )
        if target_level is None or target_level > max(reachable):
            top = board.highest[end]
            raise refuse(f"{name} is occupied" + (f" up to level {top}" if top > 2 else ""))
        levels = " or ".join(str(k) for k in reachable)
        raise refuse(
            f"from level {level} this jump must land on level {levels}, but the lowest "
            f"free point {name} is on level {target_level}; {self._knight_rule(board)}"
        )

    @staticmethod
    def _knight_rule(board) -> str:
        if not board.three_d:
            return "a knight moves two squares one way and one the other; write from-to, e.g. a1-c5"
        return (
            "a knight jumps 2 letters and 4 numbers (or 4 and 2) on its own level, "
            "e.g. a1-c5, or 3 letters and 3 numbers one level up or down, e.g. e1-b4 "
            "onto level 2"
        )

    # -- rules: all through the engine (games/knightpanic/engine.py) ----------------

    def engine(self, state):
        return self._engines.fresh(state)

    def legal_moves(self, state, seat):
        if self.to_move(state) != seat:
            return []
        engine = self._engines.of(state)
        return [engine.move_text(move) for move in sorted(engine.legal_moves())]

    def apply_move(self, state, seat, move):
        engine = self._engines.fresh(state)
        engine.play_as(seat, engine.parse_text(move))
        return self._engines.made(engine)

    # -- display ---------------------------------------------------------------------

    def files(self, state, level=1) -> list[str]:
        return [chr(ord("a") + x) for x in self._coordinate_range(state, level)]

    def ranks(self, state, level=1) -> list[str]:
        return [str(y + 1) for y in self._coordinate_range(state, level)]

    @staticmethod
    def _coordinate_range(state, level) -> range:
        return range(level - 1, 2 * state["options"]["size"] - level, 2)

    def levels_shown(self, state) -> list[int]:
        """docs/spec/games/knightpanic.md §8: level 1, and in 3D every level holding a piece and the
        level above it.

        A level the knights on the board can never fill is left out (level 3 on 4x4).
        """
        if not state["options"]["3d"]:
            return [1]
        highest = max(level for _x, _y, level, _seat in state["pieces"])
        return list(range(1, min(highest + 1, highest_fillable_level(len(state["pieces"]))) + 1))

    def board_rows(self, state, level=1) -> list[tuple[str, str]]:
        """(rank label, row) of one level from the top (Black's side) down.

        A row is its cells with a separator before, between and after them: a blank, or a
        bracket round a cell of the last move ("[o]", two side by side share a "|"), so no
        mark moves a cell. A pinned knight is drawn in capitals (O, X).
        """
        board = Pieces(state)
        marked = self.last_points(state)
        columns = self._coordinate_range(state, level)
        rows = []
        for y in reversed(columns):
            points = [(x, y, level) for x in columns]
            flags = [False] + [point in marked for point in points] + [False]
            row = "".join(
                _separator(flags[i], flags[i + 1]) + self._symbol(board, point)
                for i, point in enumerate(points)
            ) + _separator(flags[-2], False)
            rows.append((str(y + 1), row))
        return rows

    @staticmethod
    def _symbol(board, point) -> str:
        seat = board.owner.get(point)
        if seat is None:
            return "."
        return SYMBOLS[seat].upper() if board.pinned(point) else SYMBOLS[seat]

    @staticmethod
    def last_points(state) -> set[tuple[int, int, int]]:
        """The points the last move left and reached (docs/spec/games/knightpanic.md §5.2)."""
        if not state["last"]:
            return set()
        match = MOVE_RE.fullmatch(state["last"])
        start = (ord(match.group(1)) - 97, int(match.group(2)) - 1)
        end = (ord(match.group(3)) - 97, int(match.group(4)) - 1)
        board = Pieces(state)
        # The knight that left start stood on what is now start's lowest empty point.
        return {(*start, board.lowest_empty(*start)), (*end, board.highest[end])}

    def stacked_rows(self, state, lower) -> list[tuple[str, str]]:
        """(rank label, row) of levels lower and lower + 1 in one grid, from the top down.

        docs/spec/games/knightpanic.md §8 (pbm note): every letter and number gets a column
        and a row, so a raised point stands between the four points it rests on; its empty
        points are blanks, those of the lower level dots. Brackets and capitals as in
        board_rows.
        """
        board = Pieces(state)
        marked = self.last_points(state)
        coordinates = self._coordinate_range(state, lower)
        span = range(coordinates[0], coordinates[-1] + 1)
        rows = []
        for y in reversed(span):
            points = [(x, y, lower + x % 2 - (lower - 1) % 2) for x in span]
            flags = [False] + [point in marked for point in points] + [False]
            cells = [
                self._symbol(board, point) if board.exists(*point) else " " for point in points
            ]
            cells = [
                " " if text == "." and point[2] != lower else text
                for text, point in zip(cells, points)
            ]
            row = "".join(
                _separator(flags[i], flags[i + 1]) + cell for i, cell in enumerate(cells)
            ) + _separator(flags[-2], False)
            rows.append((str(y + 1), row))
        return rows

    def stacked_levels(self, state) -> list[int]:
        """The lower level of each grid: 1 (levels 1 and 2), then 3 (3 and 4) when shown."""
        return [level for level in self.levels_shown(state) if level % 2 == 1]

    def stacked_title(self, state, lower) -> str:
        if lower + 1 in self.levels_shown(state):
            return f"levels {lower} and {lower + 1}:"
        return f"level {lower}:"

    def stacked_files(self, state, lower) -> str:
        coordinates = self._coordinate_range(state, lower)
        return " ".join(chr(ord("a") + x) for x in range(coordinates[0], coordinates[-1] + 1))

    def drawing(self, state, perspective, last_move):
        """Open information: every reader sees the same picture. In 3D a raised knight
        stands between the four points under it, as the text board shows it."""
        board = Pieces(state)
        grid = _point_grid(board.size, board.three_d)
        side = grid.side
        pieces = []
        for x, y, level in sorted(board.owner, key=lambda point: point[2]):
            seat = board.owner[(x, y, level)]
            pieces.append(
                drawing.Piece(
                    *grid.centre(x, y),
                    side * max(0.16, 0.42 - 0.07 * (level - 1)),
                    PIECE_FILLS[seat],
                    SYMBOLS[seat],
                    LETTER_COLOURS[seat],
                    ring=PINNED_RING if board.pinned((x, y, level)) else None,
                    badge=str(level) if level > 1 else "",
                )
            )
        highlights = ()
        match = MOVE_RE.fullmatch(last_move or "")
        if match:
            ends = ((match.group(1), match.group(2)), (match.group(3), match.group(4)))
            highlights = tuple(
                drawing.highlight(grid.square(ord(letter) - ord("a"), int(number) - 1))
                for letter, number in ends
            )
        legend = "o x: White, Black knight; yellow squares: the last move (from and to)"
        if board.three_d:
            legend += (
                "\nRinged: pinned (a knight rests on it); badge: the level of a raised knight; "
                "dots: points of level 2"
            )
        return drawing.Drawing(
            backdrop=grid.backdrop, pieces=tuple(pieces), highlights=highlights, legend=legend
        )

    def last_mover(self, state) -> str:
        return self.player_names[1 - state["to_move"]]


def _separator(left_marked: bool, right_marked: bool) -> str:
    if left_marked:
        return "|" if right_marked else "]"
    return "[" if right_marked else " "


class PointGrid(NamedTuple):
    """The picture of a Knight Panic board: its drawing.Backdrop and the pixel of every point
    in doubled coordinates (even: a cell's centre; odd: the corner between four cells, where
    a raised knight stands)."""

    backdrop: "drawing.Backdrop"  # quoted: pbm.drawing loads its types at first use
    side: float  # px of a cell
    left: float  # px of the board's left edge
    top: float  # px of the board's top edge
    size: int

    def centre(self, x: int, y: int) -> tuple[float, float]:
        """The pixel of a point: a cell's centre, or the corner between four cells."""
        return (
            self.left + (x / 2 + 0.5) * self.side,
            self.top + (self.size - 0.5 - y / 2) * self.side,
        )

    def square(self, x: int, y: int) -> tuple[tuple[float, float], ...]:
        """A cell-sized square round a point, to highlight it."""
        cx, cy = self.centre(x, y)
        half = self.side / 2
        return drawing.square(cx - half, cy - half, self.side)


@functools.cache
def _point_grid(size: int, three_d: bool) -> PointGrid:
    """The n x n cells, the files and ranks on every side; in 3D also the raised points'
    letters and numbers (smaller) and a dot on every point of level 2."""
    side = min(CELL_MAX, (PICTURE_WIDTH - 2 * LABEL_ROOM) / size)
    left = top = LABEL_ROOM
    extent = math.ceil(2 * LABEL_ROOM + size * side)
    grid = PointGrid(None, side, left, top, size)
    cells = []
    for column in range(size):
        for row in range(size):
            fill = drawing.CELL if (column + row) % 2 else drawing.CELL_DARK
            cells.append(drawing.Polygon(grid.square(2 * column, 2 * row), fill))
    labels = []
    coordinates = range(2 * size - 1) if three_d else range(0, 2 * size - 1, 2)
    for coordinate in coordinates:
        raised = coordinate % 2 == 1
        text_size = min(15.0, side * 0.3) * (0.8 if raised else 1.0)
        colour = drawing.GRID if raised else drawing.INK
        x, _ = grid.centre(coordinate, 0)
        _, y = grid.centre(0, coordinate)
        letter, number = chr(ord("a") + coordinate), str(coordinate + 1)
        for spot_y in (top / 2, extent - top / 2):
            labels.append(drawing.Text(x, spot_y, letter, text_size, colour))
        for spot_x in (left / 2, extent - left / 2):
            labels.append(drawing.Text(spot_x, y, number, text_size, colour))
    marks = []
    if three_d:
        marks = [
            drawing.Piece(*grid.centre(x, y), max(2.0, side * 0.05), drawing.GRID)
            for x in range(1, 2 * size - 2, 2)
            for y in range(1, 2 * size - 2, 2)
        ]
    backdrop = drawing.Backdrop(
        extent, extent, tuple(cells), marks=tuple(marks), labels=tuple(labels)
    )
    return grid._replace(backdrop=backdrop)


@hookimpl
def register_games(register):
    register(KnightPanic())


@hookimpl
def register_robots(register):
    # deferred: only robot work needs the search, never a mail about the game
    from .robot import ROBOT

    register(ROBOT)
