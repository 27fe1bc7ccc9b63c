"""The immutable types a game describes its board picture with (pbm.drawing, where games
find them, loads this module the first time one is asked for)."""

from dataclasses import dataclass

from .palette import GRID, INK, PAPER

Point = tuple[float, float]


@dataclass(frozen=True, slots=True)
class Polygon:
    """A cell or an edge band: a closed polygon with a fill (None: no fill) and an outline."""

    points: tuple[Point, ...]
    fill: str | None
    outline: str | None = GRID
    width: float = 1.0


@dataclass(frozen=True, slots=True)
class Line:
    """A thick line, e.g. a coloured board edge showing which side a seat joins."""

    start: Point
    end: Point
    colour: str
    width: float = 3.0


@dataclass(frozen=True, slots=True)
class Text:
    """A coordinate label or other text, centred on (x, y)."""

    x: float
    y: float
    text: str
    size: float
    colour: str = INK


@dataclass(frozen=True, slots=True)
class Piece:
    """A piece, stone or stack centred on (x, y): a shape of the given radius with a label.

    shape is one of SHAPES; label is the seat's letter or a stack's count (a few
    characters); ring, when set, draws a thick outline in that colour (e.g. a pinned knight);
    badge is a small text at the lower right (e.g. the level of a raised knight).
    """

    x: float
    y: float
    radius: float
    fill: str
    label: str = ""
    label_colour: str = INK
    shape: str = "disc"
    ring: str | None = None
    badge: str = ""


@dataclass(frozen=True, slots=True, eq=False)
class Backdrop:
    """The part of a picture that is the same for every position of one board: the cells
    (and edge lines), the level marks and the coordinate labels on every side, on paper of
    one colour. Keep one instance per board size: renderers cache it by identity."""

    width: int
    height: int
    cells: tuple[Polygon, ...]
    lines: tuple[Line, ...] = ()
    marks: tuple[Piece, ...] = ()
    labels: tuple[Text, ...] = ()
    paper: str = PAPER


@dataclass(frozen=True, slots=True)
class Drawing:
    """One position: the backdrop, the highlighted cells (the last move's, then those of a
    winning line or chain), the pieces (drawn in order, later ones on top) and a legend under
    the board (lines split by "\n", each wrapped to the board's width)."""

    backdrop: Backdrop
    pieces: tuple[Piece, ...] = ()
    highlights: tuple[Polygon, ...] = ()
    legend: str = ""
