"""The one gate between what a mail carried and the headers of the mail we write.

Every header value pbm writes passes `checked_header`, and mail composition cannot set a
header any other way (message.compose). Values are judged after RFC 2047 decoding, since
that is what the email library will turn them into: an encoded word is no place to hide a
CR/LF. Incoming values meet the same rules on the way in (`message_id_token`,
`checked_address`), so what is stored is already fit to be written out again.
"""

import re
from base64 import b64encode
from email.header import decode_header, make_header
from email.utils import formataddr
from functools import lru_cache

ADDRESS_HEADERS = frozenset({"from", "to", "cc", "bcc", "reply-to", "sender"})
MESSAGE_ID_HEADERS = frozenset({"message-id", "in-reply-to", "references", "content-id"})
MAX_ADDRESS_CHARS = 254
MAX_TEXT_CHARS = 998

_ATOM = r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+"
_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
ADDRESS_RE = re.compile(rf"(?=.{{1,64}}@){_ATOM}(?:\.{_ATOM})*@{_LABEL}(?:\.{_LABEL})*")
# Printable ASCII but for space, < and >: one token of a Message-ID, nothing else.
MESSAGE_ID_RE = re.compile(r"<([!-;=?-~]{1,250})>")
HEADER_NAME_RE = re.compile(r"[!-9;-~]{1,76}")


ENCODED_WORD_BYTES = 45  # base64 of 45 bytes in =?utf-8?b?...?= is 72 characters


class HeaderError(ValueError):
    """A value that must not reach a header; the message says what was wrong."""


def _decoded(value: str) -> str:
    """The text a reader (or the email library) sees once encoded words are decoded."""
    if "=?" not in value:
        return value
    try:
        return str(make_header(decode_header(value)))
    except (LookupError, UnicodeError, ValueError, AssertionError):
        return value


# Exactly the code points of Unicode categories Cc (C0, DEL, C1), Zl and Zp: one regular
# expression instead of a category lookup per character (every header of every mail).
CONTROL_RE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")
SURROGATE_RE = re.compile("[\ud800-\udfff]")  # category Cs


def is_control(char: str) -> bool:
    """C0, DEL, C1 and the Unicode line and paragraph separators."""
    return CONTROL_RE.fullmatch(char) is not None


def has_control(value: str) -> bool:
    return CONTROL_RE.search(value) is not None


def encoded_words(text: str) -> list[str]:
    """`text` as RFC 2047 encoded words (UTF-8, base64), each short enough for a folded
    line, never splitting a character; whitespace between them is not part of the text."""
    words: list[str] = []
    chunk: list[str] = []
    size = 0
    for char in text:
        length = len(char.encode("utf-8"))
        if size + length > ENCODED_WORD_BYTES and chunk:
            words.append(_encoded_word("".join(chunk)))
            chunk, size = [], 0
        chunk.append(char)
        size += length
    if chunk:
        words.append(_encoded_word("".join(chunk)))
    return words


def _encoded_word(text: str) -> str:
    return f"=?utf-8?b?{b64encode(text.encode('utf-8')).decode('ascii')}?="


def message_id_token(value: str | None) -> str | None:
    """`<token>` when the value holds exactly one clean Message-ID, else None: a token with
    control characters, spaces, 8-bit text or an encoded word (`=?`) is dropped."""
    if not value:
        return None
    match = MESSAGE_ID_RE.fullmatch(value.strip())
    if match is None or "=?" in match.group(1):
        return None
    return f"<{match.group(1)}>"


def checked_address(value: str) -> str:
    """One plain ASCII addr-spec (local@domain, no name, no comment, no encoded word), or
    HeaderError saying how to write it."""
    address = value.strip()
    if address.startswith("<") and address.endswith(">"):
        address = address[1:-1]
    shown = CONTROL_RE.sub("?", value)[:80]
    if not address.isascii() or has_control(address) or has_control(_decoded(address)):
        raise HeaderError(
            f'Invalid address "{shown}": write a plain address such as alice@example.org, '
            "in ASCII letters, digits and punctuation only"
        )
    if "=?" in address:
        raise HeaderError(
            f'Invalid address "{shown}": an encoded word (=?...?=) is not an address; '
            "write a plain address such as alice@example.org"
        )
    if len(address) > MAX_ADDRESS_CHARS or not ADDRESS_RE.fullmatch(address):
        raise HeaderError(
            f'Invalid address "{shown}": write one plain address such as alice@example.org '
            "(no name, no angle brackets, no list)"
        )
    return address


@lru_cache(maxsize=16)  # the server's own name and address, in the From of every mail
def _named_address(display: str, address: str) -> str:
    return formataddr((checked_header("Comments", display), checked_address(address)))


def checked_header(name: str, value) -> str | None:
    """The value as it may be written into header `name`, checked after decoding.

    Addresses (a string, a list of them, or one (display name, address) pair) must each be
    one plain ASCII addr-spec, else HeaderError; no address at all writes no header. A
    Message-ID header keeps only clean `<token>`s and is None (not written) when none is
    left. Any other header is text: control characters become spaces, a lone surrogate
    U+FFFD, and an encoded word is defused, so what is written is what is read.
    """
    lowered = name.lower()
    if not HEADER_NAME_RE.fullmatch(name):
        raise HeaderError(f"Invalid header name {name!r}")
    if lowered in ADDRESS_HEADERS:
        if isinstance(value, tuple):
            return _named_address(*value)
        addresses = [value] if isinstance(value, str) else list(value)
        if not addresses:
            return None  # a mail printed on the operator's terminal goes to nobody
        return ", ".join(checked_address(a) for a in addresses)
    if not isinstance(value, str):
        raise HeaderError(f"{name} takes one text value")
    if lowered in MESSAGE_ID_HEADERS:
        tokens = [message_id_token(word) for word in value.split()]
        kept = [t for t in tokens if t is not None]
        return " ".join(kept) if kept else None
    text = SURROGATE_RE.sub("\ufffd", CONTROL_RE.sub(" ", _decoded(value)))
    text = re.sub(r" {2,}", " ", text.replace("=?", "= ?")).strip()
    return text[:MAX_TEXT_CHARS]
