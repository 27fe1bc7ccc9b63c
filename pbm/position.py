"""A board's position, derived by replaying its move log (docs/spec/server.md §1.6)."""

from dataclasses import dataclass, field

from .game import BaseGame, MoveError, Options, Outcome, State
from .store import PlyRecord

PLAYING, RESIGNED, FORFEITED = "playing", "resigned", "forfeited"


@dataclass
class Position:
    game: BaseGame
    options: Options
    state: State  # None where only the seats are replayed (seats_after)
    holders: list[str]  # the userid holding each seat now (after swaps)
    statuses: list[str] = field(default_factory=list)
    time_used: list[int] = field(default_factory=list)
    plies: list[PlyRecord] = field(default_factory=list)

    @classmethod
    def start(cls, game, options, userids, seed, state=None) -> "Position":
        """The position before any ply; `state` stands in for the game's own when given."""
        seats = len(userids)
        return cls(
            game=game,
            options=options,
            state=game.initial_state(options, seats, seed) if state is None else state,
            holders=list(userids),
            statuses=[PLAYING] * seats,
            time_used=[0] * seats,
        )

    @property
    def seats(self) -> int:
        return len(self.holders)

    @property
    def plies_made(self) -> int:
        return len(self.plies)

    @property
    def move_number(self) -> int:
        """The number the next ply will get."""
        return len(self.plies) + 1

    def playing_seats(self) -> list[int]:
        return [s for s, status in enumerate(self.statuses) if status == PLAYING]

    def outcome(self) -> Outcome | None:
        """The game's own result, or the last seat standing after resignations."""
        playing = self.playing_seats()
        if self.seats > 1 and len(playing) <= 1:
            gone = ", ".join(
                f"{self.holders[s]} {'resigned' if status == RESIGNED else 'forfeited'}"
                for s, status in enumerate(self.statuses)
                if status != PLAYING
            )
            return Outcome(winners=tuple(playing), reason=gone)
        return self.game.outcome(self.state)

    def to_move(self) -> int | None:
        if self.outcome() is not None:
            return None
        return self.game.to_move(self.state)

    def seats_of(self, userid: str) -> list[int]:
        return [s for s, holder in enumerate(self.holders) if holder == userid]

    def has_played(self, seat: int) -> bool:
        return any(p.seat == seat for p in self.plies)

    def copy(self) -> "Position":
        """An independent position to try moves on (states are never mutated in place)."""
        return Position(
            self.game,
            self.options,
            self.state,
            list(self.holders),
            list(self.statuses),
            list(self.time_used),
            list(self.plies),
        )

    def try_text(self, seat: int, text: str, userid: str | None = None) -> PlyRecord:
        """Play a move text or pass on this (copied) position; MoveError if illegal."""
        kind, canonical = canonical_ply(self.game, self.state, seat, text)
        ply = PlyRecord(
            ply=self.move_number,
            seat=seat,
            userid=userid or self.holders[seat],
            kind=kind,
            text=canonical,
            auto=0,
            charged=0,
            created_at="",
        )
        self.apply(ply)
        return ply

    def apply(self, ply: PlyRecord) -> None:
        """Advance by one log entry: game moves through the plugin, the rest in the core."""
        kind, seat = ply.kind, ply.seat
        if kind in ("move", "pass"):
            text = "pass" if kind == "pass" else ply.text
            self.state = self.game.apply_move(self.state, seat, text)
        elif kind == "swap":
            self.holders[0], self.holders[1] = self.holders[1], self.holders[0]
        elif kind == "resign":
            self.statuses[seat] = RESIGNED
        elif kind == "forfeit":
            self.statuses[seat] = FORFEITED
        else:
            raise ValueError(f"unknown ply kind {kind!r}")
        self.time_used[seat] += ply.charged
        self.plies.append(ply)


def canonical_ply(game, state, seat: int, text: str) -> tuple[str, str]:
    """(kind, canonical text) of a move text or pass; MoveError when it is not legal now."""
    if text.lower() in ("pass", "--"):
        if not game.can_pass(state, seat):
            reason = game.pass_refusal(state, seat) if hasattr(game, "pass_refusal") else None
            raise MoveError(reason or f"{game.display_name} does not allow passing")
        return "pass", "pass"
    if not text:
        raise MoveError(f'Invalid move "{text}" entered')
    return "move", game.parse_move(state, seat, text)


def replay(game, options, userids, seed, plies, upto=None, snapshot=None) -> Position:
    """The position after `upto` plies (all by default), from the snapshot when it matches."""
    plies = plies if upto is None else plies[:upto]
    if snapshot is not None and upto is None and snapshot[0] == len(plies):
        # Core-side facts (holders, statuses, times) are cheap: replay them without the game.
        position = Position.start(game, options, userids, seed, state=snapshot[1])
        for ply in plies:
            _apply_core_only(position, ply)
        return position
    position = Position.start(game, options, userids, seed)
    for ply in plies:
        position.apply(ply)
    return position


def seats_after(game, options, userids, plies) -> Position:
    """Who holds each seat, how they stand and their clocks after the log, without the
    game's state (None): what a table of finished boards shows, whose result is stored."""
    position = Position(
        game, options, None, list(userids), [PLAYING] * len(userids), [0] * len(userids)
    )
    for ply in plies:
        _apply_core_only(position, ply)
    return position


def _apply_core_only(position: Position, ply: PlyRecord) -> None:
    if ply.kind == "swap":
        position.holders[0], position.holders[1] = position.holders[1], position.holders[0]
    elif ply.kind == "resign":
        position.statuses[ply.seat] = RESIGNED
    elif ply.kind == "forfeit":
        position.statuses[ply.seat] = FORFEITED
    position.time_used[ply.seat] += ply.charged
    position.plies.append(ply)


def scores(position: Position, outcome: Outcome) -> list[float]:
    """Per seat: 1 for a winner, 0 for a loser; a tie gives 1/2 to seats still playing."""
    if outcome.winners:
        return [1.0 if s in outcome.winners else 0.0 for s in range(position.seats)]
    return [0.5 if status == PLAYING else 0.0 for status in position.statuses]
