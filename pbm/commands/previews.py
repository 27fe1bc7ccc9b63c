"""Trying moves without playing them: preview and replay (docs/spec/server.md §3.3, §3.7)."""

from ..boards import MAX_AUTOMATIC_ROUNDS, Board, InternalError
from ..game import MoveError, OptionError
from ..grammar import DIGITS_RE, command, parse_board
from ..position import replay
from ..store import PlyRecord

MAX_PREVIEW_MOVES = 200


def _position_after(ctx, board, ply):
    """The board as it was after ply n (negative n counts back from the end)."""
    made = board.position.plies_made
    upto = made + ply if ply < 0 else ply
    if not 0 <= upto <= made:
        ctx.abort(f"Board {board.number} has only {made} moves")
    return replay(
        board.game, board.options, board.seat_userids, board.row.seed, board.plies, upto=upto
    ), upto


def play_extra_moves(ctx, position, texts, new_board=False):
    """Play moves in turn order on a copy, each followed by the forced moves a real board
    would play (docs/spec/server.md §3.5.4 step 4); `Move k (text) is illegal: why` on the
    first bad one. A new board gets the steps that follow board creation first."""
    if len(texts) > MAX_PREVIEW_MOVES:
        ctx.abort(f"At most {MAX_PREVIEW_MOVES} moves can be previewed")
    position = position.copy()
    if new_board:
        _play_forced_moves(position)
    for number, text in enumerate(texts, start=1):
        seat = position.to_move()
        if seat is None:
            ctx.abort(f"Move {number} ({text}) is illegal: the game is over")
        try:
            if text.lower() == "swap":
                _swap(position)
            else:
                position.try_text(seat, text)
        except MoveError as error:
            ctx.abort(f"Move {number} ({text}) is illegal: {error}")
        _play_forced_moves(position)
    return position


def _swap(position):
    """The pie rule on a copy, with the refusals of docs/spec/server.md §3.5.3."""
    game = position.game
    if game.swap_after is None or position.seats != 2:
        raise MoveError(f"{game.display_name} does not support swapping")
    if position.plies and position.plies[-1].kind == "swap":
        raise MoveError("The board has just been swapped. Please make a move")
    if position.plies_made != game.swap_after:
        raise MoveError(f"You can only swap after move number {game.swap_after}")
    seat = position.to_move()
    position.apply(
        PlyRecord(
            ply=position.move_number,
            seat=seat,
            userid=position.holders[seat],
            kind="swap",
            text="swap",
            auto=0,
            charged=0,
            created_at="",
        )
    )


def _play_forced_moves(position):
    """The automatic steps a preview can have: no seat has resigned or queued anything."""
    for _ in range(MAX_AUTOMATIC_ROUNDS):
        seat = position.to_move()
        forced = position.game.forced_move(position.state) if seat is not None else None
        if forced is None:
            return
        kind = "pass" if forced == "pass" else "move"
        position.apply(
            PlyRecord(
                ply=position.move_number,
                seat=seat,
                userid=position.holders[seat],
                kind=kind,
                text=forced,
                auto=1,
                charged=0,
                created_at="",
            )
        )
    raise InternalError("preview: automatic steps did not settle")


def _mail_position(ctx, board, position, title, after=None):
    if after is not None:
        title += f" after move {after}"
    body = ctx.render(
        "mail/board.txt",
        **ctx.board_context(
            board,
            None,
            title=title,
            position=position,
            full_moves=True,
            perspective_of_viewer=False,
            clocks=False,
            auto_from=1,
        ),
    )
    ctx.reply(title.split(" after move")[0], body, kind="preview")


@command(
    "preview",
    "game",
    "{game} preview board[#n] move... | {game} preview new [players] [-option...] [move...]",
    min_abbrev=4,
    takes_options=True,
    min_args=1,
)
def preview(ctx):
    """Shows a board after some moves, played on a copy: nothing is saved."""
    game = ctx.game
    if ctx.args[0].lower() == "new":
        _preview_new(ctx, game, ctx.args[1:])
        return
    if ctx.parsed.params or ctx.parsed.server_options:
        ctx.abort("The preview command takes options only with new")
    token = parse_board(ctx.args[0], allow_ply=True)
    if token is None:
        ctx.syntax_error()
    board = ctx.load_board(token[0])
    after = None
    position = board.position
    if token[1] is not None:
        position, after = _position_after(ctx, board, token[1])
    position = play_extra_moves(ctx, position, ctx.args[1:])
    _mail_position(ctx, board, position, f"Preview of {board.title_name}", after)


def _preview_new(ctx, game, args):
    players = game.min_players
    if args and DIGITS_RE.fullmatch(args[0]):
        players = int(args[0])
        args = args[1:]
        if not game.min_players <= players <= game.max_players:
            ctx.abort(
                f"{game.display_name} is played by {game.min_players} to {game.max_players} players"
                if game.min_players != game.max_players
                else f"{game.display_name} is played by {game.min_players} players"
            )
    try:
        options = game.parse_options(ctx.parsed.params, players)
    except OptionError as error:
        ctx.abort(str(error))
    userids = [f"player{i}" for i in range(1, players + 1)]
    board = Board.unsaved(ctx, game, options, userids, "new")
    position = play_extra_moves(ctx, board.position, args, new_board=True)
    _mail_position(ctx, board, position, f"Preview of {game.display_name} Board new")


@command("replay", "game", "{game} replay board n [move...]", min_args=2)
def replay_(ctx):
    """Shows a board as it was after move n (negative n counts back), plus optional moves."""
    token = parse_board(ctx.args[0])
    if token is None or not _is_number(ctx.args[1]):
        ctx.syntax_error()
    board = ctx.load_board(token[0])
    position, after = _position_after(ctx, board, int(ctx.args[1]))
    position = play_extra_moves(ctx, position, ctx.args[2:])
    _mail_position(ctx, board, position, f"Replay of {board.title_name}", after)


def _is_number(token: str) -> bool:
    return bool(DIGITS_RE.fullmatch(token.removeprefix("-")))
