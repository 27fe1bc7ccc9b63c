"""One outgoing message, composed: every header through the one gate (headers.py), the
text wrapped to the mail's width, and serialised as the email package would write it,
without parsing again what was just checked (docs/spec/server.md §5.2)."""

import binascii
import re
import secrets
import textwrap
from dataclasses import dataclass, field
from email import base64mime, quoprimime
from email.utils import format_datetime
from functools import lru_cache

from .clock import now
from .headers import HeaderError, checked_header, encoded_words, has_control
from .htmlmail import HtmlPart

LINE_WIDTH = 76


@dataclass
class Mail:
    """One message to one recipient: a user (all their addresses) or the sender."""

    kind: str
    subject: str
    body: str
    to: list[str]
    userid: str | None = None
    reply: bool = False  # a direct answer to the command, sent to the sender
    to_sender: bool = False
    headers: dict = field(default_factory=dict)
    wrap: bool = True  # False for a body that must arrive as written (exported JSON)
    html: HtmlPart | None = None  # a board mail's HTML alternative with its picture
    # (file name, MIME type, text) of each file sent along, unwrapped (a board's record)
    attachments: tuple = ()


def wrap_text(text: str, width: int = LINE_WIDTH) -> str:
    """User text wrapped to the mail's line width; over-long words are broken."""
    given = text.splitlines()
    if max(map(len, given), default=0) <= width:  # a board mail's every line
        return "\n".join(given)
    return wrap_each_line(given, width)


def wrap_each_line(given: list[str], width: int) -> str:
    """wrap_text without its shortcut: each line that does not fit, wrapped."""
    lines = []
    for line in given:
        if len(line) <= width:
            lines.append(line)
            continue
        indent = re.match(r"\s*", line).group(0)[: width // 2]
        lines.extend(
            textwrap.wrap(
                line,
                width=width,
                subsequent_indent=indent,
                break_long_words=True,
                break_on_hyphens=False,
            )
            or [""]
        )
    return "\n".join(lines)


def new_message_id(domain: str) -> str:
    """A Message-ID nobody can guess (128 random bits): a reply that answers one of our mails
    by it finds that mail's board as its reply token would (docs/spec/server.md §11.3)."""
    return f"<{secrets.token_hex(16)}@{domain}>"


@lru_cache(maxsize=4)  # the mails of a command share their second
def _date(moment) -> str:
    return format_datetime(moment)


def compose(config, mail: Mail, in_reply_to: str | None = None) -> "OutgoingMessage":
    """The message for one Mail; every header value passes headers.checked_header, once."""
    headers = {
        "From": (config.get("server.name"), config.get("server.address")),
        "To": list(mail.to),
        "Subject": mail.subject,
        "Date": _date(now()),
        "Message-ID": new_message_id(config.server_domain),
        "Auto-Submitted": "auto-replied" if mail.reply else "auto-generated",
        "X-Auto-Response-Suppress": "All",
    }
    headers.update(mail.headers)
    if mail.reply and in_reply_to:
        # After the board's thread root (mail.headers), the command this mail answers.
        headers["In-Reply-To"] = in_reply_to
        headers["References"] = " ".join(
            filter(None, (mail.headers.get("References"), in_reply_to))
        )
    checked = []
    for name, value in headers.items():
        text = checked_header(name, value)
        if text is not None:
            # What is written is checked once more: the value as a reader decodes it.
            if has_control(text):
                raise HeaderError(f"{name} would carry a control character")
            checked.append((name, text))
    body = wrap_text(mail.body) if mail.wrap else mail.body
    body = body.rstrip("\n") + "\n"
    if mail.html is None and not mail.attachments:
        return OutgoingMessage(checked, *text_part(body))
    return OutgoingMessage(checked, *multipart(body, mail))


def multipart(body: str, mail: Mail) -> tuple[list[tuple[str, str]], bytes]:
    """The MIME part of a mail with an HTML alternative or attached files, in the tree the
    email package's add_alternative, add_related and add_attachment build:
    multipart/alternative(text/plain, multipart/related(text/html, image/png...)), inside
    multipart/mixed(..., files) when files are attached. Written here, as the text part
    is: the email package's generator took two thirds of a move's CPU with a picture."""
    part = _text_leaf(body, "plain")
    if mail.html is not None:
        html = _text_leaf(mail.html.html, "html")
        if mail.html.pictures:
            html = _container("related", [html, *map(_picture_leaf, mail.html.pictures)])
        part = _container("alternative", [part, html])
    if mail.attachments:
        files = [_file_leaf(name, mime_type, text) for name, mime_type, text in mail.attachments]
        part = _container("mixed", [part, *files])
    headers, payload = part
    return [("MIME-Version", "1.0"), *headers], payload


Leaf = tuple[list[tuple[str, str]], bytes]


def _picture_leaf(picture) -> Leaf:
    content_id = checked_header("Content-ID", f"<{picture.cid}>")
    if content_id is None:
        raise HeaderError(f"Invalid Content-ID {picture.cid!r}")
    return [
        ("Content-Type", "image/png"),
        ("Content-Transfer-Encoding", "base64"),
        ("Content-Disposition", 'inline; filename="board.png"'),
        ("Content-ID", content_id),
    ], _picture_base64(picture.png)


PLAIN_FILE_NAME = re.compile(r"[A-Za-z0-9._-]{1,100}")
MIME_TYPE = re.compile(r"[a-z0-9.+-]+/[a-z0-9.+-]+")


def _file_leaf(name: str, mime_type: str, text: str) -> Leaf:
    """A file sent along: our own names and types only, which need no quoting."""
    if not PLAIN_FILE_NAME.fullmatch(name) or not MIME_TYPE.fullmatch(mime_type):
        raise HeaderError(f"Invalid attachment {name!r} ({mime_type!r})")
    return [
        ("Content-Type", mime_type),
        ("Content-Transfer-Encoding", "base64"),
        ("Content-Disposition", f'attachment; filename="{name}"'),
    ], _base64_lines(text.encode("utf-8"))


def _container(subtype: str, parts: list[Leaf]) -> Leaf:
    """multipart/<subtype> of the parts, under a boundary no line of theirs starts with."""
    texts = [
        ("\n".join(fold(name, value) for name, value in headers) + "\n\n").encode("ascii") + payload
        for headers, payload in parts
    ]
    while True:
        boundary = f"==============={secrets.randbelow(10**19):019d}=="
        marker = f"--{boundary}".encode("ascii")
        if not any(marker in text for text in texts):
            break
    payload = marker + b"\n" + (b"\n" + marker + b"\n").join(texts) + b"\n" + marker + b"--\n"
    return [("Content-Type", f'multipart/{subtype}; boundary="{boundary}"')], payload


class OutgoingMessage:
    """A composed mail: its checked header values, in order, and its MIME body part.

    Serialised here rather than by the email package, which would parse every value we
    have just checked again (the most CPU a move cost). The form is the one the email
    package gave with policy.default, so that what a reader parses is unchanged: LF line
    ends (smtplib sends CRLF), header lines folded at 78 characters on whitespace, text
    with 8-bit characters or over-long words as RFC 2047 encoded words.
    """

    def __init__(self, headers, part_headers, payload: bytes):
        self.headers = list(headers) + list(part_headers)
        self.payload = payload

    def __getitem__(self, name: str) -> str | None:
        lowered = name.lower()
        return next((v for n, v in self.headers if n.lower() == lowered), None)

    def items(self):
        return list(self.headers)

    def as_bytes(self) -> bytes:
        lines = [fold(name, value) for name, value in self.headers]
        return ("\n".join(lines) + "\n\n").encode("ascii") + self.payload

    def as_string(self) -> str:
        return self.as_bytes().decode("utf-8", "replace")


FOLD_AT = 78


LONGEST_PLAIN_WORD = 66  # a longer word is written as encoded words, which can be folded


STRUCTURED = frozenset(
    {
        "from",
        "to",
        "reply-to",
        "date",
        "message-id",
        "in-reply-to",
        "references",
        "list-id",
        "list-unsubscribe",
        "list-unsubscribe-post",
    }
)


def fold(name: str, value: str) -> str:
    """One header field, folded on whitespace at FOLD_AT characters where it can be
    (_folded); most of ours are short ASCII and fit one line as they are."""
    fits = len(name) + 2 + len(value) <= FOLD_AT and len(value) <= LONGEST_PLAIN_WORD
    if fits and value.isascii():
        return f"{name}: {value}"
    return _folded(name, value)


def _folded(name: str, value: str) -> str:
    """One header field, folded on whitespace at FOLD_AT characters where it can be.

    Structured values are ASCII already (checked addresses and Message-IDs, a date, the
    server's name as formataddr wrote it). In text, each run of words with 8-bit characters (or
    too long for a line) becomes encoded words, the spaces inside the run encoded with it,
    so that decoding gives back exactly the checked text.
    """
    if name.lower() in STRUCTURED:
        words = value.split(" ")
    else:
        words, run = [], []
        for word in value.split(" "):
            if word.isascii() and len(word) <= LONGEST_PLAIN_WORD:
                if run:
                    words.extend(encoded_words(" ".join(run)))
                    run = []
                words.append(word)
            else:
                run.append(word)
        if run:
            words.extend(encoded_words(" ".join(run)))
    lines, line = [], f"{name}: {words[0]}"
    for word in words[1:]:
        if len(line) + 1 + len(word) > FOLD_AT:
            lines.append(line)
            line = ""
        line += " " + word
    lines.append(line)
    return "\n".join(lines)


def text_part(body: str) -> tuple[list[tuple[str, str]], bytes]:
    """A text-only mail's one part: its headers and encoded body (_text_leaf)."""
    headers, payload = _text_leaf(body, "plain")
    return [*headers, ("MIME-Version", "1.0")], payload


BASE64_LINE = 76  # characters, as the email package writes base64


def _base64_lines(data: bytes) -> bytes:
    return base64mime.body_encode(data, BASE64_LINE).encode("ascii")


@lru_cache(maxsize=8)  # a board's picture goes to each of its players: encoded once
def _picture_base64(png: bytes) -> bytes:
    return _base64_lines(png)


def _text_leaf(text: str, subtype: str) -> Leaf:
    """A text/<subtype> part's headers and encoded body, chosen as the email package's
    set_content chooses (policy.default): 7bit or 8bit when every line fits 78 bytes,
    else the shorter of quoted-printable and base64 on the first ten lines."""
    lines = text.encode("utf-8").splitlines()
    normal = b"\n".join(lines) + b"\n"
    if max(map(len, lines), default=0) <= FOLD_AT:
        cte, payload = ("7bit" if normal.isascii() else "8bit"), normal
    else:
        sniff = b"\n".join(lines[:10]) + b"\n"
        sniff_qp = quoprimime.body_encode(sniff.decode("latin-1"), FOLD_AT)
        if len(sniff_qp) > len(binascii.b2a_base64(sniff)):
            cte, payload = "base64", _base64_lines(normal)
        else:
            cte = "quoted-printable"
            payload = quoprimime.body_encode(normal.decode("latin-1"), FOLD_AT).encode("ascii")
    return [
        ("Content-Type", f'text/{subtype}; charset="utf-8"'),
        ("Content-Transfer-Encoding", cte),
    ], payload
