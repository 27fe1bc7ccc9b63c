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

Colours are "#rrggbb", from pbm/palette.py (Okabe-Ito's, safe for colour-blind readers);
every seat must differ by a letter or a shape as well as by colour.

The types live in pbm/drawing_types.py and are loaded when a game first asks for one:
defining six frozen dataclasses took 5 to 9 ms, paid by every mail a game's module was
imported for, and a mail in text draws no picture (docs/performance.md, issue 31).
"""

from typing import TYPE_CHECKING

from .palette import (
    BLACK,
    BLUE,
    CELL,
    CELL_DARK,
    GREEN,
    GREY,
    GRID,
    HIGHLIGHT,
    HIGHLIGHT_EDGE,
    INK,
    ORANGE,
    PAPER,
    PURPLE,
    SKY_BLUE,
    VERMILLION,
    WHITE,
    WINNING,
    YELLOW,
)

if TYPE_CHECKING:
    from .drawing_types import Backdrop, Drawing, Line, Piece, Point, Polygon, Text

TYPES = ("Backdrop", "Drawing", "Line", "Piece", "Point", "Polygon", "Text")
__all__ = [
    "Backdrop",
    "Drawing",
    "Line",
    "Piece",
    "Point",
    "Polygon",
    "Text",
    "SHAPES",
    "highlight",
    "square",
    "winning",
    "BLACK",
    "BLUE",
    "CELL",
    "CELL_DARK",
    "GREEN",
    "GREY",
    "GRID",
    "HIGHLIGHT",
    "HIGHLIGHT_EDGE",
    "INK",
    "ORANGE",
    "PAPER",
    "PURPLE",
    "SKY_BLUE",
    "VERMILLION",
    "WHITE",
    "WINNING",
    "YELLOW",
]

SHAPES = ("disc", "square", "diamond")


def __getattr__(name: str) -> object:
    if name in TYPES:
        from . import drawing_types

        return getattr(drawing_types, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def highlight(points: tuple["Point", ...]) -> "Polygon":
    """The mark of a cell of the last move."""
    from .drawing_types import Polygon

    return Polygon(points, HIGHLIGHT, HIGHLIGHT_EDGE, 3.0)


def winning(points: tuple["Point", ...]) -> "Polygon":
    """The mark of a cell of the line or chain that won (Game.winning_cells): an outline
    only, so the last move's yellow stays visible under it."""
    from .drawing_types import Polygon

    return Polygon(points, None, WINNING, 4.0)


def square(x: float, y: float, side: float) -> tuple["Point", ...]:
    """The corners of an axis-parallel square with its top left corner at (x, y)."""
    return ((x, y), (x + side, y), (x + side, y + side), (x, y + side))
