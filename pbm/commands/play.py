"""Creating boards and playing on them: challenge, move, pass, swap, resign
(docs/spec/server.md §3.4, §3.5), and the vote words on a board (docs/spec/server.md §3.6)."""

from ..boards import VOTE_NAMES
from ..clock import stamp
from ..game import MoveError
from ..grammar import command, is_valid_userid, password_of, split_guard
from ..security import mask_secrets
from ..starting import seating_problems, start_board
from ..summary import example_move
from .boardcommand import board_command

VOTE_WORDS = ("propose", "undo", "accept", "reject")


# -- challenge ---------------------------------------------------------------------------


@command(
    "challenge",
    "game",
    "{game} challenge userid userid... [-option...] [--nagtime=D] [--forfeittime=D] "
    "[--totaltime=D] [--time=Dd+Hh] [--cap=Dd]",
    min_abbrev=5,
    takes_options=True,
    min_args=1,
)
def challenge(ctx):
    """Starts a new board between the named users, in seat order."""
    game = ctx.game
    userids = [u.lower() for u in ctx.args]
    if not ctx.request.operator:
        refusal = challenger_refusal(ctx, userids)
        if refusal is not None:
            ctx.answer_error(refusal, subject="Invalid challenge")
            return
    problems, options, refusing = seating_problems(ctx, game, userids, ctx.parsed.params)
    if problems:
        for userid in refusing:
            ctx.store.users.set_inactive_flag(game.name, userid, True)
        ctx.answer_error("\n".join(problems), subject="Invalid challenge")
        return
    ctx.check_daily_limit("challenge", "challenges_per_day", "challenges")
    wanting = {u for u in userids if ctx.store.invitations.wants_invitations(game.name, u)}
    if wanting:
        # docs/spec/server.md §3.4: they take challenges only as invitations. Deferred: a
        # move mail loads this module, and only such a challenge needs invitations.
        from ..invitations import from_challenge

        from_challenge(ctx, game, userids, options, ctx.parsed.server_options, wanting)
        return
    start_board(
        ctx,
        game,
        userids,
        options,
        ctx.parsed.server_options,
        comments=[("Challenger", ctx.request.body)],
        tell_sender=True,
    )


def challenger_refusal(ctx, userids) -> str | None:
    """Only players seat players (docs/spec/server.md §3.4): a challenge by mail comes from
    an address registered to one of the accounts it seats and confirmed for it (the
    operator's command line seats anyone). Why this one may not, or None."""
    sender = ctx.sender_key
    known = [
        u for u in dict.fromkeys(userids) if is_valid_userid(u) and ctx.store.users.is_active(u)
    ]
    registered = [u for u in known if ctx.sender_is_among(ctx.store.users.addresses(u))]
    if any(ctx.store.limits.address_proven(userid, sender) for userid in registered):
        return None
    if registered:
        userid = registered[0]
        return (
            f"Your address {sender} is not yet confirmed for {userid}: send one command "
            f'with {userid}\'s password from it (for example "html {userid} <password>"), '
            "then send the challenge again."
        )
    players = ", ".join(known) or "the players"
    return (
        "Only a player of the new board can challenge: send the challenge from the address "
        f"of one of {players} (an address registered to the account and used with its "
        "password), or ask one of them to send it."
    )


# -- move and its standalone forms ---------------------------------------------------------


@board_command("move", "move[#n]", aliases=("board", "mvoe"))
def move(ctx):
    """Plays a move, or pass, swap, resign, propose, undo, accept or reject, on a board."""
    text, guard = split_guard(move_text(ctx))
    act(ctx, ctx.board, text, guard, ctx.request.body)


def _standalone(word):
    def handler(ctx):
        guard = None
        if len(ctx.args) == 4:
            if not ctx.args[3].startswith("#") or len(ctx.args[3]) < 2:
                ctx.syntax_error()
            guard = ctx.args[3][1:]
        act(ctx, ctx.board, word, guard, ctx.request.body)

    handler.__doc__ = {
        "pass": "Passes, where the game allows it (-- is the same).",
        "swap": "Takes over the first player's side under the pie rule.",
        "resign": "Resigns; out of turn it is queued (queue cancel takes it back); before your "
        "first move it declines.",
    }[word]
    return handler


for _word, _aliases in (("pass", ("--",)), ("swap", ()), ("resign", ())):
    board_command(_word, "[#n]", aliases=_aliases)(_standalone(_word))


MAX_MOVE_CHARS = 64


def move_text(ctx) -> str:
    """The words after the password, joined: the games' notations ignore blanks inside a
    move (`rem E3`), and a mail client may break a long Subject."""
    text = "".join(ctx.args[3:])
    if len(text) > MAX_MOVE_CHARS:
        refuse_move(ctx, ctx.board, f"A move is at most {MAX_MOVE_CHARS} characters long")
    return text


def refuse_move(ctx, board, message):
    """Refuse a move. One read from a reply's first line (docs/spec/server.md §11.3) is
    quoted as the player wrote it, blanks and all (a password in it masked), with where
    the move goes: the player may have put something else above it."""
    if ctx.request.token is None:
        ctx.abort(message, board)
    line = ctx.request.text
    credentials = password_of(line)
    if credentials is not None:
        line = mask_secrets(line, [credentials[1]])
    squashed = '"' + "".join(ctx.request.text.split()) + '"'
    if squashed in message:
        message = message.replace(squashed, f'"{line}"', 1)
    else:
        message += f'\nThe first line of your reply reads: "{line}"'
    position = board.position
    seat = position.to_move()
    example = example_move(board.game, position, seat) if seat is not None else None
    message += (
        "\n\nThe first line of your reply is read as your move: write the move alone on "
        "that line"
        + (f", e.g. `{example}`" if example else "")
        + ". A greeting above it is fine, and what you write below it goes to the other "
        "players as a comment."
    )
    ctx.abort(message, board)


def playing_seats(ctx, board) -> list[int]:
    """Checks 2 and 3 of docs/spec/server.md §3.5.1: the board runs and the user still plays on
    it."""
    if not board.active:
        ctx.abort("The game has ended", board)
    seats = board.position.seats_of(ctx.userid)
    if not seats:
        ctx.abort("You are NOT playing this game", board)
    playing = board.playing_seats_of(ctx.userid)
    if not playing:
        ctx.abort("You have resigned from this game", board)
    return playing


def act(ctx, board, text, guard, comment):
    """A move or reserved word on an authenticated board, in the order of
    docs/spec/server.md §3.5.1."""
    playing = playing_seats(ctx, board)
    word = text.lower()
    if word in VOTE_WORDS:
        vote(ctx, board, word, playing)
        return
    on_move = board.position.to_move()
    if word == "resign":
        check_guard(ctx, board, text, guard)
        seat = on_move if on_move in playing else playing[0]
        if board.is_withdrawal(seat):
            board.withdraw(seat)
            ctx.announce(board)
        elif on_move in playing:
            board.resign(seat)
            board.events.append(f"{ctx.userid} has resigned.")
            after_ply(ctx, board, comment)
        else:
            queue_resignation(ctx, board, seat)
        return
    if on_move not in playing:
        ctx.abort("It is not your move", board)
    check_guard(ctx, board, text, guard)
    if board.forfeit_if_out_of_time(on_move):
        ctx.announce(board)
        ctx.answer_error("You used too much time", board=board)
        return
    if word == "swap":
        check_swap(ctx, board)
        board.play(on_move, "swap", "swap")
        board.events.append(f"{ctx.userid} has swapped sides.")
    else:
        try:
            board.play_text(on_move, text)
        except MoveError as error:
            refuse_move(ctx, board, str(error))
    after_ply(ctx, board, comment)


def check_guard(ctx, board, text, guard):
    error = board.guard_error(text, guard)
    if error:
        ctx.abort(error, board)


def check_swap(ctx, board):
    game = board.game
    if game.swap_after is None or board.position.seats != 2:
        ctx.abort(f"{game.display_name} does not support swapping", board)
    plies = board.position.plies
    if plies and plies[-1].kind == "swap":
        ctx.abort("The board has just been swapped. Please make a move", board)
    if len(plies) != game.swap_after:
        ctx.abort(f"You can only swap after move number {game.swap_after}", board)


def after_ply(ctx, board, comment):
    board.set_comment(ctx.userid, comment)
    board.settle()
    ctx.announce(board)


def queue_resignation(ctx, board, seat):
    """Out of turn a resignation waits for the user's turn. Sending it again changes
    nothing (a mail delivered twice must not undo it); `queue … cancel` takes it back."""
    already = board.queue_resignation(seat)
    cancel = f"{board.game.name} queue {board.number} {ctx.userid} <password> cancel"
    text = (
        "Your resignation was already queued" if already else "Your resignation is queued"
    ) + f'; it takes effect on your next turn.\nTo take it back, send "{cancel}".'
    ctx.reply(f"{board.title_name} Resignation queued", ctx.render("mail/notice.txt", text=text))
    if not already:
        # The others would otherwise learn of it only once their own move had been made.
        board.events.append(
            f"{ctx.userid} has resigned; the resignation takes effect on {ctx.userid}'s next turn."
        )
        ctx.announce(board, others_only=True)


# -- votes (docs/spec/server.md §3.6) ---------------------------------------------------


ALREADY = {
    "draw": "A draw has already been proposed. Please accept or reject it.",
    "undo": "An undo has already been requested. Please accept or reject it.",
}


def vote(ctx, board, word, playing):
    game = board.game
    pending = board.vote()
    if word in ("propose", "undo"):
        if pending is not None:
            ctx.abort(ALREADY[pending.kind], board)
        kind = "draw" if word == "propose" else "undo"
        if kind == "draw" and not game.can_draw(board.position.state):
            ctx.abort(f"{game.display_name} does not support proposed Draws", board)
        if kind == "undo":
            if not game.can_undo(board.position.state):
                ctx.abort(f"{game.display_name} does not support undoing moves", board)
            if board.last_decided_ply() is None:
                ctx.abort("There is no move to undo", board)
        accepted = set(board.position.seats_of(ctx.userid)) | board.departed_seats()
        ctx.store.votes.start(board.id, kind, ctx.userid, stamp(ctx.now), accepted)
        pending = board.vote()
    elif pending is None:
        ctx.abort("Nothing has been proposed. Please move or propose a draw or undo.", board)
    elif word == "reject":
        ctx.store.votes.end(board.id)
        board.events.append(f"{ctx.userid} has rejected the {VOTE_NAMES[pending.kind]}.")
        _finish_vote_command(ctx, board)
        return
    else:
        mine = set(board.position.seats_of(ctx.userid))
        if mine <= set(pending.accepted):
            ctx.abort("You have already accepted", board)
        accepted = set(pending.accepted) | mine | board.departed_seats()
        ctx.store.votes.set_accepted(board.id, accepted)
        board.events.append(f"{ctx.userid} has accepted the {VOTE_NAMES[pending.kind]}.")
        pending = board.vote()
    if set(pending.accepted) >= set(range(board.position.seats)):
        board.execute_vote(pending)
    else:
        board.events.append(board.pending_line(pending))
    _finish_vote_command(ctx, board)


def _finish_vote_command(ctx, board):
    board.set_comment(ctx.userid, ctx.request.body)
    ctx.announce(board)
