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

import marshal
import threading
from abc import ABC, abstractmethod
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable
from typing import Generic, Protocol, TypeVar

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


E = TypeVar("E", bound=Engine)
# A server move asks about two or three states, a playout about one a ply; a server whose
# moves come on many boards in turn asks about each board's again only after the others'
# moves, so as many are kept as the server keeps boards (pbm/boardcache.py).
STATES_KEPT = 256
# Version 2 writes no back-references, which depend on reference counts: the same value
# gives the same bytes whoever else holds its parts.
MARSHAL_VERSION = 2


def _fingerprint(state: State) -> bytes | None:
    """Bytes equal for equal states (and only for equal ones), or None for a state holding
    something marshal cannot write (never kept)."""
    try:
        return marshal.dumps(state, MARSHAL_VERSION)
    except ValueError:
        return None


class StateEngines(Generic[E]):
    """The engines of the last few JSON states a game was asked about, so that its plugin
    contract (legal_moves, forced_move, apply_move on JSON states) does not build its
    engine from the JSON again for every call on the same state: apply_move keeps the
    engine it played for the state it returns, which the next call is asked about.

    A state is recognised by identity and checked by value against its marshal bytes taken
    when it was kept (C speed, and equal bytes are equal values): a state someone changed in
    place is built again, never served stale. The engines kept are never played on: `of`
    gives one to read, `fresh` a copy to play on.
    Shared by the threads of a server (readers, the writer, robots): a lock keeps the order.
    """

    def __init__(self, build: Callable[[State], E], size: int = STATES_KEPT) -> None:
        self.build = build
        self.size = size
        self._kept: OrderedDict[int, tuple[State, bytes, E]] = OrderedDict()
        self._lock = threading.Lock()

    def of(self, state: State) -> E:
        """The engine of the state, to read only (never played on)."""
        key = id(state)
        with self._lock:
            entry = self._kept.get(key)
            if entry is not None and entry[0] is state:
                self._kept.move_to_end(key)
        if entry is not None and entry[0] is state and _fingerprint(state) == entry[1]:
            return entry[2]
        engine = self.build(state)
        self.keep(state, engine)
        return engine

    def fresh(self, state: State) -> E:
        """An engine of the state to play on."""
        twin: E = self.of(state).copy()  # type: ignore[assignment]  # copy() is the same class
        return twin

    def made(self, engine: E) -> State:
        """The state of an engine just played on, kept with the engine (which the caller
        then leaves alone): what apply_move returns."""
        state = engine.state()
        self.keep(state, engine)
        return state

    def keep(self, state: State, engine: E) -> None:
        """Remember the engine of a state; neither may be changed afterwards."""
        fingerprint = _fingerprint(state)
        if fingerprint is None:
            return
        entry = (state, fingerprint, engine)
        with self._lock:
            self._kept[id(state)] = entry
            self._kept.move_to_end(id(state))
            while len(self._kept) > self.size:
                self._kept.popitem(last=False)
