"""Moves made ahead of time: queue (played when the turn comes), submit and confirm
(docs/spec/server.md §3.7)."""

from ..game import MoveError
from ..grammar import DIGITS_RE, split_guard
from ..position import PLAYING, canonical_ply
from .boardcommand import board_command
from .play import VOTE_WORDS, act, check_guard, move_text, playing_seats

RESERVED = VOTE_WORDS + ("swap", "resign", "cancel")


@board_command("queue", "move[#n]|pass|cancel", aliases=("qmove", "qboard", "moveq", "boardq"))
def queue(ctx):
    """Stores a move for your next turn (played then, if still legal); cancel drops it and a
    queued resignation."""
    board = ctx.board
    playing = playing_seats(ctx, board)
    text, guard = split_guard(move_text(ctx))
    word = text.lower()
    on_move = board.position.to_move()
    waiting = [s for s in playing if s != on_move]
    if word == "cancel":
        queued = [(s, q) for s in playing if (q := ctx.store.votes.queued(board.id, s))]
        if not queued:
            ctx.abort("You have no queued move or resignation", board)
        for seat, pending in queued:
            if pending.move_text:
                ctx.store.votes.clear_queued_move(board.id, seat)
            if pending.resign:
                ctx.store.votes.set_pending_resignation(board.id, seat, False)
        _queue_reply(ctx, board)
        if any(pending.resign for _, pending in queued):
            # The others were told of the resignation (play.queue_resignation).
            board.events.append(f"{ctx.userid} has taken back the resignation.")
            ctx.announce(board, others_only=True)
        return
    if on_move in playing:
        act(ctx, board, text, guard, ctx.request.body)
        return
    if word in RESERVED or not text:
        ctx.abort("Only moves and pass can be queued", board)
    if guard is not None and not DIGITS_RE.fullmatch(guard):
        ctx.abort(f'Invalid move number "{guard}" specified', board)
    problem = illegal_whatever_comes(board.position, waiting[0], text)
    if problem is not None:
        ctx.abort(
            f'Move "{text}" cannot be queued: it is illegal whatever is played before '
            f"your turn ({problem})",
            board,
        )
    ctx.store.votes.set_queued_move(board.id, waiting[0], text, guard, ctx.request.body)
    _queue_reply(ctx, board)


# Positions tried before giving up on checking a queued move (it is then checked when played).
QUEUE_CHECK_BUDGET = 2000


def illegal_whatever_comes(position, seat, text) -> str | None:
    """Why a queued move is illegal in every position in which the seat can next be on move,
    or None when it may be legal in one of them (or there were too many to look at): only a
    move that can never be played is refused at once (issue 16), so a player may still queue
    an answer to a move the opponent has not made yet."""
    game = position.game
    frontier, budget, reasons, found = [position.state], QUEUE_CHECK_BUDGET, [], False
    while frontier:
        state = frontier.pop()
        on_move = None if game.outcome(state) is not None else game.to_move(state)
        if on_move is None:
            continue
        if on_move == seat and state is not position.state:
            found = True
            try:
                canonical_ply(game, state, seat, text)
                return None
            except MoveError as error:
                reasons.append(str(error))
                continue
        forced = game.forced_move(state)
        if position.statuses[on_move] != PLAYING:
            replies = ["pass"]  # the core passes for a seat that has left
        elif forced is not None:
            replies = [forced]
        else:
            replies = list(game.legal_moves(state, on_move))
            if game.can_pass(state, on_move):
                replies.append("pass")
        budget -= len(replies)
        if budget < 0:
            return None
        frontier.extend(game.apply_move(state, on_move, reply) for reply in replies)
    return reasons[0] if found else None


def _queue_reply(ctx, board):
    body, html = ctx.board_mail(
        board, ctx.userid, ctx.board_context(board, ctx.userid, next_steps=True)
    )
    ctx.reply(ctx.board_subject(board, ctx.userid), body, kind="board", board=board, html=html)


def _submittable_seat(ctx, board, text, guard):
    playing = playing_seats(ctx, board)
    on_move = board.position.to_move()
    if on_move not in playing:
        ctx.abort("It is not your move", board)
    check_guard(ctx, board, text, guard)
    if text.lower() in RESERVED:
        ctx.abort("Only moves and pass can be submitted", board)
    return on_move


@board_command("submit", "move[#n]")
def submit(ctx):
    """Shows the board after your move without playing it; confirm plays it."""
    board = ctx.board
    text, guard = split_guard(move_text(ctx))
    seat = _submittable_seat(ctx, board, text, guard)
    position = board.position.copy()
    try:
        ply = position.try_text(seat, text)
    except MoveError as error:
        ctx.abort(str(error), board)
    ctx.store.votes.set_submission(
        board.id, seat, ply.text, guard, ctx.request.body, board.position.move_number
    )
    title = f"Submit of {board.title_name}"
    notice = "This is a preview of a submitted move. It must be confirmed to take effect."
    how = (
        f"Reply `confirm` to play it,\n"
        f"or send `{ctx.game.name} confirm {board.number} {ctx.userid} <password>`."
    )
    body, html = ctx.board_mail(
        board,
        ctx.userid,
        ctx.board_context(board, ctx.userid, title=title, position=position, events=[notice, how]),
    )
    ctx.reply(title, body, kind="preview", board=board, html=html)


@board_command("confirm")
def confirm(ctx):
    """Plays your submitted move exactly as move would; a new body replaces its comment."""
    board = ctx.board
    playing = playing_seats(ctx, board)
    submission = next(
        (
            row
            for seat in playing
            if (row := ctx.store.votes.submission(board.id, seat))
            and row.move_number == board.position.move_number
        ),
        None,
    )
    if submission is None:
        ctx.abort("No submission to confirm", board)
    if board.position.to_move() != submission.seat:
        ctx.abort("It is not your move", board)
    comment = ctx.request.body if ctx.request.body.strip() else (submission.comment or "")
    act(ctx, board, submission.move_text, submission.guard, comment)
