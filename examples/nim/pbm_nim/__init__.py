"""Nim for pbm: the example game of docs/writing-games.md, a plugin from outside pbm.

Heaps of 1, 3, 5 (7, 9) stones; a turn takes one or more stones from one heap. Whoever
takes the last stone wins, or loses with -misere. A move is the heap's letter and the
number of stones taken: "b2" takes two stones from heap b. The board has a picture, and
a robot plays it.
"""

import functools
import re

from pbm import drawing, hookimpl
from pbm.game import BaseGame, Flag, MoveError, Number

HEAP_SIZES = (1, 3, 5, 7, 9)
MOVE_RE = re.compile(r"([a-z])\s*([0-9]{1,3})")
SIDE = 80  # px of a heap's cell in the picture
MARGIN = 24  # px around the cells, where the letters stand


def letter(heap: int) -> str:
    return "abcde"[heap]


def joined(words: list[str]) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


class Nim(BaseGame):
    name = "nim"
    display_name = "Nim"
    player_names = ("First", "Second")
    options = (
        Number("heaps", 3, "heaps on the table,", low=2, high=len(HEAP_SIZES)),
        Flag("misere", "whoever takes the last stone loses"),
    )

    def initial_state(self, options, players, seed):
        return {
            "options": options,
            "heaps": list(HEAP_SIZES[: options["heaps"]]),
            "to_move": 0,
            "last": None,
            "winner": None,
            "reason": "",
        }

    def parse_move(self, state, seat, text):
        match = MOVE_RE.fullmatch(text.strip().lower())
        if not match:
            raise MoveError(
                f'Invalid move "{text}": write the heap\'s letter and how many stones you '
                "take, e.g. b2"
            )
        heap, taken = ord(match.group(1)) - ord("a"), int(match.group(2))
        canonical = f"{match.group(1)}{taken}"
        heaps = state["heaps"]
        if heap >= len(heaps):
            names = joined([letter(h) for h in range(len(heaps))])
            raise MoveError(f'Invalid move "{canonical}": the heaps are {names}')
        if taken == 0:
            raise MoveError(f'Invalid move "{canonical}": take at least one stone')
        if taken > heaps[heap]:
            left = heaps[heap]
            stones = "stone" if left == 1 else "stones"
            raise MoveError(f'Invalid move "{canonical}": heap {letter(heap)} has {left} {stones}')
        return canonical

    def legal_moves(self, state, seat):
        if self.to_move(state) != seat:
            return []
        return [
            f"{letter(heap)}{taken}"
            for heap, size in enumerate(state["heaps"])
            for taken in range(1, size + 1)
        ]

    def apply_move(self, state, seat, move):
        new = dict(state, to_move=1 - seat, last=move)
        if move == "pass":  # the core passes for a player who is out; the heaps stay
            return new
        heap, taken = ord(move[0]) - ord("a"), int(move[1:])
        new["heaps"] = [
            size - taken if h == heap else size for h, size in enumerate(state["heaps"])
        ]
        if not any(new["heaps"]):
            misere = state["options"]["misere"]
            new["winner"] = 1 - seat if misere else seat
            new["reason"] = f"{self.player_names[seat]} took the last stone" + (
                ", which loses with -misere" if misere else ""
            )
        return new

    def heap_rows(self, state) -> list[tuple[str, str, int]]:
        """(letter, stones drawn, count) of every heap, for templates/board.txt."""
        return [(letter(h), " ".join("o" * size), size) for h, size in enumerate(state["heaps"])]

    def drawing(self, state, perspective, last_move):
        """Every heap a cell with its count on a disc; the heap of the last move marked.
        Nothing is hidden, so every perspective sees the same picture."""
        heaps = state["heaps"]
        backdrop = heaps_backdrop(len(heaps))
        pieces = tuple(
            drawing.Piece(*heap_centre(heap), SIDE * 0.3, drawing.ORANGE, str(size))
            for heap, size in enumerate(heaps)
        )
        marked = [] if last_move in (None, "pass") else [ord(last_move[0]) - ord("a")]
        highlights = tuple(drawing.highlight(heap_cell(heap)) for heap in marked)
        return drawing.Drawing(backdrop, pieces, highlights, legend="The number: stones left")


def heap_cell(heap: int) -> tuple[drawing.Point, ...]:
    return drawing.square(MARGIN + heap * SIDE, MARGIN, SIDE)


def heap_centre(heap: int) -> drawing.Point:
    return MARGIN + (heap + 0.5) * SIDE, MARGIN + SIDE / 2


@functools.cache  # one Backdrop per number of heaps: the core caches what it draws of it
def heaps_backdrop(heaps: int) -> drawing.Backdrop:
    cells = tuple(drawing.Polygon(heap_cell(heap), drawing.CELL) for heap in range(heaps))
    labels = tuple(
        drawing.Text(heap_centre(heap)[0], y, letter(heap), 14)
        for heap in range(heaps)
        for y in (MARGIN / 2, MARGIN * 1.5 + SIDE)
    )
    return drawing.Backdrop(2 * MARGIN + heaps * SIDE, 2 * MARGIN + SIDE, cells, labels=labels)


@hookimpl
def register_games(register):
    register(Nim())


@hookimpl
def register_robots(register):
    # deferred: a mail about a game never needs the search, only robot work does
    from pbm.robots import Robot

    register(Robot(game="nim", name="mcts", description="Monte Carlo tree search on Nim's rules"))
