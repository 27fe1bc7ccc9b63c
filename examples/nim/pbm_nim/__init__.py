"""Nim for pbm: the example game of docs/writing-games.md, a plugin from outside pbm.

Heaps of 1, 3, 5 (7, 9) stones; a turn takes one or more stones from one heap. Whoever
takes the last stone wins, or loses with -misere. A move is the heap's letter and the
number of stones taken: "b2" takes two stones from heap b.
"""

import re

from pbm import hookimpl
from pbm.game import BaseGame, Flag, MoveError, Number

HEAP_SIZES = (1, 3, 5, 7, 9)
MOVE_RE = re.compile(r"([a-z])\s*([0-9]{1,3})")


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


@hookimpl
def register_games(register):
    register(Nim())
