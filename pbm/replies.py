"""Play by replying (docs/spec/server.md §11.3): a mail that asks a player to act carries
`Reply-To: <local>+<token>@<domain>`; a reply to it runs one board command of that player
on that board, without a password.

A token is a random id and a truncated HMAC-SHA256 under secret.key of the id, game, board,
userid and move number, in base32; the id's row holds the same fields and the expiry. The
token stands for the userid and password of exactly one user on exactly one board, for the
board commands of REPLY_WORDS and moves, and never for an account command.

A reset token (docs/spec/server.md §3.2.3) has the same shape, but its id lives in the
account's reset_codes row, never in reply_tokens, and its MAC is taken over a message
that starts with RESET_KIND, which no board token's message can (a board token's id is
base32, without a dash): a board token never resets a password, a reset token never moves.

An invitation token (docs/spec/server.md §11.1) is the third kind: its id lives in the
invitee's row of the invitation, and its MAC is taken over a message that starts with
INVITATION_KIND. It only ever answers `accept` or `decline` to that invitation: it never
moves or votes, and no board token answers an invitation.
"""

import base64
import hmac
import re
import secrets
from datetime import timedelta
from typing import NamedTuple

ID_BYTES = 10
MAC_BYTES = 10
TOKEN_CHARS = 32  # (ID_BYTES + MAC_BYTES) * 8 / 5
TOKEN_RE = re.compile(rf"[a-z2-7]{{{TOKEN_CHARS}}}")
LIFETIME = timedelta(days=30)
# Stands where the password would in the command a token reply runs. That command is built
# by pbm, never read from a mail, and its context holds the grant: the word is not checked.
TOKEN_PASSWORD = "(reply-token)"
RESET_KIND = "password-reset"
INVITATION_KIND = "invitation"
# The reply's first word, when it is one of these, names the command; any other first line
# is a move. Chat takes no move-number guard: it changes nothing on the board.
REPLY_WORDS = (
    "pass",
    "--",
    "resign",
    "swap",
    "accept",
    "reject",
    "propose",
    "undo",
    "confirm",
    "queue",
    "chat",
)


class Grant(NamedTuple):
    """What a valid token lets its reply do."""

    game: str
    number: int
    userid: str
    move_number: int


class ResetGrant(NamedTuple):
    """What a reset token lets its reply try: set the password of one account, once. The
    reset command decides, in its transaction, counting a token whose MAC did not match
    (`mac_matched`) as a wrong code."""

    userid: str
    token_id: str
    mac_matched: bool


class InvitationGrant(NamedTuple):
    """What a valid invitation token lets its reply do: answer one invitation for one user."""

    game: str
    number: int
    userid: str


class TokenParts(NamedTuple):
    token_id: str  # where the token's kind keeps its row
    mac: str


def split_token(token: str) -> TokenParts | None:
    """The id and MAC of a token of the right shape, else None."""
    if not TOKEN_RE.fullmatch(token):
        return None
    cut = ID_BYTES * 8 // 5
    return TokenParts(token[:cut], token[cut:])


def b32_text(data: bytes) -> str:
    """Bytes as the lower-case base32 that tokens and ids in our addresses are written in."""
    return base64.b32encode(data).decode("ascii").lower()


def _mac(key: bytes, token_id: str, game: str, number: int, userid: str, move_number: int) -> str:
    message = "\0".join((token_id, game, str(number), userid, str(move_number))).encode()
    return b32_text(hmac.digest(key, message, "sha256")[:MAC_BYTES])


def new_token(key: bytes, game: str, number: int, userid: str, move_number: int):
    """(token id, token) for one recipient of one board mail."""
    token_id = b32_text(secrets.token_bytes(ID_BYTES))
    return token_id, token_id + _mac(key, token_id, game, number, userid, move_number)


def _reset_mac(key: bytes, token_id: str, userid: str) -> str:
    message = "\0".join((RESET_KIND, token_id, userid)).encode()
    return b32_text(hmac.digest(key, message, "sha256")[:MAC_BYTES])


def new_reset_token(key: bytes, userid: str):
    """(token id, token) for the Reply-To of one password reset mail."""
    token_id = b32_text(secrets.token_bytes(ID_BYTES))
    return token_id, token_id + _reset_mac(key, token_id, userid)


def reset_mac_matches(key: bytes, parts: TokenParts, userid: str) -> bool:
    return hmac.compare_digest(parts.mac, _reset_mac(key, parts.token_id, userid))


def _invitation_mac(key: bytes, token_id: str, game: str, number: int, userid: str) -> str:
    message = "\0".join((INVITATION_KIND, token_id, game, str(number), userid)).encode()
    return b32_text(hmac.digest(key, message, "sha256")[:MAC_BYTES])


def new_invitation_id() -> str:
    """The id of an invitee's invitation token, kept in their row of the invitation."""
    return b32_text(secrets.token_bytes(ID_BYTES))


def invitation_token(key: bytes, token_id: str, game: str, number: int, userid: str) -> str:
    """The token of an invitation mail's Reply-To, the same for every mail of the invitation."""
    return token_id + _invitation_mac(key, token_id, game, number, userid)


def invitation_mac_matches(
    key: bytes, parts: TokenParts, game: str, number: int, userid: str
) -> bool:
    expected = _invitation_mac(key, parts.token_id, game, number, userid)
    return hmac.compare_digest(parts.mac, expected)


def mac_matches(key: bytes, parts: TokenParts, row) -> bool:
    expected = _mac(key, parts.token_id, row.game, row.number, row.userid, row.move_number)
    return hmac.compare_digest(parts.mac, expected)


def reply_address(config, token: str) -> str:
    local, _, domain = config.get("server.address").rpartition("@")
    return f"{local}+{token}@{domain}"


def own_extension(config, recipient: str | None) -> str | None:
    """What follows the plus of an envelope recipient `<local>+<extension>@<domain>` of our
    own address, lowercased; None for anything else. The recipient is hostile input: only
    exactly our local part, a plus and our domain around it are taken. Reply tokens, bounce
    ids and unsubscribe tokens each check their own shape of extension."""
    if not recipient or len(recipient) > 254:
        return None
    address = recipient.strip().strip("<>").strip()
    own_local, _, own_domain = config.get("server.address").lower().rpartition("@")
    local, _, domain = address.rpartition("@")
    if domain.lower() != own_domain:
        return None
    base, plus, extension = local.partition("+")
    if not plus or base.lower() != own_local:
        return None
    return extension.lower()


def token_of_recipient(config, recipient: str | None) -> str | None:
    """The token of an envelope recipient `<local>+<token>@<domain>` of our own address;
    None for anything else."""
    token = own_extension(config, recipient)
    return token if token is not None and TOKEN_RE.fullmatch(token) else None


def token_command(game: str, number: int, userid: str, first_line: str) -> tuple[str, str]:
    """(command, comment) for a reply's first line: the board command the token's user would
    send with their password, and chat's text after its word, which starts the comment."""
    words = first_line.split()
    word = words[0].lower()
    head = f"{game} {{}} {number} {userid} {TOKEN_PASSWORD}"
    if word == "chat":
        return head.format("chat"), first_line.strip()[len(words[0]) :].strip()
    if word == "confirm" and len(words) == 1:
        return head.format("confirm"), ""
    if word == "queue" and len(words) > 1:
        return head.format("queue") + " " + " ".join(words[1:]), ""
    return head.format("move") + " " + " ".join(words), ""
