"""The invitation commands (docs/spec/server.md §11.1, §3.9): invite, decline, and the
choice to take challenges only as invitations; `accept` and `reject` with the number of an
invitation answer it too (votes.py). The rules are in pbm/invitations.py."""

from .. import invitations
from ..grammar import command, parse_board
from ..replies import InvitationGrant
from ..starting import seating_problems
from .boardcommand import board_command


@command(
    "invite",
    "game",
    "{game} invite userid password userid... [-option...] [--nagtime=D] [--forfeittime=D] "
    "[--totaltime=D] [--time=Dd+Hh] [--cap=Dd]",
    takes_options=True,
    min_args=3,
    secrets=(1,),
    auth=(0, 1),
)
def invite(ctx):
    """Invites players to a new board; it starts when every one of them has accepted."""
    game = ctx.game
    inviter = ctx.userid
    named = [u.lower() for u in ctx.args[2:]]
    userids = named if inviter in named else [inviter] + named
    problems, options, _ = seating_problems(ctx, game, userids, ctx.parsed.params)
    problems += invitations.robot_refusals(ctx, game, userids)
    if problems:
        ctx.answer_error("\n".join(problems), subject="Invalid invitation")
        return
    ctx.check_daily_limit("challenge", "challenges_per_day", "challenges")
    invitation = invitations.invite(
        ctx,
        game,
        userids,
        options,
        ctx.parsed.server_options,
        inviter=inviter,
        comment=(inviter, ctx.request.body),
        consenting={inviter},
    )
    invitations.reply_sent(ctx, invitation)


def load_invitation(ctx) -> bool:
    """before_auth of an answer with a board number: the invitation that reserved it, when no
    board has it yet, or always for the reply to an invitation mail, whose token never
    stands for a board (docs/spec/server.md §11.3). True when one was loaded."""
    token = parse_board(ctx.args[0])
    if token is None:
        ctx.syntax_error()
    number = token[0]
    if not isinstance(ctx.grant, InvitationGrant) and ctx.store.boards.get(ctx.game.name, number):
        return False
    ctx.invitation = invitations.load(ctx, ctx.game, number)
    return ctx.invitation is not None


def _load_declined(ctx):
    if not load_invitation(ctx):
        game, number = ctx.game, parse_board(ctx.args[0])[0]
        if ctx.store.boards.get(game.name, number) is not None:
            ctx.abort(
                f"{game.display_name} Board {number} has started: decline answers invitations; "
                "to leave a game, resign"
            )
        ctx.abort(f"{game.display_name} invitation {number} not found")


@board_command("decline", before_auth=_load_declined)
def decline(ctx):
    """Declines an invitation; the inviter withdraws it so."""
    answer(ctx, accept=False)


def answer(ctx, accept: bool):
    """The authenticated user's answer to the invitation loaded before the password."""
    invitations.answer(ctx, ctx.invitation, ctx.userid, accept, ctx.request.body)


@command(
    "invitations",
    "game",
    "{game} invitations userid password [on|off]",
    min_args=2,
    max_args=3,
    secrets=(1,),
    auth=(0, 1),
)
def invitations_setting(ctx):
    """On: challenges naming you wait for your acceptance. Off (the default): they start."""
    game = ctx.game
    if len(ctx.args) == 3:
        word = ctx.args[2].lower()
        if word not in ("on", "off"):
            ctx.syntax_error()
        ctx.store.invitations.set_wants_invitations(game.name, ctx.userid, word == "on")
    on = ctx.store.invitations.wants_invitations(game.name, ctx.userid)
    if on:
        text = (
            f"A {game.display_name} challenge that names you does not start the board: it\n"
            "becomes an invitation, and the board starts when you accept it."
        )
    else:
        text = (
            f"A {game.display_name} challenge that names you starts the board at once\n"
            "(pbmserv's way); invitations still wait for your answer."
        )
    ctx.mail_user(
        ctx.userid,
        f"{game.display_name} invitations {'on' if on else 'off'} for {ctx.userid}",
        ctx.render("mail/notice.txt", text=text),
        "settings",
    )
