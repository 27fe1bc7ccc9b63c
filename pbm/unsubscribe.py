"""List-Unsubscribe (docs/spec/server.md §5.10): mail a player did not ask for directly
(nags, digests, board mails of a subscription, notification of a board's end) says how to
turn off exactly its stream, with no password.

The token of a stream is the first 20 bytes of HMAC-SHA256(secret.key, "unsubscribe" ‖
userid ‖ stream ‖ game ‖ board), in lower-case base32 (32 characters): the same for every
mail of the stream, so its row (what it turns off) is written once. It works as the mailto
address `<local>+unsubscribe-<token>@<domain>`, which routes wherever the server's address
does, and with `[web] base_url` an https address as well, `<base_url>/unsubscribe/<token>`,
which `pbm web` takes as a one-click POST (RFC 8058)."""

import hmac
import logging
import re
from typing import NamedTuple

from .replies import b32_text, own_extension, reply_address

log = logging.getLogger("pbm.unsubscribe")

TOKEN_BYTES = 20
TOKEN_RE = re.compile(r"[a-z2-7]{32}")
PREFIX = "unsubscribe-"
STREAMS = ("nag", "digest", "subscription", "notify")


def stream_token(key: bytes, userid: str, stream: str, game=None, number=None) -> str:
    message = "\0".join(("unsubscribe", userid, stream, game or "", str(number or "")))
    return b32_text(hmac.digest(key, message.encode(), "sha256")[:TOKEN_BYTES])


def list_headers(ctx, userid: str, stream: str, game=None, number=None) -> dict:
    """List-Unsubscribe (and, with an https base URL, List-Unsubscribe-Post) for a mail of
    `stream` to `userid`; the token's row is written in the mail's transaction."""
    token = stream_token(ctx.config.secret_key, userid, stream, game, number)
    ctx.store.delivery.add_unsubscribe_token(token, userid, stream, game, number)
    targets = [f"<mailto:{reply_address(ctx.config, PREFIX + token)}>"]
    headers = {}
    base = ctx.config.get("web.base_url").rstrip("/")
    if base.startswith("https://"):  # RFC 8058 one-click is for https only
        targets.append(f"<{base}/unsubscribe/{token}>")
        headers["List-Unsubscribe-Post"] = "List-Unsubscribe=One-Click"
    headers["List-Unsubscribe"] = ", ".join(targets)
    return headers


def list_id(config, board) -> dict:
    """The List-Id of a board's thread, so that filters and providers can tell one board's
    mail from another's."""
    name = f"{board.game.display_name} board {board.number}"
    return {"List-Id": f'"{name}" <{board.number}.{board.game.name}.{config.server_domain}>'}


def token_of_recipient(config, recipient: str | None) -> str | None:
    """The token of an envelope recipient `<local>+unsubscribe-<token>@<domain>` of our own
    address; None for anything else (hostile input: exactly that shape, nothing more)."""
    extension = own_extension(config, recipient)
    if extension is None or not extension.startswith(PREFIX):
        return None
    token = extension[len(PREFIX) :]
    return token if TOKEN_RE.fullmatch(token) else None


def turn_off(store, key: bytes, token: str) -> str | None:
    """Turn off the stream of a valid token, in the caller's transaction; what was turned
    off, in words, or None for a token that is not ours."""
    row = store.delivery.unsubscribe_token(token) if TOKEN_RE.fullmatch(token or "") else None
    if row is None:
        return None
    expected = stream_token(key, row.userid, row.stream, row.game, row.number)
    if not hmac.compare_digest(token, expected):
        return None
    board = store.boards.get(row.game, row.number) if row.number is not None else None
    where = f"{row.game} board {row.number}"
    if row.stream == "nag":
        if board is not None:
            store.delivery.turn_nags_off(board.id, row.userid)
        what = f"reminders (nags) to {row.userid} about {where}"
    elif row.stream == "digest":
        store.users.set_digest(row.userid, False)
        what = f"the daily digest of {row.userid}"
    elif row.stream == "subscription":
        if board is not None:
            store.watching.unsubscribe(board.id, row.userid)
        what = f"the board mails of {where} to its subscriber {row.userid}"
    else:
        store.delivery.stop_notify(row.game, board.id if board else None, row.userid)
        what = f"notification of the end of {row.game} boards to {row.userid}"
    log.info("unsubscribed: %s", what)
    return what


class UnsubscribeByMail(NamedTuple):
    """A mail to an unsubscribe address: the stream goes off, the sender is told (unless
    the mail is one the loop guard would not answer)."""

    token: str

    @property
    def answered(self) -> bool:
        return True

    def run(self, ctx):
        what = turn_off(ctx.store, ctx.config.secret_key, self.token)
        if what is None:
            ctx.refused = True
            text = (
                "This unsubscribe address is not valid: nothing was changed. Use the "
                "unsubscribe address of a recent mail, or send the command (for example "
                "`digest U P off`, `game unsubscribe U P B`) with your password."
            )
            ctx.reply("PBM error", ctx.render("mail/notice.txt", text=text), kind="error")
            return
        text = f"Turned off: {what}. Nothing else was changed."
        ctx.reply("Unsubscribed", ctx.render("mail/notice.txt", text=text), kind="settings")
