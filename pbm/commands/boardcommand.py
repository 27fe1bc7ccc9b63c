"""How a command on one board of its user is declared: `{game} word board userid password`
and what follows the password, the board loaded before the password is checked
(docs/spec/server.md §3.5.1 step 1)."""

from ..grammar import command, parse_board


def load_named_board(ctx):
    """before_auth of the commands on a board: its number is checked and the board loaded
    (ctx.board) before the password, docs/spec/server.md §3.5.1 step 1."""
    token = parse_board(ctx.args[0])
    if token is None:
        ctx.syntax_error()
    ctx.board = ctx.load_board(token[0])


def board_command(word: str, after_password: str = "", *, aliases=(), before_auth=None):
    """Register a game command on one board of its user. `after_password` is what the syntax
    shows after the password: nothing, an optional `[...]` (one more word at most), or a
    required word and whatever follows it."""
    optional = after_password.startswith("[")
    syntax = f"{{game}} {word} board userid password" + (
        f" {after_password}" if after_password else ""
    )
    return command(
        word,
        "game",
        syntax,
        aliases=aliases,
        min_args=4 if after_password and not optional else 3,
        max_args=(4 if optional else None) if after_password else 3,
        secrets=(2,),
        auth=(1, 2),
        before_auth=before_auth or load_named_board,
    )
