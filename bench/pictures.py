"""Board pictures (docs/spec/server.md §11.5): the mean cost of one PNG and one SVG over the
positions of a seeded random game on the largest board of each game, next to the text
board (render_board) of the same positions, measured in the same run; and the first picture
in a fresh process, where no cache helps yet, next to that process's imports alone."""

import statistics
import subprocess
import sys
import time
from pathlib import Path

from games.knightline import KnightLine
from games.knightpanic import KnightPanic
from games.knightvision import KnightVision
from games.lox import Lox
from games.uknight import Uknight
from pbm.pictures import board_png, board_svg, clear_caches
from pbm.testing import random_game

ROOT = Path(__file__).resolve().parent.parent
TARGET_MS = 5.0  # a move mail's PNG, on average over a game

# (label, game, options, players, first ply measured): Knight Line only late in a game,
# when the occupied area is largest.
LARGEST = [
    ("KnightVision 14x14", KnightVision(), {"size": "14"}, 2, 0),
    ("Lox 19x19 -control", Lox(), {"size": "19", "control": True}, 2, 0),
    ("Uknight base 7", Uknight(), {"size": "7"}, 2, 0),
    ("Knight Panic 7x7 2D", KnightPanic(), {"size": "7"}, 2, 0),
    ("Knight Panic 7x7 3D", KnightPanic(), {"size": "7", "3d": True}, 2, 0),
    ("Knight Line, 3 players of 30 tiles, from ply 60", KnightLine(), {"stack": "30"}, 3, 60),
]

FRESH_PROCESS = """
import sys, time
start = time.perf_counter()
from games.lox import Lox
from pbm.pictures import board_png
imported = time.perf_counter()
game = Lox()
state = game.initial_state(game.parse_options({"size": "19"}, 2), 2, 1)
state = game.apply_move(state, 0, "e5")
if sys.argv[1] == "picture":
    board_png(game, state, None, "e5")
print(time.perf_counter() - imported, imported - start)
"""


def positions(game, options, players, first_ply, plies):
    """(state, last move) after every ply from first_ply of the longest of a few seeded games."""
    played = [
        (seed, random_game(game, options, players, seed, max_plies=plies)[0])
        for seed in range(1, 6)
    ]
    seed, moves = max(played, key=lambda one: len(one[1]))
    state = game.initial_state(options, players, seed)
    found = []
    for ply, move in enumerate(moves, start=1):
        state = game.apply_move(state, game.to_move(state), move)
        if ply >= first_ply:
            found.append((state, move))
    return found


def mean_ms(function, cases, passes) -> tuple[float, float]:
    """(wall, CPU) ms: the mean over the cases, of the fastest of several passes (on a
    shared machine other processes only ever add time, to the wall clock above all). Each
    pass starts with empty picture caches, then draws the first position untimed, as
    `pbm serve` would have drawn that board before."""
    walls, cpus = [], []
    for _ in range(passes):
        clear_caches()
        function(*cases[0])
        wall, cpu = time.perf_counter(), time.process_time()
        for state, move in cases:
            function(state, move)
        walls.append((time.perf_counter() - wall) / len(cases) * 1000)
        cpus.append((time.process_time() - cpu) / len(cases) * 1000)
    return min(walls), min(cpus)


def fresh_process(what: str) -> tuple[float, float]:
    """(ms of the picture or nothing, ms of the imports) in a new interpreter."""
    output = subprocess.run(
        [sys.executable, "-c", FRESH_PROCESS, what],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return float(output[0]) * 1000, float(output[1]) * 1000


def pictures(report, quick):
    passes = 2 if quick else 3
    for label, game, raw, players, first_ply in LARGEST:
        options = game.parse_options(raw, players)
        cases = positions(game, options, players, first_ply, 120 if quick else 400)
        png, png_cpu = mean_ms(
            lambda state, move, game=game: board_png(game, state, None, move), cases, passes
        )
        svg, svg_cpu = mean_ms(
            lambda state, move, game=game: board_svg(game, state, None, move), cases, passes
        )
        text, text_cpu = mean_ms(
            lambda state, move, game=game: game.render_board(state, None), cases, passes
        )
        sizes = [len(board_png(game, state, None, move)) for state, move in cases[::10]]
        met = "met" if png_cpu <= TARGET_MS else "NOT met"
        report(
            f"board picture, {label} ({len(cases)} positions, fastest of {passes} passes)",
            f"PNG {png:.2f} ms, CPU {png_cpu:.2f} ms (at most {max(sizes) / 1000:.0f} KB); "
            f"SVG {svg:.2f} ms, CPU {svg_cpu:.2f} ms",
            f"render_board {text:.2f} ms, CPU {text_cpu:.2f} ms",
            f"PNG {png_cpu / text_cpu:.1f}x in CPU; {met} (target {TARGET_MS:.0f} ms of CPU)",
        )
    runs = 3 if quick else 9
    firsts = [fresh_process("picture") for _ in range(runs)]
    bare = [fresh_process("none") for _ in range(runs)]
    report(
        f"first board picture in a fresh process, Lox 19x19 (median of {runs})",
        f"{statistics.median(first for first, _ in firsts):.1f} ms after the imports",
        f"imports of pbm.pictures and the game {statistics.median(i for _, i in bare):.1f} ms",
    )
