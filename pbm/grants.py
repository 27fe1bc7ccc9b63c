"""What a reply to one of our mails may run (docs/spec/server.md §11.3, §3.2.3, §11.1).

The token of the address a reply came to is split and checked once, where its kind keeps it:
a password reset's among the account's reset codes, an invitation's in its invitee's seat, a
board mail's among the reply tokens. resolve() gives the command the token grants, for the
token's user, or the refusal; issue_token() makes the token of a board mail.
"""

from dataclasses import dataclass, replace

from .clock import now, parse_stamp, stamp
from .replies import (
    LIFETIME,
    TOKEN_PASSWORD,
    Grant,
    InvitationGrant,
    ResetGrant,
    TokenParts,
    invitation_mac_matches,
    mac_matches,
    new_token,
    reset_mac_matches,
    split_token,
    token_command,
)
from .request import Request

INVITATION_ANSWERS = ("accept", "decline")
INVALID = (
    "This reply address is not valid. Reply to the latest mail about your board or password "
    "reset, or send the command with your password."
)
INVALID_INVITATION = (
    "This reply address is not valid. Reply to the latest mail about your invitation, or "
    "send the command with your password."
)
NOT_THE_PLAYERS = (
    "This reply address works only from the addresses of the player it was sent to; send "
    "the command with your password."
)


@dataclass(frozen=True)
class Granted:
    """A token's command, with the grant that stands for its user's password, and the
    request to run it for (its body the comment, nothing more of the reply kept)."""

    grant: Grant | ResetGrant | InvitationGrant
    command: str
    request: Request


@dataclass(frozen=True)
class Refused:
    """Why the reply runs nothing, answered to the request as it stands."""

    message: str
    request: Request


def resolve(store, config, request: Request) -> Granted | Refused:
    """What the reply `request` (whose `token` is set) may run."""
    parts = split_token(request.token or "")
    if parts is None:
        return Refused(INVALID, request)
    reset = store.users.reset_by_token(parts.token_id)
    if reset is not None:
        matched = reset_mac_matches(config.secret_key, parts, reset.userid)
        return _reset_reply(request, reset, matched)
    invited = store.invitations.by_token(parts.token_id)
    if invited is not None:
        return _invitation_reply(store, config, request, invited, parts)
    return _board_reply(store, config, request, parts)


def _board_reply(store, config, request: Request, parts: TokenParts) -> Granted | Refused:
    row = store.tokens.get(parts.token_id)
    if row is None or not mac_matches(config.secret_key, parts, row):
        return Refused(INVALID, request)
    if not store.users.has_address(row.userid, request.sender):
        return Refused(NOT_THE_PLAYERS, request)
    board = store.boards.get(row.game, row.number)
    if board is None or board.status != "active" or parse_stamp(row.expires_at) <= now():
        return Refused(
            "This reply address has expired (the game has ended, or 30 days have passed); "
            "send the command with your password.",
            request,
        )
    if not request.text:
        return Refused(
            "Your reply is empty: write your move (or pass, resign, accept, reject, confirm, "
            "queue <move>, chat <text>) on the first line of your reply.",
            request,
        )
    command, chat = token_command(row.game, row.number, row.userid, request.text)
    body = f"{chat}\n{request.body}".strip("\n") if chat else request.body
    grant = Grant(row.game, row.number, row.userid, row.move_number)
    return Granted(grant, command, replace(request, body=body))


def _reset_reply(request: Request, reset, matched: bool) -> Granted | Refused:
    """The reset command for a reply to a password reset mail. The reply's first line is a
    new password: nothing the reply says is kept or quoted, only the command built here,
    whose password the quote masks. The command itself decides on the token's MAC
    (`matched`), the sender and the expiry in its transaction, counting a failure as a
    wrong code."""
    words = request.text.split()
    bare = replace(request, text="", body="", body_lines=[])
    if len(words) != 1:
        return Refused(
            "Write only your new password, one word without spaces, on the first line of "
            "your reply to the reset mail. Nothing was changed.",
            bare,
        )
    grant = ResetGrant(reset.userid, reset.token_id, matched)
    command = f"reset {reset.userid} {TOKEN_PASSWORD} {words[0]}"
    return Granted(grant, command, replace(bare, text=command))


def _invitation_reply(
    store, config, request: Request, invited, parts: TokenParts
) -> Granted | Refused:
    """`accept` or `decline` of the token's invitee; the invitation's state is the
    command's to check."""
    record, seat = invited
    key = config.secret_key
    if not invitation_mac_matches(key, parts, record.game, record.number, seat.userid):
        return Refused(INVALID_INVITATION, request)
    if not store.users.has_address(seat.userid, request.sender):
        return Refused(NOT_THE_PLAYERS, request)
    words = request.text.split()
    word = words[0].lower() if words else ""
    if word not in INVITATION_ANSWERS or len(words) > 1:
        return Refused(
            "Reply accept or decline on the first line to answer this invitation; nothing "
            "was done.",
            request,
        )
    grant = InvitationGrant(record.game, record.number, seat.userid)
    command = f"{record.game} {word} {record.number} {seat.userid} {TOKEN_PASSWORD}"
    return Granted(grant, command, request)


class TokenIssuer:
    """Makes the reply token of one recipient of one mail about a running board."""

    def __init__(self, store, config):
        self.store, self.config = store, config

    def __call__(self, board, userid: str, moment) -> str:
        move_number = board.position.move_number
        game, number = board.game.name, board.number
        token_id, token = new_token(self.config.secret_key, game, number, userid, move_number)
        self.store.tokens.add(
            token_id,
            game,
            number,
            userid,
            move_number,
            stamp(moment),
            stamp(moment + LIFETIME),
        )
        return token
