"""The tournament commands (docs/spec/server.md §11.9): create, join, leave, list and show.
What they do is pbm/tournamentplay.py's; what they show, pbm/tournamentviews.py's."""

from .. import tournamentplay
from ..grammar import command, find_game, with_suggestion
from ..summary import text_table
from ..tournamentviews import (
    STATUS_WORDS,
    division_sections,
    division_views,
    listing_rows,
    terms_lines,
    web_url,
)

CREATE_SYNTAX = (
    "tournament create name game [userid password] [-option...] [--largest=N] "
    "[--start=YYYY-MM-DD[THH:MM]] [--players=N] [--time=Dd+Hh] [--cap=Dd] [--nagtime=D] "
    "[--forfeittime=D] [--totaltime=D]"
)


def _player_pair(args) -> tuple[int, int] | None:
    return (2, 3) if len(args) == 4 else None


@command(
    "tournament create",
    "global",
    CREATE_SYNTAX,
    takes_options=True,
    own_options=("largest", "start", "players"),
    min_args=2,
    max_args=4,
    secrets=lambda args: (3,) if len(args) == 4 else (),
    auth=_player_pair,
)
def create(ctx):
    """Creates a round-robin tournament: the operator, or a player where the server allows."""
    if len(ctx.args) == 3:
        ctx.syntax_error()
    creator = ctx.userid if len(ctx.args) == 4 else None
    if creator is None and not ctx.request.operator:
        ctx.syntax_error()
    if creator is not None and ctx.config.get("server.player_tournaments") != "on":
        ctx.abort(
            "On this server tournaments are created by the operator; "
            'send "tournament list" for those open for entries'
        )
    games = ctx.server.games
    game = find_game(ctx.args[1], games)
    if game is None:
        ctx.abort(with_suggestion(f'Unknown game "{ctx.args[1]}"', ctx.args[1], list(games)))
    tournamentplay.create(
        ctx, ctx.args[0], game, ctx.parsed.params, ctx.parsed.server_options, creator
    )


@command(
    "tournament join",
    "global",
    "tournament join name userid password",
    min_args=2,
    max_args=3,
    secrets=lambda args: (2,) if len(args) == 3 else (),
    auth=lambda args: (1, 2) if len(args) == 3 else None,
)
def join(ctx):
    """Joins a tournament before its start (the operator enters robots: name robot)."""
    record = tournamentplay.load(ctx, ctx.args[0])
    if len(ctx.args) == 3:
        tournamentplay.join(ctx, record, ctx.userid)
        return
    if not ctx.request.operator:
        ctx.syntax_error()
    robot = ctx.store.robots.get(ctx.args[1].lower())
    if robot is None:
        ctx.abort(f'"{ctx.args[1]}" is not a robot: players join themselves, with their password')
    if robot.game != record.game:
        ctx.abort(f"{robot.userid} plays {robot.game}, not {record.game}")
    tournamentplay.join(ctx, record, robot.userid)


@command(
    "tournament leave",
    "global",
    "tournament leave name userid password",
    min_args=3,
    max_args=3,
    secrets=(2,),
    auth=(1, 2),
)
def leave(ctx):
    """Leaves a tournament; after its start, the games not yet played are lost."""
    tournamentplay.leave(ctx, tournamentplay.load(ctx, ctx.args[0]), ctx.userid)


@command("tournament list", "global", "tournament list", max_args=0)
def list_(ctx):
    """Lists the tournaments open for entries and those running."""
    records = ctx.store.tournaments.listed(("open", "running"))
    rows = listing_rows(ctx.store, records)
    header = ["Name", "Game", "Status", "Players", "Divisions", "Start (UTC)"]
    lines = text_table(header, rows, right={3, 4}) if rows else []
    headline = (
        "The tournaments open for entries and those running:"
        if rows
        else "No tournament is open for entries or running."
    )
    body = ctx.render(
        "mail/tournament.txt",
        headline=headline,
        sections=[{"title": "", "lines": lines}] if lines else [],
        web_url="",
    )
    ctx.reply("Tournaments", body, kind="list")


@command("tournament show", "global", "tournament show name", min_args=1, max_args=1)
def show(ctx):
    """Mails a tournament: its terms, players, divisions, standings and boards."""
    record = tournamentplay.load(ctx, ctx.args[0])
    game = ctx.server.game_for_board(record.game)
    sections = [{"title": "Terms", "lines": terms_lines(ctx, game, record)}]
    if record.status in ("open", "called_off"):
        entrants = ctx.store.tournaments.entrants(record.id)
        rows = [[e.userid, e.joined_at[:10]] for e in entrants]
        lines = text_table(["Player", "Joined"], rows) if rows else ["Nobody yet."]
        sections.append({"title": f"Players ({len(entrants)})", "lines": lines})
    for view in division_views(ctx.store, record):
        sections += division_sections(view, game, schedule=True)
    body = ctx.render(
        "mail/tournament.txt",
        headline=f"Tournament {record.name}: {STATUS_WORDS[record.status]}.",
        sections=sections,
        web_url=web_url(ctx.config, record),
    )
    ctx.reply(f"Tournament {record.name}", body, kind="list")
