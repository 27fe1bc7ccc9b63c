"""Per-user settings: challenge acceptance and limits (docs/spec/server.md §3.9),
vacations (docs/spec/server.md §9.4), and the subjects of board mails
(docs/spec/server.md §5.3) and their HTML part (docs/spec/server.md §11.5)."""

import re

from ..clock import stamp
from ..grammar import command
from ..vacations import allowance_seconds, vacation_body, vacation_state

LIMIT_WORDS = {"accept": None, "all": None, "inf": None, "reject": 0}


def _settings_mail(ctx, subject, text):
    ctx.mail_user(ctx.userid, subject, ctx.render("mail/notice.txt", text=text), "settings")


def _limit_text(limit) -> str:
    if limit is None:
        return "You accept any number of challenges."
    if limit == 0:
        return "You reject all challenges."
    return f"You accept challenges while you play fewer than {limit} active boards."


def set_acceptance(ctx, accept: bool):
    """game accept U P / game reject U P: no limit, or no challenges at all."""
    game = ctx.game
    limit = None if accept else 0
    ctx.store.users.set_challenge_limit(game.name, ctx.userid, limit)
    word = "accepted" if accept else "rejected"
    _settings_mail(ctx, f"{game.display_name} challenges now {word}", _limit_text(limit))


@command(
    "limit",
    "game",
    "{game} limit userid password [N|accept|all|inf|reject]",
    min_args=2,
    max_args=3,
    secrets=(1,),
    auth=(0, 1),
)
def limit(ctx):
    """Sets how many active boards of the game you accept (0-999), or shows the setting."""
    game = ctx.game
    if len(ctx.args) == 2:
        current = ctx.store.users.challenge_limit(game.name, ctx.userid)
        text = _limit_text(current) + f'\n\nSyntax is "{ctx.spec.syntax_for(game)}"'
        _settings_mail(ctx, f"{game.display_name} limit status", text)
        return
    value = ctx.args[2].lower()
    if value in LIMIT_WORDS:
        new = LIMIT_WORDS[value]
    elif re.fullmatch(r"\d{1,3}", value):
        new = int(value)
    else:
        ctx.abort(
            f'Limit must be a number from 0 to 999, or accept, all, inf or reject, not "{value}"'
        )
    ctx.store.users.set_challenge_limit(game.name, ctx.userid, new)
    word = "accepted" if new is None else "rejected" if new == 0 else "limited"
    _settings_mail(ctx, f"{game.display_name} challenges now {word}", _limit_text(new))


def _vacation(ctx):
    """Starts or ends a vacation (no nags, forfeits or auto-accepts), or shows its status."""
    userid = ctx.userid
    state = vacation_state(ctx.store, userid, ctx.now)
    allowance = allowance_seconds(ctx.config)
    year = ctx.now.year
    word = ctx.args[2].lower() if len(ctx.args) == 3 else None
    if word not in (None, "on", "off"):
        ctx.syntax_error()
    if word == "on" and not state.on:
        if state.used_seconds >= allowance:
            ctx.abort(f"You have no vacation days left in {year}")
        ctx.store.users.start_vacation(userid, stamp(ctx.now))
        state = vacation_state(ctx.store, userid, ctx.now)
    elif word == "off" and state.on:
        ctx.store.users.end_vacation(userid, stamp(ctx.now), "user")
        state = vacation_state(ctx.store, userid, ctx.now)
    subject = {
        None: f"Vacation status for {userid}",
        "on": f"Vacation on for {userid}",
        "off": f"Vacation off for {userid}",
    }[word]
    ctx.mail_user(userid, subject, vacation_body(ctx, userid, state, allowance), "settings")


for _scope, _syntax in (
    ("global", "vacation userid password [on|off]"),
    ("game", "{game} vacation userid password [on|off]"),
):
    command(
        "vacation",
        _scope,
        _syntax,
        min_args=2,
        max_args=3,
        secrets=(1,),
        auth=(0, 1),
    )(_vacation)


SUBJECT_STYLES = {
    "fixed": "Your board mails keep one subject for the whole game, such as\n"
    '"KnightPanic Board 101: alice vs bob", so that they thread together.',
    "pbmserv": "Your board mails have pbmserv's subjects: they name the player on move and\n"
    'end in " **" when the mail carries a comment.',
}


@command(
    "subjects",
    "global",
    "subjects userid password [fixed|pbmserv]",
    min_args=2,
    max_args=3,
    secrets=(1,),
    auth=(0, 1),
)
def subjects(ctx):
    """Chooses the subjects of your board mails: fixed (the default) or pbmserv's."""
    if len(ctx.args) == 3:
        style = ctx.args[2].lower()
        if style not in SUBJECT_STYLES:
            ctx.abort(f'Subjects are fixed or pbmserv, not "{ctx.args[2]}"')
        ctx.store.users.set_pbmserv_subjects(ctx.userid, style == "pbmserv")
    style = "pbmserv" if ctx.store.users.pbmserv_subjects(ctx.userid) else "fixed"
    _settings_mail(ctx, f"Subjects for {ctx.userid}: {style}", SUBJECT_STYLES[style])


@command(
    "html",
    "global",
    "html userid password [on|off]",
    min_args=2,
    max_args=3,
    secrets=(1,),
    auth=(0, 1),
)
def html(ctx):
    """Board mails with a picture (an HTML part) on or off, or shows the setting."""
    if len(ctx.args) == 3:
        word = ctx.args[2].lower()
        if word not in ("on", "off"):
            ctx.syntax_error()
        ctx.store.users.set_html_mail(ctx.userid, word == "on")
    on = ctx.store.users.html_mail(ctx.userid)
    text = (
        "Your board mails carry an HTML part with a picture of the board, besides\n"
        "the plain text, which stays as it is."
        if on
        else "Your board mails are plain text only."
    )
    _settings_mail(ctx, f"HTML {'on' if on else 'off'} for {ctx.userid}", text)


@command(
    "digest",
    "global",
    "digest userid password [on|off]",
    min_args=2,
    max_args=3,
    secrets=(1,),
    auth=(0, 1),
)
def digest(ctx):
    """Turns the daily digest of the boards where you are on move on or off, or shows it."""
    if len(ctx.args) == 3:
        word = ctx.args[2].lower()
        if word not in ("on", "off"):
            ctx.syntax_error()
        ctx.store.users.set_digest(ctx.userid, word == "on")
    on = ctx.store.users.digest(ctx.userid)
    text = (
        "Once a day you get a digest of the boards where you are on move, each with\n"
        "the address a reply with your move goes to."
        if on
        else "You get no daily digest."
    )
    _settings_mail(ctx, f"Digest {'on' if on else 'off'} for {ctx.userid}", text)
