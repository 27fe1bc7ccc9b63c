"""The server options of a board and of a seek (docs/spec/server.md §2.2): the
correspondence clock's `--time` and `--cap` (docs/spec/server.md §9.5), a seek's own
`--rating` and `--days` (docs/spec/server.md §11.2), and a tournament's `--largest`,
`--start` and `--players` (docs/spec/server.md §11.9).

Each parser takes the option's value as the mail gave it (None for a bare `--time`) and
returns what is stored, or raises ValueError with the message the sender is shown.
"""

import re
from datetime import UTC, datetime

DAY_SECONDS = 86400
HOUR_SECONDS = 3600
DEFAULT_CAP_DAYS = 10
MAX_BANK_DAYS = 365
MAX_INCREMENT_HOURS = 240
MAX_RATING = 9999
DEFAULT_SEEK_DAYS = 7
MAX_SEEK_DAYS = 60

TIME_RE = re.compile(r"([0-9]{1,3})d(?:\+([0-9]{1,3})h)?", re.I)
CAP_RE = re.compile(r"([0-9]{1,3})d", re.I)
RATING_RE = re.compile(r"([0-9]{1,4})-([0-9]{1,4})")
DAYS_RE = re.compile(r"[0-9]{1,2}")

TIME_MESSAGE = (
    "--time must be <days>d+<hours>h, with 1 to 365 days and 0 to 240 hours (e.g. --time=3d+24h)"
)
CAP_MESSAGE = "--cap must be <days>d, from the --time days to 365 (e.g. --cap=10d)"
RATING_MESSAGE = (
    "--rating must be LOW-HIGH, two ratings from 0 to 9999, the lower first "
    "(e.g. --rating=1400-1800)"
)
DAYS_MESSAGE = f"--days must be between 1 and {MAX_SEEK_DAYS}"
FORFEIT_WITH_TIME_MESSAGE = (
    "--forfeittime does not apply with --time: a clocked board is lost on time, not after "
    "days without a move"
)
# The options only `seek` takes, and the key each is stored under among the server options.
SEEK_ONLY = {"rating": "rating", "days": "seek_days"}
# The options only `tournament create` takes (docs/spec/server.md §11.9), and their keys.
TOURNAMENT_ONLY = {"largest": "largest", "start": "start_at", "players": "start_players"}
# Each command's own options: given to any other command, they are refused by name.
OWN_OPTIONS = {**SEEK_ONLY, **TOURNAMENT_ONLY}
MIN_DIVISION = 3  # players of a division: fewer and the tournament is called off
DEFAULT_LARGEST = 10
MAX_LARGEST = 20
# Entrants of one tournament: its start makes every board of every division in one
# transaction, so this bounds the work one join (the last) can cause.
MAX_ENTRANTS = 100
LARGEST_MESSAGE = f"--largest must be between {MIN_DIVISION} and {MAX_LARGEST} players"
PLAYERS_MESSAGE = f"--players must be between {MIN_DIVISION} and {MAX_ENTRANTS}"
START_MESSAGE = (
    "--start must be a date, or a date and a time in UTC "
    "(e.g. --start=2026-05-01 or --start=2026-05-01T18:00)"
)
START_RE = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})(?:T([0-9]{2}):([0-9]{2}))?")


def parse_time(value: str | None) -> tuple[int, int]:
    """`3d+24h` -> (initial bank, increment) in seconds."""
    match = TIME_RE.fullmatch(value or "")
    if not match:
        raise ValueError(TIME_MESSAGE)
    days, hours = int(match.group(1)), int(match.group(2) or 0)
    if not 1 <= days <= MAX_BANK_DAYS or hours > MAX_INCREMENT_HOURS:
        raise ValueError(TIME_MESSAGE)
    return days * DAY_SECONDS, hours * HOUR_SECONDS


def parse_cap(value: str | None, initial: int) -> int:
    """`10d` -> the cap in seconds, at least the initial bank; None -> the default cap."""
    days = initial // DAY_SECONDS
    if value is None:
        if days > DEFAULT_CAP_DAYS:
            raise ValueError(
                f"--time of {days} days is more than the default cap of {DEFAULT_CAP_DAYS} "
                f"days: give --cap={days}d or more"
            )
        return DEFAULT_CAP_DAYS * DAY_SECONDS
    match = CAP_RE.fullmatch(value)
    if not match or not days <= int(match.group(1)) <= MAX_BANK_DAYS:
        raise ValueError(CAP_MESSAGE)
    return int(match.group(1)) * DAY_SECONDS


def parse_rating(value: str | None) -> list[int]:
    """`1400-1800` -> [1400, 1800]: the opponents' ratings a seek accepts."""
    match = RATING_RE.fullmatch(value or "")
    if not match:
        raise ValueError(RATING_MESSAGE)
    low, high = int(match.group(1)), int(match.group(2))
    if low > high or high > MAX_RATING:
        raise ValueError(RATING_MESSAGE)
    return [low, high]


def parse_seek_days(value: str | None) -> int:
    """`14` -> the days a seek stays open."""
    text = value or ""
    if not DAYS_RE.fullmatch(text) or not 1 <= int(text) <= MAX_SEEK_DAYS:
        raise ValueError(DAYS_MESSAGE)
    return int(text)


def clock_options(raw: dict) -> dict:
    """The clock's server options from the raw `--time` and `--cap` values: the board's
    clock_initial, clock_increment and clock_cap, in seconds; {} without `--time`."""
    if "time" not in raw:
        if "cap" in raw:
            raise ValueError("--cap needs --time")
        return {}
    if "forfeittime" in raw:
        raise ValueError(FORFEIT_WITH_TIME_MESSAGE)
    initial, increment = parse_time(raw["time"])
    cap = parse_cap(raw.get("cap"), initial)
    return {"clock_initial": initial, "clock_increment": increment, "clock_cap": cap}


def seek_options(raw: dict) -> dict:
    """A seek's own options, stored under their SEEK_ONLY keys."""
    options: dict[str, int | list[int]] = {}
    if "rating" in raw:
        options["rating"] = parse_rating(raw["rating"])
    if "days" in raw:
        options["seek_days"] = parse_seek_days(raw["days"])
    return options


def tournament_options(raw: dict) -> dict:
    """`tournament create`'s own options: the largest division, and when it starts (a time
    in UTC, stored as a stamp; a number of players)."""
    options: dict[str, int | str] = {}
    if "largest" in raw:
        options["largest"] = _whole(raw["largest"], MIN_DIVISION, MAX_LARGEST, LARGEST_MESSAGE)
    if "players" in raw:
        options["start_players"] = _whole(
            raw["players"], MIN_DIVISION, MAX_ENTRANTS, PLAYERS_MESSAGE
        )
    if "start" in raw:
        match = START_RE.fullmatch(raw["start"] or "")
        if not match:
            raise ValueError(START_MESSAGE)
        year, month, day, hour, minute = (int(g) if g else 0 for g in match.groups())
        try:
            moment = datetime(year, month, day, hour, minute, tzinfo=UTC)
        except ValueError:
            raise ValueError(START_MESSAGE) from None
        options["start_at"] = moment.strftime("%Y-%m-%dT%H:%M:%SZ")
    return options


def _whole(value: str | None, low: int, high: int, message: str) -> int:
    if not re.fullmatch(r"[0-9]{1,4}", value or "") or not low <= int(value or 0) <= high:
        raise ValueError(message)
    return int(value or 0)


def options_text(server_options: dict, defaults: dict) -> str:
    """The board's server options as they would be written (`--nagtime=3 --time=3d+24h`),
    leaving out those equal to the server's defaults; "" when there is none."""
    words = []
    for key, name in (("nag_days", "nagtime"), ("forfeit_days", "forfeittime")):
        if key in server_options and server_options[key] != defaults.get(key):
            words.append(f"--{name}={server_options[key]}")
    if server_options.get("total_days"):
        words.append(f"--totaltime={server_options['total_days']}")
    if server_options.get("clock_initial"):
        time = server_options["clock_initial"] // DAY_SECONDS
        increment = server_options["clock_increment"] // HOUR_SECONDS
        words.append(f"--time={time}d" + (f"+{increment}h" if increment else ""))
        if server_options["clock_cap"] != DEFAULT_CAP_DAYS * DAY_SECONDS:
            words.append(f"--cap={server_options['clock_cap'] // DAY_SECONDS}d")
    return " ".join(words)
