"""What a game's board picture shows, as pure data (docs/spec/server.md §10.4).

A game describes its board with these small immutable types and pbm/pictures.py turns the
description into SVG (web view) and PNG (mail); games never import Pillow. Coordinates are
pixels of the PNG, y growing downwards; the SVG uses the same numbers as its viewBox.

A Drawing has two parts: its Backdrop (cells, coordinate labels, level marks), the same
for every position of a board size, and the pieces and highlights of one position. A game
builds each Backdrop once and keeps it (functools.cache): the renderers cache what they
draw of it by its identity, so a Backdrop compares and hashes by identity (eq=False), and
building it anew for every picture would lose the cache. (The core's pbm.boards.Board is a
board being played, something else.)

Colours are "#rrggbb". The palette below is Okabe-Ito's, safe for colour-blind readers;
every seat must differ by a letter or a shape as well as by colour.
"""

from dataclasses import dataclass

Point = tuple[float, float]

# Okabe & Ito, "Color Universal Design" (2008)
BLACK = "#000000"
ORANGE = "#e69f00"
SKY_BLUE = "#56b4e9"
GREEN = "#009e73"
YELLOW = "#f0e442"
BLUE = "#0072b2"
VERMILLION = "#d55e00"
PURPLE = "#cc79a7"
WHITE = "#ffffff"
# Neutral colours for the board itself.
PAPER = "#ffffff"
CELL = "#efe6cf"
CELL_DARK = "#dccfae"
GRID = "#7a6f5a"
INK = "#222222"
GREY = "#999999"
HIGHLIGHT = YELLOW  # under the cells of the last move
HIGHLIGHT_EDGE = PURPLE
WINNING = GREEN  # around the cells of the line or chain that won

SHAPES = ("disc", "square", "diamond")


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


def highlight(points: tuple[Point, ...]) -> Polygon:
    """The mark of a cell of the last move."""
    return Polygon(points, HIGHLIGHT, HIGHLIGHT_EDGE, 3.0)


def winning(points: tuple[Point, ...]) -> Polygon:
    """The mark of a cell of the line or chain that won (Game.winning_cells): an outline
    only, so the last move's yellow stays visible under it."""
    return Polygon(points, None, WINNING, 4.0)


def square(x: float, y: float, side: float) -> tuple[Point, ...]:
    """The corners of an axis-parallel square with its top left corner at (x, y)."""
    return ((x, y), (x + side, y), (x + side, y + side), (x, y + side))
