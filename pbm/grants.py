"""What a reply to one of our mails may run (docs/spec/server.md §11.3, §3.2.3, §11.1).

The token of the address a reply came to is split and checked once, where its kind keeps it:
a password reset's among the account's reset codes, an invitation's in its invitee's seat, a
board mail's among the reply tokens. resolve() gives the command the token grants, for the
token's user, or the refusal; TokenIssuer makes the token of a board mail. A reply that
reached the plain address finds its token by the Message-ID it answers (thread_reply), from
its player's confirmed address only: such a Message-ID is as unguessable as a token.
"""

import re
from dataclasses import replace
from typing import NamedTuple

from .clock import now, parse_stamp, stamp
from .grammar import GrammarError, normalize, parse, password_of
from .mailin import reply_parts
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
# The Subjects of our mails about a board (docs/spec/server.md §5.3), as a reply keeps them:
# the thread's `<Game> Board <N>: <U> vs <U>` and error, and pbmserv's `[New ]<Game> Board
# <N>[ <U>][ **]`. Never a command: a classic `<game> board <N> <U> <P> <move>` has more words.
OUR_SUBJECT_RE = re.compile(
    r"(?:\S+ board \d+: .*|\S+ board \d+ error|(?:new )?\S+ board \d+(?: \S+)?(?: \*\*)?)",
    re.IGNORECASE,
)
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


class Granted(NamedTuple):
    """A token's command, with the grant that stands for its user's password, and the
    request to run it for (its body the comment, nothing more of the reply kept)."""

    grant: Grant | ResetGrant | InvitationGrant
    command: str
    request: Request


class Refused(NamedTuple):
    """Why the reply runs nothing, answered to the request as it stands; `player` is the
    board and user of a genuine token from its user's address, whose thread the answer
    joins (with a token for the board as it is now, while it runs)."""

    message: str
    request: Request
    player: Grant | None = None


def resolve(store, config, request: Request, games) -> Granted | Refused:
    """What the reply `request` (whose `token` or `thread_token_id` is set) may run;
    `games` gives the display names a refusal uses."""
    if request.thread_token_id is not None:
        row = store.tokens.get(request.thread_token_id)
        if row is None:
            return Refused(INVALID, request)
        return _board_reply(store, request, row, games)
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
    row = store.tokens.get(parts.token_id)
    if row is None or not mac_matches(config.secret_key, parts, row):
        return Refused(INVALID, request)
    return _board_reply(store, request, row, games)


def subject_is_ours(subject: str) -> bool:
    """Whether a Subject is one of our mails' about a board, or none: a reply that keeps it
    carries its command in its first line, not in the Subject."""
    text = normalize(subject)
    return not text or OUR_SUBJECT_RE.fullmatch(text) is not None


def is_whole_command(line: str, games, timeouts) -> bool:
    """Whether a reply's first line is a whole command with its password (the classic
    `knightpanic move 106 bob papaya9 c1-a5`): it then runs as that command."""
    if password_of(line) is None:
        return False
    try:
        parsed = parse(line, games, timeouts)
    except GrammarError:
        return False
    return parsed.auth_pair() is not None


def thread_reply(store, request: Request) -> Request | None:
    """A mail to the plain address that answers one of our mails to its origin's account
    (its In-Reply-To or References name a Message-ID that carried a reply token), read as
    the reply it is: its first line the command, the rest the comment. Only from an address
    confirmed for that account (docs/spec/server.md §11.3); the thread's root, which anyone
    can write, is no Message-ID of a mail and never matches. None for any other mail."""
    row = store.tokens.by_message_id(request.replied_to)
    if row is None or not request.sender:
        return None
    if not store.limits.address_proven(row.userid, request.sender):
        return None
    first, comment = reply_parts(request.body_lines)
    return replace(
        request,
        text=first,
        body=comment,
        subject=request.text,
        thread_token_id=row.id,
    )


def _board_reply(store, request: Request, row, games) -> Granted | Refused:
    if not store.users.has_address(row.userid, request.sender):
        return Refused(NOT_THE_PLAYERS, request)
    player = Grant(row.game, row.number, row.userid, row.move_number)
    board = store.boards.get(row.game, row.number)
    if board is None or board.status != "active" or parse_stamp(row.expires_at) <= now():
        return Refused(_expired(store, games, row, board), request, player)
    if not request.text:
        return Refused(
            "Your reply is empty: write your move (or pass, resign, accept, reject, confirm, "
            "queue <move>, chat <text>) on the first line of your reply.",
            request,
            player,
        )
    command, chat = token_command(row.game, row.number, row.userid, request.text)
    body = f"{chat}\n{request.body}".strip("\n") if chat else request.body
    return Granted(player, command, replace(request, body=body))


def _expired(store, games, row, board) -> str:
    """Why a reply address no longer works, in the player's terms, and what to send."""
    # deferred: the summary's drawing code is for the mails that show a board
    from .summary import state_line

    game = games[row.game] if row.game in games else None
    name = f"{game.display_name if game else row.game} Board {row.number}"
    show = f'"{row.game} show {row.number}"'
    if board is not None and board.status == "finished":
        result = store.ratings.board_result(board.id)
        outcome = f" {state_line(None, None, result)}" if result is not None else ""
        players = " ".join(store.boards.seat_userids(board.id))
        return (
            f"This reply address has expired: {name} has ended.{outcome} Send {show} "
            f'for the final board, or "{row.game} challenge {players}" to play again.'
        )
    if board is None or board.status != "active":
        return (
            f"This reply address has expired: {name} was removed before its game began. "
            f'To play, send "{row.game} challenge {row.userid} <opponent>".'
        )
    return (
        f"This reply address has expired: it was mailed more than {LIFETIME.days} days ago. "
        f"Reply to your latest mail about {name}, send {show} for the board as it is now, or "
        "send the command with your password."
    )


def _reset_reply(request: Request, reset, matched: bool) -> Granted | Refused:
    """The reset command for a reply to a password reset mail. The reply's first line is a
    new password: nothing the reply says is kept or quoted, only the command built here,
    whose password the quote masks. The command itself decides on the token's MAC
    (`matched`), the sender and the expiry in its transaction, counting a failure as a
    wrong code. The password is the reply's first own line as written: a word that reads
    as a greeting may be one."""
    words = request.body_lines[0].split() if request.body_lines else []
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

    def __call__(self, board, userid: str, moment, message_id: str | None = None) -> str:
        """`message_id`: that of the mail whose Reply-To carries the token, by which a
        reply that lost the Reply-To still finds its board."""
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
            message_id,
        )
        return token
