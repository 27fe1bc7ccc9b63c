"""Mail in (server spec 4): one RFC 822 message from an MTA, through the dispatcher.

Exit codes: 0 processed, answered, dropped by the loop guard or a duplicate;
75 (EX_TEMPFAIL) when the MTA should try again later.
"""

import hashlib
import logging
import os
import re
import sys
from email import policy
from email.parser import BytesHeaderParser, BytesParser
from email.utils import getaddresses

EX_OK = 0
EX_TEMPFAIL = 75
MAX_COMMENT_LINES = 100
MAX_COMMENT_CHARS = 8000
READ_CHUNK = 65536

log = logging.getLogger("pbm.mailin")

MESSAGE_ID_RE = re.compile(r"<([^<>\s]{1,250})>")
CONTROL_RE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
ADDR_SPEC_RE = re.compile(r"[^\s@<>()\[\],;:\"]+@[A-Za-z0-9.-]+")
TITLE_RE = re.compile(
    r"^(?:(?:Summary|Preview|Replay|Submit|Nag|Subscription Summary|Notification) of \S+ Board"
    r"|A new \S+ board \(\d+\) has been started\.)"
)
FORWARD_MARKERS = (
    "-----original message-----",
    "begin forwarded message:",
    "---------- forwarded message",
)


def _part_text(part) -> str:
    try:
        return part.get_content()
    except (LookupError, UnicodeError, AssertionError, KeyError):
        payload = part.get_payload(decode=True) or b""
        return payload.decode("utf-8", errors="replace")


def body_text(message) -> str:
    """The plain text of the message: the text/plain part, else the HTML part as text."""
    try:
        part = message.get_body(preferencelist=("plain", "html"))
    except (KeyError, AttributeError, IndexError):
        part = None
    if part is None:
        return ""
    text = _part_text(part)
    if not isinstance(text, str):
        return ""
    if part.get_content_subtype() == "html":
        from .htmltext import html_to_text

        text = html_to_text(text)
    return text


def _is_reply_header(lines, i) -> bool:
    line = lines[i].strip()
    lowered = line.lower()
    if lowered.startswith("on ") and lowered.endswith("wrote:"):
        return True
    if lowered.startswith("on ") and i + 1 < len(lines) and lines[i + 1].strip().lower().endswith("wrote:"):
        return True
    if any(lowered.startswith(marker) for marker in FORWARD_MARKERS):
        return True
    if lowered.startswith("from:"):
        following = [l.strip().lower() for l in lines[i + 1 : i + 4]]
        return any(l.startswith(("sent:", "date:", "to:")) for l in following)
    return False


def strip_body(text: str) -> list[str]:
    """The sender's own words: cut at signatures, quoted replies and our own mail text."""
    text = CONTROL_RE.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))
    lines = [line.rstrip() for line in text.split("\n")]
    kept = []
    for i, line in enumerate(lines):
        trimmed = line.strip()
        if trimmed == "--" or re.fullmatch(r"_{10,}", trimmed) or trimmed == "*" * 60:
            break
        if _is_reply_header(lines, i) or TITLE_RE.match(trimmed):
            break
        if trimmed.startswith(">"):
            continue
        kept.append(line)
    while kept and not kept[0].strip():
        kept.pop(0)
    while kept and not kept[-1].strip():
        kept.pop()
    return kept


def comment_from(lines: list[str]) -> str:
    text = "\n".join(lines[:MAX_COMMENT_LINES])
    if len(lines) > MAX_COMMENT_LINES or len(text) > MAX_COMMENT_CHARS:
        return text[:MAX_COMMENT_CHARS].rstrip() + "\n[comment truncated]"
    return text


def _header(message, name) -> str:
    try:
        value = message.get(name)
    except Exception:  # a header too broken to decode counts as absent
        return ""
    return "" if value is None else str(value)


def reply_address(message) -> str | None:
    """The first Reply-To address, else From; only a bare addr-spec is accepted."""
    for name in ("Reply-To", "From"):
        for _, address in getaddresses([_header(message, name)]):
            if ADDR_SPEC_RE.fullmatch(address or ""):
                return address
    return None


def loop_reason(message, envelope_sender, config) -> str | None:
    """Why this message must get no answer (RFC 3834), or None."""
    if envelope_sender is not None:
        bare = envelope_sender.strip().strip("<>").strip()
        if not bare or bare.lower().startswith("mailer-daemon"):
            return "null or MAILER-DAEMON envelope sender"
    if _header(message, "Return-Path").strip() == "<>":
        return "null Return-Path"
    auto = _header(message, "Auto-Submitted").strip().lower()
    if auto and auto != "no":
        return f"Auto-Submitted: {auto}"
    suppress = {w.strip().lower() for w in _header(message, "X-Auto-Response-Suppress").split(",")}
    if suppress & {"all", "dr", "autoreply"}:
        return "X-Auto-Response-Suppress"
    for name in ("List-Id", "List-Unsubscribe", "List-Post", "Feedback-ID"):
        if message.get(name) is not None:
            return f"{name} header"
    if _header(message, "Precedence").strip().lower() in ("bulk", "list", "junk"):
        return "Precedence"
    if message.get_content_type() == "multipart/report":
        return "delivery report"
    own = config.get("server.address").lower()
    if any(a.lower() == own for _, a in getaddresses([_header(message, "From")])):
        return "our own mail came back"
    return None


def message_id_of(message) -> str | None:
    """The Message-ID's <token> only: nothing else of the header travels on."""
    match = MESSAGE_ID_RE.search(_header(message, "Message-ID"))
    return match.group(1) if match else None


def message_key(message, raw: bytes) -> str:
    return message_id_of(message) or "sha256:" + hashlib.sha256(raw).hexdigest()


def read_limited(stream, limit: int):
    """Read the whole stream, keeping at most limit + 1 bytes: (bytes kept, total size)."""
    kept, total = [], 0
    while True:
        chunk = stream.read(READ_CHUNK)
        if not chunk:
            break
        if total <= limit:
            kept.append(chunk[: limit + 1 - total])
        total += len(chunk)
    return b"".join(kept), total


def read_message(config, raw: bytes, size: int, envelope_sender: str | None):
    """(request, refusal) for one message: (None, None) when it must get no answer, a
    refusal text when it is answered without running (too large)."""
    from .request import Request

    limit = config.number("limits.max_message_bytes")
    too_large = size > limit
    if too_large:
        message = BytesHeaderParser(policy=policy.default).parsebytes(raw)
    else:
        message = BytesParser(policy=policy.default).parsebytes(raw)
    for defect in getattr(message, "defects", []):
        log.info("message defect: %s", defect)
    if envelope_sender is None and message.get("Return-Path") is not None:
        envelope_sender = _header(message, "Return-Path")
    reason = loop_reason(message, envelope_sender, config)
    if reason:
        log.info("dropped without answer: %s", reason)
        return None, None
    sender = reply_address(message)
    if sender is None:
        log.info("dropped: no address to answer")
        return None, None
    key = message_key(message, raw)
    subject = _header(message, "Subject")
    message_id = f"<{message_id_of(message)}>" if message_id_of(message) else None
    if too_large:
        refusal = f"Message too large (limit {limit} bytes); nothing was done"
        return Request(text=subject, sender=sender, key=key, message_id=message_id), refusal
    lines = strip_body(body_text(message))
    request = Request(
        text=subject,
        body=comment_from(lines),
        sender=sender,
        key=key,
        message_id=message_id,
        body_lines=lines,
    )
    return request, None


def handle(server, raw: bytes, size: int, envelope_sender: str | None, early=None):
    """Run one message through the pipeline; returns the dispatcher's result or None."""
    request, refusal = read_message(server.config, raw, size, envelope_sender)
    if request is None:
        return None
    if refusal is not None:
        return server.refuse_message(request, refusal)
    return server.execute(request, early=early)


def start_password_check(config, text: str):
    """Begin the argon2 check of the command's password before the rest of the server is
    imported (see security.EarlyCheck); None when the words name no password."""
    from . import commands  # noqa: F401  (the command table says where passwords stand)
    from .grammar import password_of
    from .security import EarlyCheck
    from .store import Store

    pair = password_of(text)
    if pair is None or not config.db_path.exists():
        return None
    try:
        store = Store.open(config.db_path)
        try:
            stored = store.users.password_hash(pair[0])
        finally:
            store.close()
    except Exception:  # an unready database is for open_server to report; this only saves time
        return None
    return EarlyCheck(pair[0], pair[1], stored)


def setup_logging(config):
    log_dir = config.home / "log"
    try:
        log_dir.mkdir(parents=True, exist_ok=True)
        handler = logging.FileHandler(log_dir / "pbm.log", encoding="utf-8")
    except OSError:
        handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(process)d %(name)s %(levelname)s %(message)s"))
    root = logging.getLogger("pbm")
    if not root.handlers:
        root.addHandler(handler)
        root.setLevel(logging.INFO)


def main(argv=None) -> int:
    from .config import Config

    config = Config.load()
    setup_logging(config)
    try:
        raw, size = read_limited(sys.stdin.buffer, config.number("limits.max_message_bytes"))
        request, refusal = read_message(config, raw, size, os.environ.get("SENDER"))
        if request is None:
            return EX_OK
        early = start_password_check(config, request.text) if refusal is None else None
        from .dispatch import open_server

        with open_server(config) as server:
            if refusal is not None:
                server.refuse_message(request, refusal)
            else:
                server.execute(request, early=early)
    except Exception as error:
        from .dispatch import is_transient

        if is_transient(error):
            log.warning("temporary failure, the MTA will retry: %s", error)
            return EX_TEMPFAIL
        # Retrying cannot help a message our own code chokes on; keep it in the log.
        log.exception("unexpected failure outside a command")
    return EX_OK
