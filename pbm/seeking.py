"""Open seeks that pair themselves (docs/spec/server.md §11.2).

Matching is a pure function of the open seeks (find_group), so that its invariant can be
tested on random seek sets: a group is `size` distinct users whose seeks have equal terms,
each one's rating inside every other's window. pair() runs it inside the write transaction
of the command (or cleanup step) that may complete a group, and starts each board through
starting.start_board: two processes can never pair the same seeks twice, since the second
transaction sees what the first committed.
"""

import json
import random
from dataclasses import dataclass
from datetime import timedelta

from .clock import parse_stamp, show_time, stamp
from .ratings import current_rating
from .serveroptions import SEEK_ONLY, options_text
from .starting import limit_problems, start_board
from .summary import options_line, text_table
from .timebank import ClockTerms

EVENT = "Paired by open seeks."


@dataclass(frozen=True)
class Seeker:
    """What matching needs of one open seek."""

    userid: str
    terms: str  # the options and server options as canonical JSON: equal terms pair
    rating: int
    window: tuple[int, int] | None  # the opponents' ratings accepted; None: any

    def accepts(self, other: "Seeker") -> bool:
        return self.window is None or self.window[0] <= other.rating <= self.window[1]


def compatible(a: Seeker, b: Seeker) -> bool:
    return a.userid != b.userid and a.terms == b.terms and a.accepts(b) and b.accepts(a)


def find_group(seekers, size: int, first: Seeker | None = None) -> list[Seeker] | None:
    """The first group of `size` mutually compatible seekers, taking them in the order
    given (the oldest seeks first); with `first`, only a group that has it. Each seeker
    joins when compatible with every member so far: for two seats this finds a partner
    whenever one exists."""
    starts = [first] if first is not None else list(seekers)
    for start in starts:
        group = [start]
        for other in seekers:
            if len(group) == size:
                break
            if all(compatible(member, other) for member in group):
                group.append(other)
        if len(group) == size:
            return group
    return None


def terms_key(options: dict, server_options: dict) -> str:
    return json.dumps([options, server_options], sort_keys=True)


def board_options(server_options: dict) -> dict:
    """The server options that go to the board, without the seek's own."""
    return {k: v for k, v in server_options.items() if k not in SEEK_ONLY.values()}


# -- pairing in a transaction ---------------------------------------------------------------


def _seekers(ctx, game) -> tuple[list[Seeker], dict]:
    """The open seeks that may pair now, oldest first, as Seekers; and their records."""
    seekers, records = [], {}
    for record in ctx.store.seeks.open(game.name, stamp(ctx.now)):
        problems, _ = limit_problems(ctx, game, [record.userid])
        if problems:
            continue
        window = None
        if record.rating_low is not None:
            window = (record.rating_low, record.rating_high)
        seekers.append(
            Seeker(
                record.userid,
                terms_key(record.options, record.server_options),
                current_rating(ctx.store, game.name, record.userid),
                window,
            )
        )
        records[record.userid] = record
    return seekers, records


def pair(ctx, game, userid: str | None = None) -> list:
    """Start every board the open seeks of the game make now (only those with `userid`'s
    seek, when given), robots answering where they may; returns the boards."""
    boards: list = []
    while True:
        seekers, records = _seekers(ctx, game)
        mine = next((s for s in seekers if s.userid == userid), None)
        if userid is not None and mine is None:
            return boards
        group = find_group(seekers, game.min_players, mine)
        if group is None:
            group = _with_robots(ctx, game, seekers, records, mine)
        if group is None:
            return boards
        boards.append(_start(ctx, game, group, records))


def _with_robots(ctx, game, seekers, records, mine):
    """The oldest seek that robots may answer now (docs/spec/server.md §11.2), with the
    robots nearest its seeker's rating, or None."""
    answerers = ctx.store.robots.seek_answerers(game.name)
    if not answerers:
        return None
    for seeker in [mine] if mine is not None else seekers:
        waited = ctx.now - parse_stamp(records[seeker.userid].created_at)
        robots = []
        for robot in answerers:
            if waited < timedelta(hours=robot.seek_after_hours):
                continue
            if limit_problems(ctx, game, [robot.userid])[0]:
                continue
            candidate = Seeker(
                robot.userid, seeker.terms, current_rating(ctx.store, game.name, robot.userid), None
            )
            if compatible(seeker, candidate):
                robots.append(candidate)
        robots.sort(key=lambda r: (abs(r.rating - seeker.rating), r.userid))
        if len(robots) >= game.min_players - 1:
            return [seeker] + robots[: game.min_players - 1]
    return None


def _start(ctx, game, group, records):
    """A board for the group, in random seat order, on the terms of its seeks."""
    terms = records[group[0].userid]
    seats = [s.userid for s in group]
    random.SystemRandom().shuffle(seats)
    return start_board(
        ctx,
        game,
        seats,
        terms.options,
        board_options(terms.server_options),
        events=[EVENT],
    )


def cleanup(ctx, game) -> list[str]:
    """Cleanup (docs/spec/server.md §9.2): the game's lapsed seeks end, told to their
    seekers; then the open seeks pair where they can now."""
    done = []
    for record in ctx.store.seeks.lapsed(game.name, stamp(ctx.now)):
        ctx.store.users.set_seeking(game.name, record.userid, 0)
        ctx.store.seeks.drop(game.name, record.userid)
        if record.seeking:
            text = (
                f"Your {record.seeking} open {game.display_name} seeks lapsed on "
                f"{show_time(record.lapses_at)}. To seek again, send\n"
                f'"{game.name} seek {record.userid} <password> <N>" with the options you want.'
            )
            ctx.mail_user(
                record.userid,
                f"{game.display_name} seek lapsed for {record.userid}",
                ctx.render("mail/notice.txt", text=text),
                "settings",
            )
        done.append(f"{game.display_name} seeks of {record.userid}: lapsed")
    if ctx.config.get("server.seek_pairing") == "on":
        for board in pair(ctx, game):
            done.append(f"{board.title_name}: paired by open seeks")
    return done


# -- what players are told --------------------------------------------------------------------


def terms_lines(ctx, game, record) -> list[str]:
    """A seek's terms in words, for the seeker's mails."""
    lines = []
    shown = options_line(game, record.options, game.min_players)
    lines.append(shown or "Options: the defaults")
    server = options_text(board_options(record.server_options), ctx.server.timeout_defaults())
    if server:
        lines.append(f"Server options: {server}")
    clock = ClockTerms.of_options(record.server_options)
    if clock:
        lines.append(f"Clock: {clock.describe()}")
    if record.rating_low is not None:
        lines.append(f"Opponents rated {record.rating_low} to {record.rating_high}")
    else:
        lines.append("Opponents of any rating")
    lines.append(f"Open until {show_time(record.lapses_at)}")
    return lines


def seek_rows(ctx, game) -> list[dict]:
    """The open seeks of a game, oldest first, as `game seeks` and the web view show them."""
    rows = []
    for record in ctx.store.seeks.open(game.name, stamp(ctx.now)):
        wanted = options_line(game, record.options, game.min_players).removeprefix("Options: ")
        server = options_text(board_options(record.server_options), ctx.server.timeout_defaults())
        window = "any"
        if record.rating_low is not None:
            window = f"{record.rating_low}-{record.rating_high}"
        rows.append(
            {
                "userid": record.userid,
                "rating": current_rating(ctx.store, game.name, record.userid),
                "count": record.seeking,
                "window": window,
                "until": record.lapses_at[:10],
                "terms": " ".join(w for w in (wanted, server) if w) or "defaults",
            }
        )
    return rows


def listing(ctx, game) -> list[str]:
    """The open seeks as the lines of the `seeks` mail."""
    rows = [
        (r["userid"], str(r["rating"]), str(r["count"]), r["window"], r["until"], r["terms"])
        for r in seek_rows(ctx, game)
    ]
    if not rows:
        return []
    header = ("Player", "Rating", "Seeks", "Ratings", "Until", "Terms")
    return text_table(header, rows, right=(1, 2))
