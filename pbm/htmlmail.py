"""The HTML alternative of a board mail (docs/spec/server.md §11.5): the same message as the
text part, with the board's picture inline. The text part is left exactly as it was, so a
plain-text reader sees what every board mail said before pictures."""

import secrets
from typing import NamedTuple

from .boardcache import view_of
from .templating import html_environment


class Picture(NamedTuple):
    """A PNG shown in the HTML part by its Content-ID (without the angle brackets)."""

    cid: str
    png: bytes


class HtmlPart(NamedTuple):
    html: str
    pictures: tuple[Picture, ...] = ()


def board_part(ctx, board, context: dict, intro: str = "") -> HtmlPart:
    """The HTML part of a board mail rendered from the text part's context (summary.py
    board_context) and its picture, drawn once per state and perspective in this run;
    `intro` is what the text part says before the board (a nag's reminder)."""
    position, perspective = context["position"], context["perspective"]
    last = last_move_text(board.game, position, perspective, board.row.status != "active")
    picture = _picture(ctx, board.game, position.state, perspective, last)
    values = dict(context)
    values.update(
        intro=intro,
        picture=picture,
        alt=picture_alt(board, position, last, context["state_line"]),
        players=[
            (board.game.player_names[seat], holder) for seat, holder in enumerate(position.holders)
        ],
        footer=ctx.render("mail/footer.txt").strip(),
    )
    html = html_environment(ctx.config.home).get_template("mail/board.html").render(**values)
    return HtmlPart(html, (picture,) if picture is not None else ())


def last_move_text(game, position, perspective, finished: bool) -> str | None:
    """The last ply's move, to be highlighted; None when there is none or when this
    perspective may not see it (a hidden move, as the move list hides it)."""
    if not position.plies:
        return None
    ply = position.plies[-1]
    if ply.kind != "move":
        return None
    if not game.visible_moves and not finished and ply.seat != perspective:
        return None
    return ply.text


def picture_alt(board, position, last: str | None, state_line: str) -> str:
    """The picture in words, for a reader that shows no images."""
    after = f" after move {position.plies_made}" if position.plies_made else ""
    played = f" (last move {last})" if last else ""
    return f"{board.title_name}{after}{played}. {state_line}"


def _picture(ctx, game, state, perspective, last: str | None) -> Picture | None:
    key = ("picture", game.name, id(state), view_of(game, perspective), last)
    if key not in ctx.drawn:
        # deferred: Pillow costs more to import than a text-only mail command takes
        from .pictures import board_png

        png = board_png(game, state, perspective=perspective, last_move=last)
        picture = None
        if png is not None:
            picture = Picture(f"board-{secrets.token_hex(12)}@{ctx.config.server_domain}", png)
        # The state is kept with its picture: its id cannot be reused by another while cached.
        ctx.drawn[key] = (state, picture)
    return ctx.drawn[key][1]
