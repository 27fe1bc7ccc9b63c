"""Correspondence clocks (docs/spec/server.md §9.5): each player's bank of time.

A bank starts at the initial time, loses what each ply of its seat was charged and gains
the increment after each of its moves, up to the cap. The charge is stored with the ply
(its clock time, docs/spec/server.md §1.6), so the banks derive from the move log alone and a replay gives
the same times. Only the running clock of the seat on move is worked out from the time
now, leaving out its player's vacation within the year's allowance (docs/spec/server.md §9.4).
"""

from datetime import UTC, datetime, timedelta
from typing import NamedTuple

from .clock import parse_stamp
from .serveroptions import DAY_SECONDS, HOUR_SECONDS

# The plies after which the mover's bank gains the increment; a resignation or forfeit
# ends the seat's play.
GAINING_KINDS = ("move", "pass", "swap")


class ClockTerms(NamedTuple):
    initial: int  # seconds in each bank at the start
    increment: int  # seconds added after each of a player's moves
    cap: int  # the most a bank holds

    @classmethod
    def of_board(cls, row) -> "ClockTerms | None":
        if row.clock_initial is None:
            return None
        return cls(row.clock_initial, row.clock_increment, row.clock_cap)

    @classmethod
    def of_options(cls, server_options: dict) -> "ClockTerms | None":
        if not server_options.get("clock_initial"):
            return None
        return cls(
            server_options["clock_initial"],
            server_options["clock_increment"],
            server_options["clock_cap"],
        )

    def describe(self) -> str:
        """`3 days + 24 hours a move, at most 10 days`."""
        days = _plural(self.initial // DAY_SECONDS, "day")
        hours = _plural(self.increment // HOUR_SECONDS, "hour")
        added = f" + {hours} a move" if self.increment else ""
        return f"{days}{added}, at most {_plural(self.cap // DAY_SECONDS, 'day')}"


def apply_ply(terms: ClockTerms, banks: list[int], ply) -> None:
    """The banks after one more ply of the log."""
    seat = ply.seat
    banks[seat] -= ply.clock_charged or 0
    if ply.kind in GAINING_KINDS:
        banks[seat] = min(terms.cap, banks[seat] + terms.increment)
    if ply.kind == "swap":
        # The holders of seats 0 and 1 exchange (docs/spec/server.md §3.5.3): each keeps their own bank.
        banks[0], banks[1] = banks[1], banks[0]


def banks_after(terms: ClockTerms, seats: int, plies) -> list[int]:
    """Each seat's bank after the plies, in seconds (negative once a clock has run out)."""
    banks = [terms.initial] * seats
    for ply in plies:
        apply_ply(terms, banks, ply)
    return banks


def banks_by_ply(terms: ClockTerms, seats: int, plies) -> list[int]:
    """For each ply, the bank its mover was left with: what the web view shows per ply."""
    banks = [terms.initial] * seats
    left = []
    for ply in plies:
        apply_ply(terms, banks, ply)
        seat = ply.seat if ply.kind != "swap" else 1 - ply.seat
        left.append(banks[seat])
    return left


def counted_vacations(periods, allowance: int, until: datetime) -> list[tuple]:
    """The stretches of a user's vacations that stop a clock: in each calendar year (UTC)
    the first `allowance` seconds of vacation; a vacation still running ends at `until`."""
    used: dict[int, float] = {}
    stretches = []
    for period in sorted(periods, key=lambda p: p.started_at):
        cursor = parse_stamp(period.started_at)
        end = parse_stamp(period.ended_at) if period.ended_at else until
        while cursor < end:
            year_end = datetime(cursor.year + 1, 1, 1, tzinfo=UTC)
            chunk_end = min(end, year_end)
            take = min((chunk_end - cursor).total_seconds(), allowance - used.get(cursor.year, 0))
            if take > 0:
                stretches.append((cursor, cursor + timedelta(seconds=take)))
                used[cursor.year] = used.get(cursor.year, 0) + take
            cursor = chunk_end
    return stretches


def running_seconds(since: datetime, until: datetime, periods, allowance: int) -> int:
    """How long a clock ran from `since` to `until`: the time between, less the player's
    vacation within the allowance."""
    paused = 0.0
    for start, end in counted_vacations(periods, allowance, until):
        overlap = (min(end, until) - max(start, since)).total_seconds()
        paused += max(0.0, overlap)
    return max(0, int((until - since).total_seconds() - paused))


def show_left(seconds: int) -> str:
    """`3 days 4 hours` (`3 days` on the hour), or under a day `5 hours 12 minutes`; `no
    time` once it is gone."""
    if seconds <= 0:
        return "no time"
    days, rest = divmod(int(seconds), DAY_SECONDS)
    hours, rest = divmod(rest, HOUR_SECONDS)
    minutes = rest // 60
    if days:
        parts = [(days, "day"), (hours, "hour")]
    elif hours:
        parts = [(hours, "hour"), (minutes, "minute")]
    else:
        parts = [(minutes, "minute")]
    shown = [_plural(count, word) for count, word in parts if count]
    return " ".join(shown) or "less than a minute"


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"
