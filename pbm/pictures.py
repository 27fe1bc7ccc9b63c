"""Board pictures: a game's Drawing (pbm/drawing.py) as SVG for the web view and as PNG for
mail (docs/spec/server.md §11.5).

A move mail's PNG must cost a few milliseconds, so nothing is drawn twice: a Backdrop (cells,
level marks, labels) is drawn once and cached by the Backdrop's identity, every
piece is a sprite drawn once per look and pasted, and the PNG is a palette image (the
drawing's colours and their blends) written with zlib level 1: a third of the RGB PNG's size
and several times faster to compress (docs/performance.md, "Board pictures"). Pillow's own FreeType font (ImageFont.load_default) is used, so no system font
is needed; the SVG names a generic font family.
"""

import functools
import io
from html import escape

from PIL import Image, ImageColor, ImageDraw, ImageFont

from .drawing import INK, Backdrop, Drawing, Piece, Polygon

LEGEND_SIZE = 13  # px of the legend's text
LEGEND_LINE = 18  # px per legend line
LEGEND_MARGIN = 8  # px between the legend and the left edge
BADGE = "#ffffff"  # the disc behind a piece's badge
OUTLINE = "#333333"  # the thin outline of every piece, so a white piece shows on a pale cell
SUPERSAMPLE = 4  # pieces are drawn this many times larger, then shrunk: smooth edges
BACKGROUND_SUPERSAMPLE = 2  # the same for the board: enough for straight edges, 4x cheaper
PNG_COMPRESSION = 1  # zlib level: level 1 costs a fraction of the default and is barely bigger


def board_svg(game, state, perspective=None, last_move=None) -> str | None:
    """The board as a standalone <svg> element, or None for a game without a drawing."""
    drawing = game.drawing(state, perspective, last_move)
    return None if drawing is None else drawing_svg(drawing)


def board_png(game, state, perspective=None, last_move=None) -> bytes | None:
    """The board as PNG bytes, or None for a game without a drawing."""
    drawing = game.drawing(state, perspective, last_move)
    return None if drawing is None else drawing_png(drawing)


def legend_lines(drawing: Drawing) -> list[str]:
    """The legend's lines, each wrapped to the board's width."""
    # a generic sans-serif font in an SVG viewer may run 15% wider than Pillow's own
    width = round((drawing.backdrop.width - 2 * LEGEND_MARGIN) * 0.85)
    return [part for line in drawing.legend.splitlines() for part in _wrapped(line, width)]


@functools.lru_cache(maxsize=256)
def _wrapped(line: str, width: int) -> tuple[str, ...]:
    """The line cut at blanks into parts no wider than width in the legend's font."""
    font = _font(LEGEND_SIZE)
    parts, current = [], ""
    for word in line.split(" "):
        candidate = f"{current} {word}" if current else word
        if current and font.getlength(candidate) > width:
            parts.append(current)
            candidate = word
        current = candidate
    return (*parts, current)


def picture_size(drawing: Drawing) -> tuple[int, int]:
    """(width, height) in pixels: the board and the legend lines under it."""
    backdrop = drawing.backdrop
    return backdrop.width, backdrop.height + LEGEND_LINE * len(legend_lines(drawing))


def clear_caches() -> None:
    """Forget every drawn background, sprite and text (for measurements)."""
    for cached in (_background, _backdrop_colours, _palette, _text_mask, _sprite, _font, _wrapped):
        cached.cache_clear()
    _svg_backdrop.cache_clear()


# -- PNG ----------------------------------------------------------------------------------


def drawing_png(drawing: Drawing) -> bytes:
    lines = legend_lines(drawing)
    image = _background(drawing.backdrop, len(lines)).copy()
    pen = ImageDraw.Draw(image)
    for polygon in drawing.highlights:
        _polygon(pen, polygon, 1)
    for piece in drawing.pieces:
        sprite = _sprite(_look(piece))
        half = sprite.width // 2
        image.paste(sprite, (round(piece.x) - half, round(piece.y) - half), sprite)
    for index, line in enumerate(lines):
        mask = _text_mask(line, LEGEND_SIZE)
        top = drawing.backdrop.height + LEGEND_LINE * index + (LEGEND_LINE - mask.height) // 2
        image.paste(INK, (LEGEND_MARGIN, top), mask)
    palette = _palette(_colours(drawing))
    if palette is not None:
        image = image.quantize(palette=palette, dither=Image.Dither.NONE)
    out = io.BytesIO()
    image.save(out, "PNG", compress_level=PNG_COMPRESSION)
    return out.getvalue()


def _colours(drawing: Drawing) -> frozenset[str]:
    """Every colour the picture is drawn with; its other colours are blends of two of them."""
    colours: set[str | None] = set(_backdrop_colours(drawing.backdrop))
    colours.add(INK)
    for polygon in drawing.highlights:
        colours.update((polygon.fill, polygon.outline))
    for piece in drawing.pieces:
        colours.update(_piece_colours(piece))
    return frozenset(colour for colour in colours if colour is not None)


@functools.lru_cache(maxsize=64)
def _backdrop_colours(backdrop: Backdrop) -> frozenset[str]:
    colours: set[str | None] = {backdrop.paper}
    for cell in backdrop.cells:
        colours.update((cell.fill, cell.outline))
    colours.update(line.colour for line in backdrop.lines)
    colours.update(label.colour for label in backdrop.labels)
    for mark in backdrop.marks:
        colours.update(_piece_colours(mark))
    return frozenset(colour for colour in colours if colour is not None)


def _piece_colours(piece: Piece) -> tuple[str, ...]:
    badge = (BADGE, OUTLINE, INK) if piece.badge else ()
    return (piece.fill, piece.ring or OUTLINE, piece.label_colour, *badge)


@functools.lru_cache(maxsize=64)
def _palette(colours: frozenset[str]) -> Image.Image | None:
    """A palette of the colours and the blends of every two of them (the smooth edges of
    shapes and letters), or None when they are too many for 256 entries.

    Mapping a picture onto a known palette takes a fraction of a millisecond, and the
    palette PNG is a third of the RGB one and much faster to compress.
    """
    rgb = sorted(ImageColor.getrgb(colour)[:3] for colour in colours)
    pairs = len(rgb) * (len(rgb) - 1) // 2
    blends = next((steps for steps in (3, 2, 1) if len(rgb) + steps * pairs <= 256), None)
    if blends is None:
        return None
    entries: list[tuple[int, ...]] = list(rgb)
    for index, first in enumerate(rgb):
        for second in rgb[index + 1 :]:
            for step in range(1, blends + 1):
                part = step / (blends + 1)
                entries.append(tuple(round(a + (b - a) * part) for a, b in zip(first, second)))
    palette = Image.new("P", (1, 1))
    palette.putpalette([value for entry in entries for value in entry])
    return palette


@functools.lru_cache(maxsize=256)
def _text_mask(text: str, size: int) -> Image.Image:
    """A line of text as a mask, to paste in any colour: FreeType is slow to run each time."""
    font = _font(size)
    left, top, right, bottom = font.getbbox(text)
    mask = Image.new("L", (max(1, right - left), max(1, bottom - top)), 0)
    ImageDraw.Draw(mask).text((-left, -top), text, fill=255, font=font)
    return mask


@functools.lru_cache(maxsize=32)  # about 1 MB each
def _background(backdrop: Backdrop, legend_count: int) -> Image.Image:
    """Cells, edge lines and marks drawn large and shrunk (smooth), then the labels."""
    scale = BACKGROUND_SUPERSAMPLE
    big = Image.new("RGB", (backdrop.width * scale, backdrop.height * scale), backdrop.paper)
    pen = ImageDraw.Draw(big)
    for cell in backdrop.cells:
        _polygon(pen, cell, scale)
    for line in backdrop.lines:
        ends = [(x * scale, y * scale) for x, y in (line.start, line.end)]
        pen.line(ends, fill=line.colour, width=round(line.width * scale))
    picture = big.reduce(scale)
    for mark in backdrop.marks:
        sprite = _sprite(_look(mark))
        half = sprite.width // 2
        picture.paste(sprite, (round(mark.x) - half, round(mark.y) - half), sprite)
    for label in backdrop.labels:
        mask = _text_mask(label.text, round(label.size))
        corner = (round(label.x - mask.width / 2), round(label.y - mask.height / 2))
        picture.paste(label.colour, corner, mask)
    if legend_count:
        framed = Image.new(
            "RGB", (backdrop.width, backdrop.height + LEGEND_LINE * legend_count), backdrop.paper
        )
        framed.paste(picture, (0, 0))
        return framed
    return picture


def _polygon(pen: ImageDraw.ImageDraw, polygon: Polygon, scale: int) -> None:
    """The fill, then the outline as a closed line: ImageDraw.polygon with a width makes a
    mask as large as the picture for every polygon, a hundred times slower."""
    points = [(x * scale, y * scale) for x, y in polygon.points]
    if polygon.fill:
        pen.polygon(points, fill=polygon.fill)
    if polygon.outline:
        width = max(1, round(polygon.width * scale))
        pen.line([*points, points[0], points[1]], fill=polygon.outline, width=width, joint="curve")


def _look(piece: Piece) -> tuple:
    """Everything about a piece but where it stands."""
    return (
        piece.radius,
        piece.fill,
        piece.label,
        piece.label_colour,
        piece.shape,
        piece.ring,
        piece.badge,
    )


@functools.lru_cache(maxsize=512)
def _sprite(look: tuple) -> Image.Image:
    """A piece on a transparent square, its centre in the middle."""
    radius, fill, label, label_colour, shape, ring, badge = look
    half = int(radius * 1.25) + 2
    size = 2 * half + 1
    big = Image.new("RGBA", (size * SUPERSAMPLE, size * SUPERSAMPLE), (0, 0, 0, 0))
    pen = ImageDraw.Draw(big)
    centre = (half + 0.5) * SUPERSAMPLE
    outline_width = max(2, round(radius / 5)) if ring else 1
    paint = {"fill": fill, "outline": ring or OUTLINE, "width": outline_width * SUPERSAMPLE}
    if shape == "disc":
        reach = radius * SUPERSAMPLE
        pen.ellipse([centre - reach, centre - reach, centre + reach, centre + reach], **paint)
    else:
        pen.polygon(_shape_points(shape, centre, centre, radius * SUPERSAMPLE), **paint)
    badge_radius = radius * 0.45
    badge_centre = centre + radius * 0.75 * SUPERSAMPLE
    if badge:
        pen.ellipse(
            [
                badge_centre - badge_radius * SUPERSAMPLE,
                badge_centre - badge_radius * SUPERSAMPLE,
                badge_centre + badge_radius * SUPERSAMPLE,
                badge_centre + badge_radius * SUPERSAMPLE,
            ],
            fill=BADGE,
            outline=OUTLINE,
            width=SUPERSAMPLE,
        )
    sprite = big.reduce(SUPERSAMPLE)
    pen = ImageDraw.Draw(sprite)
    if label:
        font = _font(round(label_size(radius, label)))
        pen.text((half + 0.5, half + 0.5), label, fill=label_colour, font=font, anchor="mm")
    if badge:
        spot = badge_centre / SUPERSAMPLE
        pen.text((spot, spot), badge, fill=INK, font=_font(round(badge_radius * 1.5)), anchor="mm")
    return sprite


def label_size(radius: float, label: str) -> float:
    """The font size of a piece's label: smaller for longer labels, so they fit the shape."""
    return radius * (1.2, 1.2, 0.95, 0.75)[min(len(label), 3)]


def _shape_points(shape: str, x: float, y: float, radius: float) -> list[tuple[float, float]]:
    if shape == "square":
        side = radius * 0.88
        return [
            (x - side, y - side),
            (x + side, y - side),
            (x + side, y + side),
            (x - side, y + side),
        ]
    if shape == "diamond":
        reach = radius * 1.2
        return [(x, y - reach), (x + reach, y), (x, y + reach), (x - reach, y)]
    raise ValueError(f"unknown piece shape {shape!r}")


@functools.lru_cache(maxsize=32)
def _font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    return ImageFont.load_default(size=max(size, 6))


# -- SVG ----------------------------------------------------------------------------------


def drawing_svg(drawing: Drawing) -> str:
    width, height = picture_size(drawing)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" role="img">',
        _svg_backdrop(drawing.backdrop, height),
    ]
    parts.extend(_svg_polygon(polygon) for polygon in drawing.highlights)
    parts.extend(_svg_piece(piece) for piece in drawing.pieces)
    for index, line in enumerate(legend_lines(drawing)):
        y = drawing.backdrop.height + LEGEND_LINE * index + LEGEND_LINE / 2
        parts.append(
            f'<text x="{LEGEND_MARGIN}" y="{_n(y)}" font-size="{LEGEND_SIZE}" fill="{INK}" '
            f'dominant-baseline="central">{escape(line)}</text>'
        )
    parts.append("</svg>")
    return "\n".join(parts)


@functools.lru_cache(maxsize=64)
def _svg_backdrop(backdrop: Backdrop, height: int) -> str:
    parts = [f'<rect width="{backdrop.width}" height="{height}" fill="{backdrop.paper}"/>']
    parts.extend(_svg_polygon(cell) for cell in backdrop.cells)
    parts.extend(
        f'<line x1="{_n(line.start[0])}" y1="{_n(line.start[1])}" x2="{_n(line.end[0])}" '
        f'y2="{_n(line.end[1])}" stroke="{line.colour}" stroke-width="{_n(line.width)}" '
        'stroke-linecap="round"/>'
        for line in backdrop.lines
    )
    parts.extend(_svg_piece(mark) for mark in backdrop.marks)
    parts.extend(
        _svg_text(label.x, label.y, label.text, label.size, label.colour)
        for label in backdrop.labels
    )
    return "\n".join(parts)


def _svg_polygon(polygon: Polygon) -> str:
    points = " ".join(f"{_n(x)},{_n(y)}" for x, y in polygon.points)
    stroke = (
        f' stroke="{polygon.outline}" stroke-width="{_n(polygon.width)}"' if polygon.outline else ""
    )
    return f'<polygon points="{points}" fill="{polygon.fill or "none"}"{stroke}/>'


def _svg_piece(piece: Piece) -> str:
    x, y, radius = piece.x, piece.y, piece.radius
    stroke = piece.ring or OUTLINE
    width = max(2, round(radius / 5)) if piece.ring else 1
    paint = f'fill="{piece.fill}" stroke="{stroke}" stroke-width="{width}"'
    if piece.shape == "disc":
        parts = [f'<circle cx="{_n(x)}" cy="{_n(y)}" r="{_n(radius)}" {paint}/>']
    else:
        points = " ".join(
            f"{_n(px)},{_n(py)}" for px, py in _shape_points(piece.shape, x, y, radius)
        )
        parts = [f'<polygon points="{points}" {paint}/>']
    if piece.label:
        parts.append(
            _svg_text(x, y, piece.label, label_size(radius, piece.label), piece.label_colour)
        )
    if piece.badge:
        spot, badge_radius = radius * 0.75, radius * 0.45
        parts.append(
            f'<circle cx="{_n(x + spot)}" cy="{_n(y + spot)}" r="{_n(badge_radius)}" '
            f'fill="{BADGE}" stroke="{OUTLINE}" stroke-width="1"/>'
        )
        parts.append(_svg_text(x + spot, y + spot, piece.badge, badge_radius * 1.5, INK))
    return "".join(parts)


def _svg_text(x: float, y: float, text: str, size: float, colour: str) -> str:
    return (
        f'<text x="{_n(x)}" y="{_n(y)}" font-size="{_n(size)}" fill="{colour}" '
        f'text-anchor="middle" dominant-baseline="central">{escape(text)}</text>'
    )


def _n(number: float) -> str:
    """A coordinate with at most one decimal, so the SVG stays small."""
    return f"{number:.1f}".removesuffix(".0")
