"""The server options of a board and of a seek (docs/spec/server.md §2.2): the
correspondence clock's `--time` and `--cap` (docs/spec/server.md §9.5), and a seek's own
`--rating` and `--days` (docs/spec/server.md §11.2).

Each parser takes the option's value as the mail gave it (None for a bare `--time`) and
returns what is stored, or raises ValueError with the message the sender is shown.
"""

import re

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
