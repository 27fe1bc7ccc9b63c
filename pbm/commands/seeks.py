"""Seeking opponents (docs/spec/server.md §3.9, §11.2): `seek` holds a number of open seeks
with their terms, which pair themselves; `seeks` lists them. The rules are in
pbm/seeking.py."""

import re
from datetime import timedelta

from ..clock import stamp
from ..game import OptionError
from ..grammar import command
from ..seeking import board_options, listing, pair, terms_lines
from ..serveroptions import DEFAULT_SEEK_DAYS


def _mail(ctx, subject, text):
    ctx.mail_user(ctx.userid, subject, ctx.render("mail/notice.txt", text=text), "settings")


def pairing_on(ctx) -> bool:
    return ctx.config.get("server.seek_pairing") == "on"


@command(
    "seek",
    "game",
    "{game} seek userid password [N] [-option...] [--rating=LOW-HIGH] [--days=D] "
    "[--nagtime=D] [--totaltime=D] [--time=Dd+Hh] [--cap=Dd]",
    takes_options=True,
    own_options=("rating", "days"),
    min_args=2,
    max_args=3,
    secrets=(1,),
    auth=(0, 1),
)
def seek(ctx):
    """Holds N open seeks (0-99, 0 withdraws) that pair you with other seekers, or shows them."""
    game = ctx.game
    given_options = bool(ctx.parsed.params or ctx.parsed.server_options)
    if len(ctx.args) == 2:
        if given_options:
            ctx.abort(f'Give the number of boards you seek with the options: "{_syntax(ctx)}"')
        _status(ctx)
        return
    if not re.fullmatch(r"\d{1,2}", ctx.args[2]):
        ctx.abort(f'Seek a number of challenges from 0 to 99, not "{ctx.args[2]}"')
    count = int(ctx.args[2])
    if not pairing_on(ctx):
        if given_options:
            ctx.abort(
                "Open seeks do not pair themselves on this server, so seek takes no options: "
                "the standings only show how many boards you seek"
            )
        ctx.store.users.set_seeking(game.name, ctx.userid, count)
        text = f"The {game.display_name} standings show that you seek {count} challenges."
        _mail(ctx, f"Now seeking {count} {game.display_name} challenges", text)
        return
    if count == 0:
        ctx.store.users.set_seeking(game.name, ctx.userid, 0)
        ctx.store.seeks.drop(game.name, ctx.userid)
        _mail(ctx, f"{game.display_name} seeks withdrawn", "You seek no boards now.")
        return
    if ctx.store.users.challenge_limit(game.name, ctx.userid) == 0:
        ctx.abort(
            f"You reject {game.display_name} challenges: send "
            f'"{game.name} accept {ctx.userid} <password>" first'
        )
    try:
        options = game.parse_options(ctx.parsed.params, game.min_players)
    except OptionError as error:
        ctx.abort(str(error))
    server_options = ctx.parsed.server_options
    window = server_options.get("rating") or (None, None)
    days = server_options.get("seek_days", DEFAULT_SEEK_DAYS)
    ctx.store.users.set_seeking(game.name, ctx.userid, count)
    ctx.store.seeks.put(
        game=game.name,
        userid=ctx.userid,
        options=options,
        server_options=board_options(server_options),
        rating_low=window[0],
        rating_high=window[1],
        created_at=stamp(ctx.now),
        lapses_at=stamp(ctx.now + timedelta(days=days)),
    )
    boards = pair(ctx, game, ctx.userid)
    record = ctx.store.seeks.get(game.name, ctx.userid)
    left = record.seeking if record else 0
    boards_word = "board" if count == 1 else "boards"
    lines = [f"You seek {count} {game.display_name} {boards_word} on these terms:", ""]
    lines += ["  " + line for line in terms_lines(ctx, game, record)] if record else []
    if boards:
        started = ", ".join(f"{b.number} ({' vs '.join(b.position.holders)})" for b in boards)
        lines += ["", f"Started at once: {started}."]
    lines += ["", f"You now seek {left} more; they pair as other players seek."]
    lines.append(f'"{game.name} seeks" lists every open seek; "{game.name} seek')
    lines.append(f'{ctx.userid} <password> 0" withdraws yours.')
    _mail(ctx, f"Now seeking {left} {game.display_name} challenges", "\n".join(lines))


def _syntax(ctx) -> str:
    return ctx.spec.syntax_for(ctx.game)


def _status(ctx):
    game = ctx.game
    settings = ctx.store.users.challenge_settings(game.name, ctx.userid)
    count = settings.seeking if settings else 0
    lines = [f"You are seeking {count} {game.display_name} challenges."]
    record = ctx.store.seeks.get(game.name, ctx.userid)
    if count and record is not None and pairing_on(ctx):
        lines += ["", "Your seeks pair themselves on these terms:", ""]
        lines += ["  " + line for line in terms_lines(ctx, game, record)]
    _mail(ctx, f"{game.display_name} seek status", "\n".join(lines))


@command("seeks", "game", "{game} seeks", max_args=0)
def seeks(ctx):
    """Lists the open seeks of the game: who seeks how many boards, on what terms."""
    game = ctx.game
    lines = listing(ctx, game)
    body = ctx.render(
        "mail/seek_list.txt",
        title=f"Open {game.display_name} seeks",
        lines=lines,
        game=game,
    )
    ctx.reply(f"Open {game.display_name} seeks", body, kind="list")
