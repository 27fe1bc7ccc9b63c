"""The vote commands (docs/spec/server.md §3.6), and the accept/reject words they share with the
challenge settings (docs/spec/server.md §3.9) and the answers to invitations
(docs/spec/server.md §11.1); the vote rules are in play.vote and the board layer."""

from ..grammar import command, parse_board
from .boardcommand import board_command, load_named_board
from .invitations import answer, load_invitation
from .play import playing_seats, vote
from .settings import set_acceptance


def _vote_command(word):
    def handler(ctx):
        vote(ctx, ctx.board, word, playing_seats(ctx, ctx.board))

    handler.__doc__ = {
        "propose": "Proposes a draw; every other player must accept it.",
        "undo": "Asks to take back the last move; every other player must accept it.",
    }[word]
    return handler


for _word in ("propose", "undo"):
    board_command(_word)(_vote_command(_word))


def _board_form(args) -> bool:
    return len(args) == 3 and parse_board(args[0]) is not None


def _board_or_settings_form(ctx):
    """The board (or the invitation) of `accept B U P` is loaded before the password; three
    words that name no board fit neither form."""
    if _board_form(ctx.args):
        if not load_invitation(ctx):
            load_named_board(ctx)
    elif len(ctx.args) != 2:
        ctx.syntax_error()


def _accept_or_reject(word):
    def handler(ctx):
        if ctx.invitation is not None:
            answer(ctx, accept=word == "accept")
        elif ctx.board is not None:
            vote(ctx, ctx.board, word, playing_seats(ctx, ctx.board))
        else:
            set_acceptance(ctx, accept=word == "accept")

    handler.__doc__ = {
        "accept": "With a board: accepts a proposed draw or undo, or an invitation. Without: "
        "accepts challenges.",
        "reject": "With a board: rejects a proposed draw or undo, or declines an invitation. "
        "Without: refuses challenges.",
    }[word]
    return handler


for _word in ("accept", "reject"):
    command(
        _word,
        "game",
        f"{{game}} {_word} board userid password | {{game}} {_word} userid password",
        min_args=2,
        max_args=3,
        secrets=lambda args: (2,) if _board_form(args) else (1,),
        auth=lambda args: (1, 2) if _board_form(args) else (0, 1),
        before_auth=_board_or_settings_form,
    )(_accept_or_reject(_word))
