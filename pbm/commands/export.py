"""`export me`: a player's own data, mailed to them as JSON (docs/spec/server.md §3.2.4);
`<game> export`: a board's record, mailed as an attachment (docs/spec/server.md §11.6)."""

import json

from ..boardrecord import record_file
from ..clock import stamp
from ..grammar import command, parse_board

EXPORT_FORMAT = 1


@command(
    "export me",
    "global",
    "export me userid password",
    min_args=2,
    max_args=2,
    secrets=(1,),
    auth=(0, 1),
)
def export_me(ctx):
    """Mails you your account, your boards and your results as JSON."""
    data = player_data(ctx.store, ctx.userid, stamp(ctx.now))
    body = ctx.render(
        "mail/export.txt", userid=ctx.userid, data=json.dumps(data, indent=1, ensure_ascii=False)
    )
    # Unwrapped: a long value broken across lines would no longer be JSON.
    ctx.mail_user(ctx.userid, f"Data of {ctx.userid}", body, "account", wrap=False)


RECORD_KINDS = ("txt", "json")


@command("export", "game", "{game} export board [txt|json]", min_args=1, max_args=2)
def export_board(ctx):
    """Mails a board's record as a file: the full summary (txt, the default) or the log (json)."""
    board_token = parse_board(ctx.args[0])
    kind = ctx.args[1].lower() if len(ctx.args) > 1 else "txt"
    if board_token is None or kind not in RECORD_KINDS:
        ctx.syntax_error()
    board = ctx.load_board(board_token[0])
    attachment = record_file(ctx, board, kind)
    body = ctx.render("mail/board_export.txt", board=board, file_name=attachment[0], kind=kind)
    ctx.reply(f"{board.title_name} export", body, kind="export", attachments=[attachment])


def player_data(store, userid: str, at: str) -> dict:
    """The account and everything it played. Other players appear by userid only: their
    addresses are theirs to export."""
    user = store.users.get(userid)
    boards = []
    for row in store.boards.of_user(userid):
        result = store.ratings.board_result(row.id)
        boards.append(
            {
                "game": row.game,
                "number": row.number,
                "status": row.status,
                "created": row.created_at,
                "finished": row.finished_at,
                "seats": store.boards.seat_userids(row.id),
                "moves": [
                    {
                        "ply": p.ply,
                        "userid": p.userid,
                        "kind": p.kind,
                        "text": p.text,
                        "at": p.created_at,
                    }
                    for p in store.boards.plies(row.id)
                ],
                "result": None
                if result is None
                else {
                    "finished": result.finished_at,
                    "rated": bool(result.rated),
                    "reason": result.reason,
                    "scores": {s.userid: s.score for s in result.seats},
                },
            }
        )
    return {
        "format": EXPORT_FORMAT,
        "exported": at,
        "account": {
            "userid": user.userid,
            "addresses": store.users.addresses(userid),
            "created": user.created_at,
            "settings": {
                "challenges": [
                    {
                        "game": s.game,
                        "max_active": s.max_active,
                        "seeking": s.seeking,
                        "inactive": bool(s.inactive),
                        "invitations": bool(s.invitations),
                    }
                    for s in store.users.challenge_settings_of(userid)
                ],
                "vacations": [
                    {"started": v.started_at, "ended": v.ended_at}
                    for v in store.users.vacations(userid)
                ],
            },
        },
        "boards": boards,
        "ratings": [
            {
                "game": r.game,
                "rating": r.rating,
                "games": r.games,
                "won": r.won,
                "lost": r.lost,
                "tied": r.tied,
            }
            for r in store.ratings.of_user(userid)
        ],
    }
