"""Limits on the shape of a mail, checked on its raw bytes before the email package parses
it: the parser's cost grows much faster than the size for some shapes (encoded words,
parameters, addresses, parts, nesting), so the size limit alone does not bound the work.
Every limit is far above what real mail carries (docs/reliability.md)."""

import re

MAX_HEADER_BLOCK_BYTES = 256 * 1024
MAX_HEADER_BYTES = 64 * 1024  # one header pbm never parses (Received, To, References...)
# The email package's parser of structured headers takes time quadratic in their length
# (comments, quoted pairs, dots, parameters), and recurses on groups and comments: the
# headers pbm does parse are held much shorter.
MAX_SUBJECT_BYTES = 8 * 1024
MAX_READ_HEADER_BYTES = 4 * 1024
MAX_CONTENT_HEADER_BYTES = 2 * 1024  # Content-*: parsed once for every part
MAX_ENCODED_WORDS = 500  # in the whole header block
MAX_PARAMETERS = 32  # in one Content-* header
MAX_ADDRESSES = 100  # in one From, Reply-To, Sender or Return-Path
MAX_SPECIALS = 64  # "(" or ":" in one parsed header: comments and groups nest
MAX_COMMENT_NESTING = 20  # parentheses inside parentheses in one header
MAX_PARTS = 100
MAX_CONTAINERS = 40  # multipart and message/* parts declared: bounds the parser's recursion
MAX_DEPTH = 10

ENCODED_WORD_RE = re.compile(rb"=\?[^?\s]*\?[bBqQ]\?")
BOUNDARY_RE = re.compile(rb'boundary\s*=\s*(?:"([^"\r\n]{1,200})"|([^\s;"]{1,200}))', re.IGNORECASE)
CONTAINER_RE = re.compile(
    rb"^content-type\s*:\s*(?:multipart|message)/", re.IGNORECASE | re.MULTILINE
)
BLANK_LINE_RE = re.compile(rb"\r?\n\r?\n")
HEADER_START_RE = re.compile(rb"^[^\s:]+[ \t]*:", re.MULTILINE)
ADDRESS_HEADERS = (b"from", b"reply-to", b"sender", b"return-path")
# Headers pbm reads through the email package's parser (mailin.py's loop guard and answer).
READ_HEADERS = {
    b"from",
    b"reply-to",
    b"sender",
    b"return-path",
    b"message-id",
    b"auto-submitted",
    b"x-auto-response-suppress",
    b"list-id",
    b"list-unsubscribe",
    b"list-post",
    b"feedback-id",
    b"precedence",
    b"mime-version",
}


class TooComplex(Exception):
    """The mail is within the size limit but beyond a limit on its shape."""


def split_headers(raw: bytes) -> tuple[bytes, bytes]:
    blank = BLANK_LINE_RE.search(raw)
    if blank is None:
        return raw, b""
    return raw[: blank.start()], raw[blank.end() :]


def headers_of(block: bytes) -> list[tuple[bytes, bytes]]:
    """(lowercased name, raw value with its folding) for each header of a block."""
    starts = [m.start() for m in HEADER_START_RE.finditer(block)]
    found = []
    for begin, end in zip(starts, starts[1:] + [len(block)]):
        name, _, value = block[begin:end].partition(b":")
        found.append((name.strip().lower(), value))
    return found


def _comment_depth(value: bytes) -> int:
    depth = deepest = 0
    for byte in value:
        if byte == 0x28:  # (
            depth += 1
            deepest = max(deepest, depth)
        elif byte == 0x29 and depth:  # )
            depth -= 1
    return deepest


def _size_limit(name: bytes) -> int:
    if name == b"subject":
        return MAX_SUBJECT_BYTES
    if name.startswith(b"content-"):
        return MAX_CONTENT_HEADER_BYTES
    if name in READ_HEADERS:
        return MAX_READ_HEADER_BYTES
    return MAX_HEADER_BYTES


def header_problem(name: bytes, value: bytes) -> str | None:
    """Why one header is beyond the limits, or None."""
    label = name.decode("ascii", "replace")
    limit = _size_limit(name)
    if len(value) > limit:
        return f"the {label} header is longer than {limit} bytes"
    if len(ENCODED_WORD_RE.findall(value)) > MAX_ENCODED_WORDS:
        return f"the {label} header has more than {MAX_ENCODED_WORDS} encoded words"
    if name.startswith(b"content-") and value.count(b";") > MAX_PARAMETERS:
        return f"the {label} header has more than {MAX_PARAMETERS} parameters"
    if name in ADDRESS_HEADERS and max(value.count(b"@"), value.count(b",")) > MAX_ADDRESSES:
        return f"the {label} header has more than {MAX_ADDRESSES} addresses"
    if (
        name != b"subject"
        and limit < MAX_HEADER_BYTES
        and max(value.count(b"("), value.count(b":")) > MAX_SPECIALS
    ):
        return f"the {label} header has more than {MAX_SPECIALS} comments or groups"
    if b"(" in value and _comment_depth(value) > MAX_COMMENT_NESTING:
        return f"the {label} header nests comments more than {MAX_COMMENT_NESTING} deep"
    return None


def check_raw(raw: bytes) -> None:
    """Raise TooComplex, naming the first limit the raw message is beyond."""
    block, body = split_headers(raw)
    if len(block) > MAX_HEADER_BLOCK_BYTES:
        raise TooComplex(f"its header is longer than {MAX_HEADER_BLOCK_BYTES} bytes")
    if len(ENCODED_WORD_RE.findall(block)) > MAX_ENCODED_WORDS:
        raise TooComplex(f"its header has more than {MAX_ENCODED_WORDS} encoded words")
    for name, value in headers_of(block):
        problem = header_problem(name, value)
        if problem:
            raise TooComplex(problem)
    if not body:
        return
    containers = len(CONTAINER_RE.findall(raw))
    if containers > MAX_CONTAINERS:
        raise TooComplex(f"it has more than {MAX_CONTAINERS} multipart or message parts")
    boundaries = {m.group(1) or m.group(2) for m in BOUNDARY_RE.finditer(raw)}
    parts = sum(raw.count(b"\n--" + boundary) for boundary in boundaries)
    if parts > MAX_PARTS:
        raise TooComplex(f"it has more than {MAX_PARTS} MIME parts")
    # Part headers are parsed too: each must keep the limits of a header.
    for boundary in boundaries:
        for piece in raw.split(b"\n--" + boundary)[1:]:
            part_block, _ = split_headers(piece.partition(b"\n")[2])
            for name, value in headers_of(part_block[: MAX_HEADER_BLOCK_BYTES + 1]):
                problem = header_problem(name, value)
                if problem:
                    raise TooComplex("a part: " + problem)


def check_parsed(message) -> None:
    """After the parse (bounded by check_raw): the exact depth and number of parts, walked
    without recursion."""
    stack, parts = [(message, 1)], 0
    while stack:
        part, depth = stack.pop()
        parts += 1
        if depth > MAX_DEPTH:
            raise TooComplex(f"its parts are nested more than {MAX_DEPTH} deep")
        if parts > MAX_PARTS:
            raise TooComplex(f"it has more than {MAX_PARTS} MIME parts")
        payload = part.get_payload()
        if isinstance(payload, list):
            stack.extend((child, depth + 1) for child in payload)
