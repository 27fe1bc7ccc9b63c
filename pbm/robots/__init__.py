"""Robots: players the server moves for (docs/spec/server.md §11.7). A robot is a named way
to choose a move in one game; plugins give them through the `register_robots` hook, and each
built-in game ships an `mcts` robot with what it knows of its game.

What a robot does on a board is decided here, outside any transaction; the runner
(pbm/robots/runner.py) submits it through the dispatcher as the robot's own command."""

import random
from dataclasses import dataclass

from ..engine import Engine
from .mcts import NO_KNOWLEDGE, Budget, Choice, Knowledge, proven_lost, search

__all__ = ["Budget", "Choice", "Knowledge", "Robot", "RobotError", "get_robots"]

RESIGN_PROOF_PLIES = 2  # a robot resigns only a loss it proves within this many plies
VOTE_PLAYOUTS = 200  # the search that weighs a draw proposal


class RobotError(RuntimeError):
    """A robot registration that cannot work: an unknown game, a duplicate name."""


@dataclass(frozen=True)
class Robot:
    """The default robot: Monte Carlo tree search with a game's knowledge. A plugin may
    subclass it and override choose; what it returns is checked by the move command like
    any player's move."""

    game: str
    name: str
    description: str = "Monte Carlo tree search"
    knowledge: Knowledge = NO_KNOWLEDGE

    def choose(self, engine: Engine, seats: int, budget: Budget, rng: random.Random) -> Choice:
        return search(engine, seats, budget, rng, self.knowledge)

    def resigns(self, engine: Engine, seat: int, seats: int) -> bool:
        """Only a position proven lost: every move loses by force within a few plies."""
        return proven_lost(engine, seat, seats, RESIGN_PROOF_PLIES)

    def accepts(self, kind: str, engine: Engine, seat: int, seats: int, rng) -> bool:
        """The vote policy: an undo is always rejected (a robot's game is as it was mailed);
        a draw is accepted when the robot's own search gives its seat no more than a draw's
        share, whoever is on move."""
        if kind != "draw":
            return False
        if engine.outcome() is not None:
            return False
        value = self._value_for(engine, seat, seats, rng)
        return value <= 1 / seats

    def _value_for(self, engine, seat, seats, rng) -> float:
        budget = Budget(playouts=VOTE_PLAYOUTS)
        choice = search(engine, seats, budget, rng, self.knowledge)
        value = choice.value if choice.reason != "only" else 1 / seats
        if engine.to_move() == seat:
            return value
        # the mover's value; two seats share a whole, more seats have no such relation
        return 1 - value if seats == 2 else 1 / seats


def get_robots() -> dict[tuple[str, str], Robot]:
    """Every registered robot by (game, robot name)."""
    # deferred: the plugin manager loads the games; only robot work needs it
    from ..plugins import get_games, pm

    games = get_games()
    found: dict[tuple[str, str], Robot] = {}

    def register(robot: Robot):
        if robot.game not in games:
            raise RobotError(f'Robot "{robot.name}" plays "{robot.game}", which is no game here')
        key = (robot.game, robot.name)
        if key in found and found[key] is not robot:
            raise RobotError(f'Two robots are named "{robot.name}" for {robot.game}')
        found[key] = robot

    pm.hook.register_robots(register=register)
    return dict(sorted(found.items()))
