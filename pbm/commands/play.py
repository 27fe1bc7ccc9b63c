"""Creating boards and playing on them: challenge, move, pass, swap, resign (spec 3.4, 3.5)."""

import secrets
from datetime import timedelta

from ..boards import Board
from ..config import parse_stamp, stamp
from ..game import MoveError, OptionError
from ..grammar import command, is_valid_userid, parse_board, split_guard

VOTE_WORDS = ("propose", "undo", "accept", "reject")
DAY_SECONDS = 86400


# -- challenge ---------------------------------------------------------------------------


@command(
    "challenge",
    "game",
    "{game} challenge userid userid... [-option...] [--nagtime=D] [--forfeittime=D] "
    "[--totaltime=D]",
    min_abbrev=5,
    takes_options=True,
    min_args=1,
)
def challenge(ctx):
    """Starts a new board between the named users, in seat order."""
    game = ctx.game
    userids = [u.lower() for u in ctx.args]
    problems = []
    if len(userids) < game.min_players:
        problems.append(f"At least {game.min_players} players must play")
    if len(userids) > game.max_players:
        problems.append(f"At most {game.max_players} players can play")
    known = []
    for userid in dict.fromkeys(userids):
        user = ctx.store.users.get(userid) if is_valid_userid(userid) else None
        if user is None or user.status != "active":
            problems.append(f"Unknown userid: {userid}")
        else:
            known.append(userid)
    try:
        options = game.parse_options(ctx.parsed.params, len(userids))
    except OptionError as error:
        problems.append(str(error))
    refusing = []
    day_limit = ctx.config.number("limits.boards_per_user_per_day")
    since = stamp(ctx.now - timedelta(days=1))
    for userid in known:
        if ctx.store.boards.count_started_since(userid, since) >= day_limit:
            problems.append(f"{userid} has been given {day_limit} new boards today; try tomorrow")
    for userid in known:
        limit = ctx.store.users.challenge_limit(game.name, userid)
        if limit is None:
            continue
        active = ctx.store.boards.count_active(game.name, userid)
        if limit == 0:
            problems.append(f"{userid} is not accepting {game.display_name} challenges")
            if active == 0:
                refusing.append(userid)
        elif active >= limit:
            problems.append(
                f"{userid} has reached their limit of active {game.display_name} games ({limit})"
            )
    if problems:
        for userid in refusing:
            ctx.store.users.set_inactive_flag(game.name, userid, True)
        ctx.refuse("\n".join(problems), subject="Invalid challenge")
        return
    ctx.check_daily_limit("challenge", "challenges_per_day", "challenges")
    board = create_board(ctx, game, userids, options)
    for userid in set(userids):
        ctx.store.users.decrement_seeking(game.name, userid)
    intro = f"A new {game.display_name} board ({board.number}) has been started."
    first = board.on_move_userid()
    subject = f"New {board.title_name}" + (f" {first}" if first else "")
    subject += " **" if board.row.comment_text else ""
    ctx.announce(board, subject=subject, title=intro, spectator_to_sender=True, kind="new_board")


def create_board(ctx, game, userids, options) -> Board:
    defaults = ctx.server.timeout_defaults()
    server_options = ctx.parsed.server_options
    board_id = ctx.store.boards.create(
        game=game.name,
        number=ctx.store.boards.next_number(game.name),
        options=options,
        seed=secrets.randbits(63),
        nag_days=server_options.get("nag_days", defaults["nag_days"]),
        forfeit_days=server_options.get("forfeit_days", defaults["forfeit_days"]),
        total_days=server_options.get("total_days", 0),
        created_at=stamp(ctx.now),
        userids=userids,
        rated=game.is_rated(options),
    )
    for userid in ctx.store.watching.subscribe_all_users(game.name):
        if userid not in userids:
            ctx.store.watching.subscribe(board_id, userid)
    board = Board(ctx, ctx.store.boards.by_id(board_id))
    board.set_comment("Challenger", ctx.request.body)
    board.settle()
    return board


# -- move and its standalone forms ---------------------------------------------------------


@command(
    "move",
    "game",
    "{game} move board userid password move[#n]",
    aliases=("board", "mvoe"),
    min_args=4,
    secrets=(2,),
    auth=(1, 2),
)
def move(ctx):
    """Plays a move, or pass, swap, resign, propose, undo, accept or reject, on a board."""
    board = authenticated_board(ctx)
    text, guard = split_guard(move_text(ctx))
    act(ctx, board, text, guard, ctx.request.body)


def _standalone(word):
    def handler(ctx):
        board = authenticated_board(ctx)
        guard = None
        if len(ctx.args) == 4:
            if not ctx.args[3].startswith("#") or len(ctx.args[3]) < 2:
                ctx.syntax_error()
            guard = ctx.args[3][1:]
        act(ctx, board, word, guard, ctx.request.body)

    handler.__doc__ = {
        "pass": "Passes, where the game allows it (-- is the same).",
        "swap": "Takes over the first player's side under the pie rule.",
        "resign": "Resigns; out of turn it is queued; before your first move it declines.",
    }[word]
    return handler


for _word, _aliases in (("pass", ("--",)), ("swap", ()), ("resign", ())):
    command(
        _word,
        "game",
        f"{{game}} {_word} board userid password [#n]",
        aliases=_aliases,
        min_args=3,
        max_args=4,
        secrets=(2,),
        auth=(1, 2),
    )(_standalone(_word))


MAX_MOVE_CHARS = 64


def move_text(ctx) -> str:
    """The words after the password, joined: the games' notations ignore blanks inside a
    move (`rem E3`), and a mail client may break a long Subject."""
    text = "".join(ctx.args[3:])
    if len(text) > MAX_MOVE_CHARS:
        ctx.fail(f"A move is at most {MAX_MOVE_CHARS} characters long")
    return text


def authenticated_board(ctx, board_at=0) -> Board:
    """The board named at args[board_at], with the userid and password after it checked."""
    token = parse_board(ctx.args[board_at])
    if token is None:
        ctx.syntax_error()
    board = ctx.load_board(token[0])
    ctx.authenticate(ctx.args[board_at + 1], ctx.args[board_at + 2])
    return board


def playing_seats(ctx, board) -> list[int]:
    """Checks 2 and 3 of 3.5.1: the board runs and the user still plays on it."""
    if not board.active:
        ctx.fail("The game has ended", board)
    seats = board.position.seats_of(ctx.userid)
    if not seats:
        ctx.fail("You are NOT playing this game", board)
    playing = board.playing_seats_of(ctx.userid)
    if not playing:
        ctx.fail("You have resigned from this game", board)
    return playing


def act(ctx, board, text, guard, comment):
    """A move or reserved word on an authenticated board, in the order of 3.5.1."""
    from .votes import vote

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
            withdraw(ctx, board, seat)
        elif on_move in playing:
            board.resign(seat)
            board.events.append(f"{ctx.userid} has resigned.")
            after_ply(ctx, board, comment)
        else:
            toggle_pending_resignation(ctx, board, seat)
        return
    if on_move not in playing:
        ctx.fail("It is not your move", board)
    check_guard(ctx, board, text, guard)
    if out_of_total_time(ctx, board, on_move):
        return
    if word == "swap":
        check_swap(ctx, board)
        board.play(on_move, "swap", "swap")
        board.events.append(f"{ctx.userid} has swapped sides.")
    else:
        try:
            board.play_text(on_move, text)
        except MoveError as error:
            ctx.fail(str(error), board)
    after_ply(ctx, board, comment)


def check_guard(ctx, board, text, guard):
    error = board.guard_error(text, guard)
    if error:
        ctx.fail(error, board)


def check_swap(ctx, board):
    game = board.game
    if game.swap_after is None or board.position.seats != 2:
        ctx.fail(f"{game.display_name} does not support swapping", board)
    plies = board.position.plies
    if plies and plies[-1].kind == "swap":
        ctx.fail("The board has just been swapped. Please make a move", board)
    if len(plies) != game.swap_after:
        ctx.fail(f"You can only swap after move number {game.swap_after}", board)


def out_of_total_time(ctx, board, seat) -> bool:
    """With --totaltime, a seat past its allowance forfeits instead of moving."""
    if not total_time_exceeded(ctx, board, seat):
        return False
    userid = board.position.holders[seat]
    event = f"{userid} forfeits: exceeded the total time limit of {board.row.total_days} days."
    leave(ctx, board, seat, "forfeit", event)
    ctx.refuse("You used too much time", board=board)
    return True


def total_time_exceeded(ctx, board, seat) -> bool:
    total_days = board.row.total_days
    if not total_days:
        return False
    running = (ctx.now - parse_stamp(board.row.last_move_at)).total_seconds()
    return board.position.time_used[seat] + running >= total_days * DAY_SECONDS


def after_ply(ctx, board, comment):
    board.set_comment(ctx.userid, comment)
    board.settle()
    ctx.announce(board)


def toggle_pending_resignation(ctx, board, seat):
    """Out of turn, resign is queued for the user's next turn; resigning again cancels it."""
    pending = ctx.store.votes.queued(board.id, seat)
    now_pending = not (pending is not None and pending.resign)
    ctx.store.votes.set_pending_resignation(board.id, seat, now_pending)
    if now_pending:
        text = (
            "Your resignation is queued and takes effect on your next turn.\n"
            "Resign again to cancel it."
        )
    else:
        text = "Your queued resignation has been cancelled."
    ctx.reply(f"{board.title_name} Resigned", ctx.render("mail/notice.txt", text=text))


# -- leaving a board -----------------------------------------------------------------------


def leave(ctx, board, seat, kind, event, auto=False):
    """A resignation or forfeit: a withdrawal in the first round, else a ply."""
    if board.is_withdrawal(seat):
        withdraw(ctx, board, seat)
        return
    board.resign(seat, kind, auto=auto)
    board.events.append(event)
    board.settle()
    ctx.announce(board)


def forfeit_for_departure(ctx, row, userid):
    """A deleted account forfeits every seat it still plays on the board, one at a time:
    a withdrawal renumbers the seats and sets the plies aside, so look again each time."""
    while True:
        row = ctx.store.boards.by_id(row.id)
        if row.status != "active":
            return
        board = Board(ctx, row)
        seats = board.playing_seats_of(userid)
        if not seats:
            return
        leave(ctx, board, seats[0], "forfeit", f"{userid} has left the server and forfeits.")


def withdraw(ctx, board, seat):
    """Declining to play (3.5.3): the seat goes, the log is set aside, nothing is rated."""
    game = board.game
    userid = board.position.holders[seat]
    at = stamp(ctx.now)
    audience = board.audience()
    remaining = [u for s, u in enumerate(board.seat_userids) if s != seat]
    ctx.store.boards.undo_all_plies(board.id, at)
    ctx.store.votes.clear_queues(board.id)
    ctx.store.limits.audit(at, "withdrawal", game=game.name, board=board.number, userid=userid)
    if ctx.store.boards.count_active(game.name, userid, except_board=board.id) == 0:
        ctx.store.users.set_inactive_flag(game.name, userid, True)
    if len(remaining) < game.min_players:
        ctx.store.boards.set_status(board.id, "removed")
        event = (
            f"{userid} has declined to play. Too few players are left, so the board has been "
            "removed."
        )
        body = ctx.render("mail/board_removed.txt", game=game, number=board.number, event=event)
        subject = f"{game.display_name} board {board.number} has been removed"
        for recipient in dict.fromkeys(audience + [userid]):
            ctx.mail_user(recipient, subject, body, "board")
        return
    ctx.store.boards.set_seat_userids(board.id, remaining)
    board.reload()
    board.events.append(f"{userid} has decided not to play. The game has been re-started.")
    board.settle()
    ctx.announce(board)
