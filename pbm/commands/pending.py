"""Moves made ahead of time: queue (played when the turn comes), submit and confirm
(docs/spec/server.md §3.7)."""

from ..game import MoveError
from ..grammar import DIGITS_RE, command, split_guard
from .play import VOTE_WORDS, act, authenticated_board, check_guard, move_text, playing_seats

RESERVED = VOTE_WORDS + ("swap", "resign", "cancel")


@command(
    "queue",
    "game",
    "{game} queue board userid password move[#n]|pass|cancel",
    aliases=("qmove", "qboard", "moveq", "boardq"),
    min_args=4,
    secrets=(2,),
    auth=(1, 2),
)
def queue(ctx):
    """Stores a move for your next turn (played then, if still legal); cancel drops it."""
    board = authenticated_board(ctx)
    playing = playing_seats(ctx, board)
    text, guard = split_guard(move_text(ctx))
    word = text.lower()
    on_move = board.position.to_move()
    waiting = [s for s in playing if s != on_move]
    if word == "cancel":
        seat = next(
            (s for s in playing if (q := ctx.store.votes.queued(board.id, s)) and q.move_text), None
        )
        if seat is None:
            ctx.fail("You have no queued move", board)
        ctx.store.votes.clear_queued_move(board.id, seat)
        _queue_reply(ctx, board)
        return
    if on_move in playing:
        act(ctx, board, text, guard, ctx.request.body)
        return
    if word in RESERVED or not text:
        ctx.fail("Only moves and pass can be queued", board)
    if guard is not None and not DIGITS_RE.fullmatch(guard):
        ctx.fail(f'Invalid move number "{guard}" specified', board)
    ctx.store.votes.set_queued_move(board.id, waiting[0], text, guard, ctx.request.body)
    _queue_reply(ctx, board)


def _queue_reply(ctx, board):
    body = ctx.render("mail/board.txt", **ctx.board_context(board, ctx.userid, next_steps=True))
    ctx.reply(ctx.board_subject(board, ctx.userid), body, kind="board", board=board)


def _submittable_seat(ctx, board, text, guard):
    playing = playing_seats(ctx, board)
    on_move = board.position.to_move()
    if on_move not in playing:
        ctx.fail("It is not your move", board)
    check_guard(ctx, board, text, guard)
    if text.lower() in RESERVED:
        ctx.fail("Only moves and pass can be submitted", board)
    return on_move


@command(
    "submit",
    "game",
    "{game} submit board userid password move[#n]",
    min_args=4,
    secrets=(2,),
    auth=(1, 2),
)
def submit(ctx):
    """Shows the board after your move without playing it; confirm plays it."""
    board = authenticated_board(ctx)
    text, guard = split_guard(move_text(ctx))
    seat = _submittable_seat(ctx, board, text, guard)
    position = board.position.copy()
    try:
        ply = position.try_text(seat, text)
    except MoveError as error:
        ctx.fail(str(error), board)
    ctx.store.votes.set_submission(
        board.id, seat, ply.text, guard, ctx.request.body, board.position.move_number
    )
    title = f"Submit of {board.title_name}"
    notice = "This is a preview of a submitted move. It must be confirmed to take effect."
    how = (f"Reply `confirm` to play it,\n"
           f"or send `{ctx.game.name} confirm {board.number} {ctx.userid} <password>`.")
    body = ctx.render(
        "mail/board.txt",
        **ctx.board_context(board, ctx.userid, title=title, position=position,
                            events=[notice, how]),
    )
    ctx.reply(title, body, kind="preview", board=board)


@command(
    "confirm",
    "game",
    "{game} confirm board userid password",
    min_args=3,
    max_args=3,
    secrets=(2,),
    auth=(1, 2),
)
def confirm(ctx):
    """Plays your submitted move exactly as move would; a new body replaces its comment."""
    board = authenticated_board(ctx)
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
        ctx.fail("No submission to confirm", board)
    if board.position.to_move() != submission.seat:
        ctx.fail("It is not your move", board)
    comment = ctx.request.body if ctx.request.body.strip() else (submission.comment or "")
    act(ctx, board, submission.move_text, submission.guard, comment)
