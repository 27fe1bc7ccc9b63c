"""Draws and undo by vote (server spec 3.6), and the accept/reject words they share with
the challenge settings (3.9)."""

from ..game import Outcome
from ..grammar import command, parse_board
from ..position import PLAYING
from .play import authenticated_board, playing_seats
from .settings import set_acceptance

VOTE_NAMES = {"draw": "draw proposal", "undo": "undo request"}
ALREADY = {
    "draw": "A draw has already been proposed. Please accept or reject it.",
    "undo": "An undo has already been requested. Please accept or reject it.",
}


def vote(ctx, board, word, playing):
    game = board.game
    pending = board.vote()
    if word in ("propose", "undo"):
        if pending is not None:
            ctx.fail(ALREADY[pending.kind], board)
        kind = "draw" if word == "propose" else "undo"
        if kind == "draw" and not game.can_draw(board.position.state):
            ctx.fail(f"{game.display_name} does not support proposed Draws", board)
        if kind == "undo":
            if not game.can_undo(board.position.state):
                ctx.fail(f"{game.display_name} does not support undoing moves", board)
            if _last_decided_ply(board) is None:
                ctx.fail("There is no move to undo", board)
        accepted = set(board.position.seats_of(ctx.userid)) | _departed_seats(board)
        ctx.store.votes.start(board.id, kind, ctx.userid, _stamp(ctx), accepted)
        pending = board.vote()
    elif pending is None:
        ctx.fail("Nothing has been proposed. Please move or propose a draw or undo.", board)
    elif word == "reject":
        ctx.store.votes.end(board.id)
        board.events.append(f"{ctx.userid} has rejected the {VOTE_NAMES[pending.kind]}.")
        _finish_vote_command(ctx, board)
        return
    else:
        mine = set(board.position.seats_of(ctx.userid))
        if mine <= set(pending.accepted):
            ctx.fail("You have already accepted", board)
        accepted = set(pending.accepted) | mine | _departed_seats(board)
        ctx.store.votes.set_accepted(board.id, accepted)
        board.events.append(f"{ctx.userid} has accepted the {VOTE_NAMES[pending.kind]}.")
        pending = board.vote()
    if set(pending.accepted) >= set(range(board.position.seats)):
        execute_vote(ctx, board, pending)
    else:
        board.events.append(pending_line(board, pending))
    _finish_vote_command(ctx, board)


def _stamp(ctx):
    from ..config import stamp

    return stamp(ctx.now)


def _finish_vote_command(ctx, board):
    board.set_comment(ctx.userid, ctx.request.body)
    ctx.announce(board)


def _departed_seats(board) -> set[int]:
    """Resigned and forfeited seats accept every vote at once."""
    return {s for s, status in enumerate(board.position.statuses) if status != PLAYING}


def _last_decided_ply(board):
    decided = [p for p in board.position.plies if not p.auto]
    return decided[-1] if decided else None


def pending_line(board, pending) -> str:
    waiting = [
        board.position.holders[s]
        for s in range(board.position.seats)
        if s not in pending.accepted
    ]
    waiting = " ".join(dict.fromkeys(waiting))
    if pending.kind == "draw":
        start = f"{pending.proposer} has proposed a draw."
    else:
        start = f"{pending.proposer} has asked to undo the last move."
    return f"{start} The following players still need to accept or reject this: {waiting}"


def execute_vote(ctx, board, pending):
    """Everyone said yes: a draw ends the game as a tie, an undo takes the last move back."""
    ctx.store.votes.end(board.id)
    if pending.kind == "draw":
        board.events.append("The players have agreed to a draw.")
        board.finish(Outcome(winners=()), reason="the players agreed to a draw")
        board.save_snapshot()
        return
    taken = _last_decided_ply(board)
    ctx.store.boards.undo_plies_from(board.id, taken.ply, _stamp(ctx))
    ctx.store.limits.audit(_stamp(ctx), "undo", game=board.game.name, board=board.number,
                    detail={"ply": taken.ply, "text": taken.text})
    board.reload()
    board.save_snapshot()
    # A hidden move stays hidden from the others while the game goes on.
    shown = f" ({taken.text})" if board.game.visible_moves else ""
    board.events.append(f"UNDO successful: move {taken.ply}{shown} has been taken back.")


def _vote_command(word):
    def handler(ctx):
        board = authenticated_board(ctx)
        vote(ctx, board, word, playing_seats(ctx, board))

    handler.__doc__ = {
        "propose": "Proposes a draw; every other player must accept it.",
        "undo": "Asks to take back the last move; every other player must accept it.",
    }[word]
    return handler


for _word in ("propose", "undo"):
    command(
        _word, "game", f"{{game}} {_word} board userid password",
        min_args=3, max_args=3, secrets=(2,), auth=(1, 2),
    )(_vote_command(_word))


def _board_form(args) -> bool:
    return len(args) == 3 and parse_board(args[0]) is not None


def _accept_or_reject(word):
    def handler(ctx):
        if _board_form(ctx.args):
            board = authenticated_board(ctx)
            vote(ctx, board, word, playing_seats(ctx, board))
        elif len(ctx.args) == 2:
            set_acceptance(ctx, accept=word == "accept")
        else:
            ctx.syntax_error()

    handler.__doc__ = {
        "accept": "With a board: accepts a proposed draw or undo. Without: accepts challenges.",
        "reject": "With a board: rejects a proposed draw or undo. Without: refuses challenges.",
    }[word]
    return handler


for _word in ("accept", "reject"):
    command(
        _word, "game", f"{{game}} {_word} board userid password | {{game}} {_word} userid password",
        min_args=2, max_args=3,
        secrets=lambda args: (2,) if _board_form(args) else (1,),
        auth=lambda args: (1, 2) if _board_form(args) else (0, 1),
    )(_accept_or_reject(_word))
