"""The clock: the current time (PBM_NOW in tests), the stored form of a time, and how
times and durations are shown in mails."""

import os
from datetime import UTC, datetime, timedelta
from functools import lru_cache


def now() -> datetime:
    """The current time; PBM_NOW (ISO 8601) overrides it for tests and replays."""
    fixed = os.environ.get("PBM_NOW")
    if fixed:
        moment = datetime.fromisoformat(fixed)
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        return moment.astimezone(UTC).replace(microsecond=0)
    return datetime.now(UTC).replace(microsecond=0)


@lru_cache(maxsize=64)  # a command stamps the same few moments many times
def stamp(moment: datetime) -> str:
    """The stored form of a time: UTC ISO 8601."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_stamp(text: str) -> datetime:
    return datetime.fromisoformat(text)


def show_time(moment: datetime | str) -> str:
    if isinstance(moment, str):
        moment = parse_stamp(moment)
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


def show_duration(seconds: int) -> str:
    days, rest = divmod(int(seconds), 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{days} days, {hours:02d}:{minutes:02d}:{secs:02d}"


def seconds_between(earlier: str, later: datetime) -> int:
    return max(0, int((later - parse_stamp(earlier)).total_seconds()))


HOUR = timedelta(hours=1)
DAY = timedelta(days=1)
