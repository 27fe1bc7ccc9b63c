"""A board's record as anyone may see it (docs/spec/server.md §11.6, §11.8): the text that
`export` mails and the web view serves as `.txt`, and the JSON of its log. A spectator's
view: no addresses, and hidden information only after the game's end."""

import json

from .summary import board_context, shown_text

RECORD_FORMAT = 1


def record_text(ctx, board) -> str:
    """The full summary a spectator's `show` mails: moves, board, comments and clocks.
    `ctx` is what board_context reads: the server, the store and the time now."""
    values = board_context(
        ctx, board, None, title=f"Summary of {board.title_name}", full_moves=True, timing=True
    )
    return ctx.server.render("mail/board.txt", **values) + "\n"


def record_data(board) -> dict:
    """The board's options, seats, result and whole log (undone plies marked) as plain JSON
    values. Before the end a game without visible moves shows none of their texts, nor the
    seed that would deal its hidden start again."""
    game, row = board.game, board.row
    finished = not board.active
    result = board.result()
    plies = []
    for ply in board.store.boards.log(board.id):
        plies.append(
            {
                "number": ply.ply,
                "seat": ply.seat,
                "userid": ply.userid,
                "kind": ply.kind,
                "text": shown_text(game, ply, None, finished, None),
                "time": ply.created_at,
                "automatic": bool(ply.auto),
                "undone": ply.undone_at is not None,
            }
        )
    return {
        "format": RECORD_FORMAT,
        "game": game.name,
        "display_name": game.display_name,
        "board": board.number,
        "status": row.status,
        "archived": row.archived_at is not None,
        "options": board.options,
        "seed": row.seed if finished else None,
        "seats": list(board.seat_userids),
        "sides": list(game.player_names[: len(board.seat_userids)]),
        "created": row.created_at,
        "last_move": row.last_move_at,
        "finished": row.finished_at,
        "result": None
        if result is None
        else {
            "rated": bool(result.rated),
            "reason": result.reason,
            "points": result.points,
            "scores": [
                {"seat": s.seat, "userid": s.userid, "score": s.score} for s in result.seats
            ],
        },
        "plies": plies,
    }


def record_json(board) -> str:
    """record_data as the text of a `.json` file."""
    return json.dumps(record_data(board), indent=1, ensure_ascii=False) + "\n"


def record_file(ctx, board, kind: str) -> tuple[str, str, str]:
    """(file name, MIME type, content) of the record as `kind` (txt or json)."""
    name = f"{board.game.name}-{board.number}.{kind}"
    if kind == "json":
        return name, "application/json", record_json(board)
    return name, "text/plain", record_text(ctx, board)
