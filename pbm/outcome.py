"""What the plugin contract (pbm/game.py) and the search contract (pbm/engine.py) share: a
game's state and how a game ended. Both import it from here, so that neither imports the
other's module for it (BaseGame.engine returns a ContractEngine)."""

from dataclasses import dataclass
from typing import Any

# A plain JSON value (docs/spec/server.md §10.3); each game decides its shape.
State = Any


@dataclass(frozen=True)
class Outcome:
    """How a game ended: the winning seats (() is a tie), the points recorded and shown
    (not rated) and a few words on how it ended."""

    winners: tuple[int, ...]
    points: int = 1
    reason: str = ""
