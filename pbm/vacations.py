"""Vacations (docs/spec/server.md §9.4): a self-service pause of nags, forfeits and auto-accepts."""

from dataclasses import dataclass
from datetime import UTC, datetime

from .clock import parse_stamp, show_duration, show_time


@dataclass
class VacationState:
    since: datetime | None  # start of the vacation under way, or None
    returned_at: datetime | None  # end of the last vacation
    used_seconds: int  # this calendar year (UTC), the running vacation included

    @property
    def on(self) -> bool:
        return self.since is not None


def _year_bounds(moment: datetime):
    start = datetime(moment.year, 1, 1, tzinfo=UTC)
    return start, start.replace(year=moment.year + 1)


def vacation_state(store, userid: str, now: datetime) -> VacationState:
    year_start, year_end = _year_bounds(now)
    since = returned = None
    used = 0
    for period in store.users.vacations(userid):
        started = parse_stamp(period.started_at)
        ended = parse_stamp(period.ended_at) if period.ended_at else None
        if ended is None:
            since = started
        else:
            returned = ended if returned is None or ended > returned else returned
        overlap_start = max(started, year_start)
        overlap_end = min(ended or now, year_end)
        if overlap_end > overlap_start:
            used += int((overlap_end - overlap_start).total_seconds())
    return VacationState(since=since, returned_at=returned, used_seconds=used)


def allowance_seconds(config) -> int:
    return config.number("timeouts.vacation_days_per_year") * 86400


def vacation_body(ctx, userid, state, allowance, note=""):
    return ctx.render(
        "mail/vacation.txt",
        userid=userid,
        on=state.on,
        since=show_time(state.since) if state.on else "",
        year=ctx.now.year,
        used=show_duration(state.used_seconds),
        left=show_duration(max(0, allowance - state.used_seconds)),
        note=note,
    )
