"""Board pictures (docs/spec/server.md §11.5, §10.4): every built-in game's drawing, decoded
for real: PNGs with Pillow (size, the colours at known points), SVGs with xml.etree (well
formed, the expected cells and pieces, text escaped); random games of every game and variant
drawn in every perspective; a game without a drawing gets None."""

import io
import random
import xml.etree.ElementTree as ElementTree

import pytest
from PIL import Image, ImageColor

from games.hexgrid import HexHexBoard, RhombusBoard, hex_picture
from games.knightline import KnightLine
from games.knightpanic import KnightPanic
from games.knightvision import KnightVision
from games.lox import Lox
from games.uknight import Uknight
from pbm import drawing
from pbm.pictures import (
    LEGEND_LINE,
    board_png,
    board_svg,
    drawing_png,
    drawing_svg,
    legend_lines,
    picture_size,
)
from pbm.testing import random_game
from tests.toygame import Tally

SVG = "{http://www.w3.org/2000/svg}"
PNG_BUDGET = 60_000  # bytes: a move mail has 100 KB for everything

VARIANTS = [
    (KnightVision(), {"size": "9"}, 2),
    (KnightVision(), {"size": "14"}, 2),
    (Lox(), {"size": "9"}, 2),
    (Lox(), {"size": "19", "control": True}, 2),
    (Uknight(), {"size": "5"}, 2),
    (Uknight(), {"size": "7"}, 2),
    (KnightLine(), {}, 2),
    (KnightLine(), {"stack": "10"}, 3),
    (KnightLine(), {"blocker": True}, 2),
    (KnightLine(), {"wildcard": True}, 3),
    (KnightPanic(), {"size": "4"}, 2),
    (KnightPanic(), {"size": "7"}, 2),
    (KnightPanic(), {"size": "5", "3d": True}, 2),
    (KnightPanic(), {"size": "7", "3d": True, "win_no_move": True}, 2),
]


def decoded(png: bytes) -> Image.Image:
    image = Image.open(io.BytesIO(png))
    assert image.format == "PNG"
    return image.convert("RGB")


def rgb(colour: str) -> tuple[int, int, int]:
    return ImageColor.getrgb(colour)[:3]


def at(image, x, y):
    return image.getpixel((round(x), round(y)))


def inside(piece: drawing.Piece) -> tuple[float, float]:
    """A point inside the piece's shape but clear of its letter: above the letter."""
    return piece.x, piece.y - 0.7 * piece.radius


def piece_at(picture: drawing.Drawing, x: float, y: float) -> drawing.Piece:
    [piece] = [p for p in picture.pieces if (p.x, p.y) == (x, y)]
    return piece


def play(game, state, *moves):
    for move in moves:
        seat = game.to_move(state)
        state = game.apply_move(state, seat, game.parse_move(state, seat, move))
    return state


def start(game, raw, players=2):
    return game.initial_state(game.parse_options(raw, players), players, seed=1)


def svg_tree(svg: str) -> ElementTree.Element:
    root = ElementTree.fromstring(svg)
    assert root.tag == f"{SVG}svg"
    return root


# -- known pixels ---------------------------------------------------------------------------


def test_lox_stones_empty_cells_control_marks_and_the_last_move_in_the_png():
    game = Lox()
    options = game.parse_options({"size": "9", "control": True}, 2)
    # a1 has two neighbours and sees c1 and a3: Red controls it
    state = game.state_with_stones(options, {"e5": 0, "c1": 0, "a3": 0, "f4": 1}, 1)
    state["last"] = [1, "f4"]  # the picture marks the state's last move, as the text does
    picture = game.drawing(state, None, "f4")
    image = decoded(board_png(game, state, None, "f4"))
    assert image.size == picture_size(picture)
    board = RhombusBoard(9)
    layout = hex_picture(board, ((drawing.VERMILLION, drawing.BLUE) * 2))
    for name, colour in (("e5", drawing.VERMILLION), ("c1", drawing.VERMILLION)):
        piece = piece_at(picture, *layout.centres[board.parse(name)])
        assert piece.label == "R"
        assert at(image, *inside(piece)) == rgb(colour)
    blue = piece_at(picture, *layout.centres[board.parse("f4")])
    assert (blue.label, at(image, *inside(blue))) == ("B", rgb(drawing.BLUE))
    # i9 is empty and nobody controls it: the plain cell colour
    assert game.controller(state, board.parse("i9")) is None
    assert at(image, *layout.centres[board.parse("i9")]) == rgb(drawing.CELL)
    # every empty cell Red controls carries a small square mark, a1 among them
    marks = [p for p in picture.pieces if p.shape == "square"]
    controlled = [
        c for c in board.cells if game.owner(state, c) is None and game.controls(state, 0, c)
    ]
    assert len(marks) == len(controlled) and board.parse("a1") in controlled
    for cell in controlled:
        mark = piece_at(picture, *layout.centres[cell])
        assert (mark.fill, mark.label, mark.shape) == (drawing.VERMILLION, "", "square")
        assert at(image, mark.x, mark.y) == rgb(drawing.VERMILLION)

    def rim(cell) -> set:
        """The colours between the stone and the cell's edge, along the row."""
        x, y = layout.centres[cell]
        start = blue.radius + 2
        return {at(image, x + dx, y) for dx in range(round(start), round(layout.radius * 0.86))}

    highlight = {rgb(drawing.HIGHLIGHT), rgb(drawing.HIGHLIGHT_EDGE)}
    assert rim(board.parse("f4")) & highlight
    assert not rim(board.parse("e5")) & highlight


def test_lox_control_marks_only_with_the_option():
    game = Lox()
    stones = {"e5": 0, "c1": 0, "a3": 0}  # Red controls a1
    plain = game.state_with_stones(game.parse_options({"size": "9"}, 2), stones, 1)
    assert [p.label for p in game.drawing(plain, None, None).pieces] == ["R"] * 3
    marked = game.state_with_stones(
        game.parse_options({"size": "9", "control": True}, 2), stones, 1
    )
    assert len(game.drawing(marked, None, None).pieces) > 3


def test_knightpanic_2d_pieces_empty_cells_and_both_ends_of_the_last_move():
    game = KnightPanic()
    state = play(game, start(game, {"size": "4"}), "a1-c5")
    picture = game.drawing(state, 1, "a1-c5")
    image = decoded(board_png(game, state, 1, "a1-c5"))
    assert image.size == picture_size(picture)
    labels = {}
    for label in picture.backdrop.labels:  # where the coordinates say a file or rank is
        labels.setdefault(label.text, []).append((label.x, label.y))

    def centre(x, y):  # doubled coordinates, as the names: a1 is (0, 0)
        return labels[chr(ord("a") + x)][0][0], labels[str(y + 1)][0][1]

    grid_side = centre(2, 0)[0] - centre(0, 0)[0]
    assert len(labels["a"]) == len(labels["1"]) == 2  # on every side
    # a1 is empty now and highlighted, c5 holds the White knight and is highlighted
    assert at(image, *centre(0, 0)) == rgb(drawing.HIGHLIGHT)
    knight = piece_at(picture, *centre(2, 4))
    assert (knight.label, at(image, *inside(knight))) == ("o", rgb(drawing.WHITE))
    corner = knight.x - grid_side * 0.45, knight.y - grid_side * 0.45
    assert at(image, *corner) == rgb(drawing.HIGHLIGHT)
    # Black's knight on a7, and the empty c3 (dark as a1, on its diagonal) and e3 (light)
    black = piece_at(picture, *centre(0, 6))
    assert (black.label, at(image, *inside(black))) == ("x", rgb(drawing.BLACK))
    assert at(image, *centre(2, 2)) == rgb(drawing.CELL_DARK)
    assert at(image, *centre(4, 2)) == rgb(drawing.CELL)
    assert len(picture.pieces) == 8


def test_knightpanic_3d_raised_knights_stand_between_cells_with_their_level():
    game = KnightPanic()
    state = start(game, {"size": "5", "3d": True})
    # a raised White knight on b2 (level 2) resting on a1 c1 a3 c3, of which a1, c1 are
    # White's and a3, c3 Black's for the picture: they are pinned
    state["pieces"] = sorted(
        [[0, 0, 1, 0], [2, 0, 1, 0], [0, 2, 1, 1], [2, 2, 1, 1], [1, 1, 2, 0], [8, 8, 1, 1]]
    )
    picture = game.drawing(state, None, None)
    raised = [p for p in picture.pieces if p.badge]
    assert [(p.badge, p.label) for p in raised] == [("2", "o")]
    pinned = [p for p in picture.pieces if p.ring == drawing.VERMILLION]
    assert len(pinned) == 4
    corners = {(p.x, p.y) for p in pinned}
    xs, ys = sorted({x for x, _ in corners}), sorted({y for _, y in corners})
    assert (raised[0].x, raised[0].y) == ((xs[0] + xs[1]) / 2, (ys[0] + ys[1]) / 2)
    # the last piece drawn is the raised one: on top of the four under it
    assert picture.pieces[-1] is raised[0]
    image = decoded(drawing_png(picture))
    assert at(image, *inside(raised[0])) == rgb(drawing.WHITE)
    # the ring of a pinned knight: just inside its edge
    ring = pinned[0]
    colour_at_ring = at(image, ring.x - ring.radius + 2, ring.y)
    assert colour_at_ring == rgb(drawing.VERMILLION)
    # the dots of the raised points are part of the board
    assert len(picture.backdrop.marks) == 16


def test_knightline_stacks_show_seat_shape_colour_and_height():
    game = KnightLine()
    state = play(game, start(game, {}, 3), "0,0/2,1/3")
    picture = game.drawing(state, None, "0,0/2,1/3")
    image = decoded(board_png(game, state, None, "0,0/2,1/3"))
    assert image.size == picture_size(picture)
    looks = {(p.shape, p.fill, p.label) for p in picture.pieces}
    assert looks == {
        ("disc", drawing.WHITE, "17"),
        ("disc", drawing.WHITE, "3"),
        ("square", drawing.BLACK, "20"),
        ("diamond", drawing.VERMILLION, "20"),
    }
    for piece in picture.pieces:
        assert at(image, *inside(piece)) == rgb(piece.fill)
    assert len(picture.highlights) == 2
    for polygon in picture.highlights:
        x0, y0 = polygon.points[0]
        assert at(image, x0 + 6, y0 + 6) == rgb(drawing.HIGHLIGHT)
    # the occupied area 0..2 x -1..1 plus a margin: 5 x 5 cells
    assert len(picture.backdrop.cells) == 25


def test_knightline_grey_tile_of_the_promotion_variants():
    game = KnightLine()
    for variant in ("blocker", "wildcard"):
        state = start(game, {variant: True})
        picture = game.drawing(state, None, None)
        [grey] = picture.pieces
        assert (grey.label, grey.fill) == ("G", drawing.GREY)
        assert len(picture.backdrop.cells) == 9
        assert variant[:5] in picture.legend or "blocks" in picture.legend


def test_knightvision_and_uknight_show_stacks_and_doubles_as_squares():
    """Labelled with the symbols of the text board (docs/spec/games/knightvision.md §8,
    docs/spec/games/uknight.md §9): w b a knight or stone, W B a stack or double."""
    game = KnightVision()
    state = start(game, {"size": "9"})
    state["rows"] = ["W........", "b........"] + ["........."] * 7
    state["last"] = "a1+"  # the picture marks the state's last move, as the text does
    picture = game.drawing(state, None, "a1+")
    square, disc = picture.pieces
    assert (square.shape, square.label, disc.shape, disc.label) == ("square", "W", "disc", "b")
    image = decoded(drawing_png(picture))
    assert at(image, *inside(square)) == rgb(drawing.WHITE)
    assert at(image, *inside(disc)) == rgb(drawing.BLACK)
    assert len(picture.highlights) == 1

    game = Uknight()
    state = start(game, {"size": "5"})
    state["pieces"] = {"E5": "W", "E4": "b"}
    state["last"] = {"seat": 0, "text": "H7-E5", "removed": [], "kind": "move"}
    state["last"].update(cells=["H7", "E5"], axe=False, taken=None, phase_begins=False)
    picture = game.drawing(state, None, "H7-E5")
    assert sorted((p.shape, p.label) for p in picture.pieces) == [("disc", "b"), ("square", "W")]
    assert len(picture.highlights) == 2  # from H7 and to E5
    assert "Phase 1" in picture.legend


# -- SVG ------------------------------------------------------------------------------------


@pytest.mark.parametrize("size", [9, 19])
def test_lox_svg_is_well_formed_with_every_cell_and_stone(size):
    game = Lox()
    options = game.parse_options({"size": str(size)}, 2)
    state = game.state_with_stones(options, {"a1": 0, "b2": 1, "c3": 1}, 0)
    state["last"] = [1, "c3"]
    root = svg_tree(board_svg(game, state, None, "c3"))
    width, height = int(root.get("width")), int(root.get("height"))
    assert root.get("viewBox") == f"0 0 {width} {height}"
    polygons = root.findall(f"{SVG}polygon")
    cells = [p for p in polygons if p.get("fill") == drawing.CELL]
    assert len(cells) == size * size
    assert len([p for p in polygons if p.get("fill") == drawing.HIGHLIGHT]) == 1
    stones = [c.get("fill") for c in root.findall(f"{SVG}circle")]
    assert sorted(stones) == sorted([drawing.VERMILLION, drawing.BLUE, drawing.BLUE])
    texts = [t.text for t in root.findall(f"{SVG}text")]
    assert texts.count("R") == 1 and texts.count("B") == 2
    # coordinates on every side: each letter and number twice
    assert texts.count("a") == 2 and texts.count(str(size)) == 2


def test_svg_text_is_escaped_and_there_are_no_scripts_or_references():
    backdrop = drawing.Backdrop(
        400, 50, (drawing.Polygon(drawing.square(0, 0, 10), drawing.CELL),),
        labels=(drawing.Text(5, 5, "<a&b>", 10),),
    )  # fmt: skip
    picture = drawing.Drawing(
        backdrop,
        pieces=(drawing.Piece(20, 20, 8, drawing.WHITE, '"&<'),),
        legend="</svg><script>alert(1)</script>\nsecond & last",
    )
    svg = drawing_svg(picture)
    root = svg_tree(svg)
    texts = [t.text for t in root.iter(f"{SVG}text")]
    assert texts == ["<a&b>", '"&<', "</svg><script>alert(1)</script>", "second & last"]
    assert root.find(f".//{SVG}script") is None
    assert int(root.get("height")) == picture_size(picture)[1]
    png = decoded(drawing_png(picture))
    assert png.size == picture_size(picture)


# -- every game and variant, every perspective ------------------------------------------------


@pytest.mark.parametrize(
    ("game", "raw", "players"),
    VARIANTS,
    ids=[f"{g.name}-{'-'.join(map(str, raw.items()))}-{p}" for g, raw, p in VARIANTS],
)
def test_random_games_draw_in_every_perspective(game, raw, players):
    options = game.parse_options(raw, players)
    for seed in (1, 2, 3):
        moves, _final = random_game(game, options, players, seed, max_plies=150)
        state = game.initial_state(options, players, seed)
        positions = [(state, None)]
        for move in moves:
            state = game.apply_move(state, game.to_move(state), move)
            positions.append((state, move))
        sampled = positions[:: max(1, len(positions) // 6)] + positions[-1:]
        for state, last in sampled:
            texts, svgs = set(), set()
            for perspective in (None, *range(players)):
                texts.add(game.render_board(state, perspective))
                svg = board_svg(game, state, perspective, last)
                root = svg_tree(svg)
                assert root.find(f".//{SVG}script") is None
                assert "href" not in svg
                svgs.add(svg)
                png = board_png(game, state, perspective, last)
                assert len(png) < PNG_BUDGET
                image = decoded(png)
                assert image.size == (int(root.get("width")), int(root.get("height")))
            # no perspective sees more in the picture than in the text board
            if len(texts) == 1:
                assert len(svgs) == 1


@pytest.mark.parametrize("ply", ["pass", "swap", "resign"])
def test_a_last_ply_without_cells_highlights_nothing(ply):
    for game, raw, players in VARIANTS:
        state = start(game, raw, players)
        picture = game.drawing(state, None, ply)
        assert picture.highlights == ()


def test_the_largest_boards_stay_within_the_mail_budget():
    rng = random.Random(7)
    for game, raw, players in VARIANTS:
        options = game.parse_options(raw, players)
        moves, state = random_game(game, options, players, rng.randrange(1000), max_plies=120)
        png = board_png(game, state, None, moves[-1] if moves else None)
        assert len(png) < PNG_BUDGET, (game.name, raw, len(png))


def test_too_many_colours_for_the_palette_still_draw_true_colours():
    colours = [f"#{index * 8:02x}{255 - index * 8:02x}40" for index in range(30)]
    backdrop = drawing.Backdrop(320, 40, ())
    pieces = tuple(
        drawing.Piece(10 + 10 * index, 20, 4, colour) for index, colour in enumerate(colours)
    )
    image = decoded(drawing_png(drawing.Drawing(backdrop, pieces)))
    for piece in pieces:
        assert at(image, piece.x, piece.y) == rgb(piece.fill)


def test_a_game_without_a_drawing_stays_text_only():
    game = Tally()
    state = game.initial_state(game.parse_options({}, 2), 2, seed=1)
    assert game.drawing(state, None, None) is None
    assert board_svg(game, state) is None
    assert board_png(game, state, 0, "1") is None


def test_a_long_legend_wraps_to_the_board_width_in_both_pictures():
    backdrop = drawing.Backdrop(200, 40, ())
    words = "the quick brown fox jumps over the lazy dog " * 4
    picture = drawing.Drawing(backdrop, legend=words.strip() + "\nshort")
    lines = legend_lines(picture)
    assert len(lines) > 3 and lines[-1] == "short"
    assert " ".join(lines[:-1]) == words.strip()
    width, height = picture_size(picture)
    assert (width, height) == (200, 40 + LEGEND_LINE * len(lines))
    assert decoded(drawing_png(picture)).size == (width, height)
    root = svg_tree(drawing_svg(picture))
    assert [t.text for t in root.iter(f"{SVG}text")] == lines


@pytest.mark.parametrize(
    "board", [RhombusBoard(9), RhombusBoard(19), HexHexBoard(5), HexHexBoard(7)], ids=repr
)
def test_hex_coordinates_stand_on_every_side_once_each_and_never_on_one_another(board):
    labels = hex_picture(board).backdrop.labels
    letters = {name.rstrip("0123456789") for name in map(board.name, board.cells)}
    numbers = {
        name.lstrip("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
        for name in map(board.name, board.cells)
    }
    texts = [label.text for label in labels]
    assert sorted(texts) == sorted([*letters, *numbers] * 2)
    spots = [(round(label.x), round(label.y)) for label in labels]
    assert len(set(spots)) == len(spots)
    centres = hex_picture(board).centres.values()
    radius = hex_picture(board).radius
    for x, y in spots:  # outside every cell
        assert all((x - cx) ** 2 + (y - cy) ** 2 > (0.8 * radius) ** 2 for cx, cy in centres)
