"""The search contract (docs/spec/server.md §10.5): a mutable position that robots search and
random playouts step through, many thousand times a move.

The plugin contract proper works on immutable JSON states, which is right for the move log
and wrong for search: every apply copies the state. A game may therefore return its own
fast Engine from BaseGame.engine; ContractEngine, the default, steps through the plugin
contract itself, so that every game, an outside plugin's too, can be searched.

A move of an engine is an opaque hashable value (a game's fast engine may use small
integers); move_text gives its canonical text for the move log. legal_moves lists every
move the seat on move may make, "pass" included when the rules allow one, voluntary or
forced, so that a game always goes on until outcome() is known.
"""

from abc import ABC, abstractmethod
from collections.abc import Hashable, Iterable
from typing import Protocol

from .outcome import Outcome, State


class Engine(ABC):
    @abstractmethod
    def to_move(self) -> int | None:
        """The seat on move; None once the game is over."""

    @abstractmethod
    def legal_moves(self) -> list[Hashable]:
        """The moves of the seat on move, "pass" included when allowed; empty once over."""

    @abstractmethod
    def play(self, move: Hashable) -> None:
        """Make a move of legal_moves() for the seat on move, in place."""

    @abstractmethod
    def copy(self) -> "Engine":
        """An independent copy: playing on it leaves this engine as it is."""

    @abstractmethod
    def outcome(self) -> Outcome | None:
        """The game's Outcome once the game is over, else None."""

    @abstractmethod
    def move_text(self, move: Hashable) -> str:
        """The canonical text of a move of legal_moves(), as parse_move gives it."""

    @abstractmethod
    def state(self) -> State:
        """The JSON state of the position, equal to what apply_move would have made."""


class Rules(Protocol):
    """What ContractEngine asks of a game: these methods of pbm.game.BaseGame (which imports
    this module, so it is not named here)."""

    def to_move(self, state: State) -> int | None: ...
    def legal_moves(self, state: State, seat: int) -> Iterable[str]: ...
    def forced_move(self, state: State) -> str | None: ...
    def can_pass(self, state: State, seat: int) -> bool: ...
    def apply_move(self, state: State, seat: int, move: str) -> State: ...
    def outcome(self, state: State) -> Outcome | None: ...


class ContractEngine(Engine):
    """Any game's positions, stepped through its plugin contract; moves are canonical texts."""

    def __init__(self, game: Rules, state: State):
        self.game = game
        self._state = state

    def to_move(self) -> int | None:
        return self.game.to_move(self._state)

    def legal_moves(self) -> list[Hashable]:
        seat = self.to_move()
        if seat is None:
            return []
        moves: list[Hashable] = list(self.game.legal_moves(self._state, seat))
        if not moves:
            forced = self.game.forced_move(self._state)
            if forced is not None:
                return [forced]
        if "pass" not in moves and self.game.can_pass(self._state, seat):
            moves.append("pass")
        return moves

    def play(self, move: Hashable) -> None:
        seat = self.to_move()
        if seat is None:
            raise ValueError(f"{move!r} played after the game ended")
        self._state = self.game.apply_move(self._state, seat, str(move))

    def copy(self) -> "ContractEngine":
        # States are never mutated (apply_move makes a new one), so sharing one is safe.
        return ContractEngine(self.game, self._state)

    def outcome(self) -> Outcome | None:
        return self.game.outcome(self._state)

    def move_text(self, move: Hashable) -> str:
        return str(move)  # the moves of legal_moves() are texts already

    def state(self) -> State:
        return self._state
