"""Mail in (docs/spec/server.md §4): one RFC 822 message from an MTA, through the dispatcher.

Exit codes (pbm/intake.py): 0 processed, answered, dropped by the loop guard or a duplicate;
75 (EX_TEMPFAIL) when the MTA should try again later.
"""

import hashlib
import logging
import re
import sys
from dataclasses import replace
from email.parser import BytesHeaderParser, BytesParser
from email.policy import EmailPolicy
from email.utils import getaddresses
from functools import lru_cache

from .bounds import (
    MAX_HEADER_BLOCK_BYTES,
    READ_HEADERS,
    TooComplex,
    check_parsed,
    check_raw,
    header_problem,
    headers_of,
    split_headers,
)
from .headers import MESSAGE_ID_RE, HeaderError, checked_address, message_id_token
from .ownwords import after_greetings, own_lines
from .request import Request
from .servicemail import service_mail

MAX_COMMENT_LINES = 100
MAX_COMMENT_CHARS = 8000
READ_CHUNK = 65536

log = logging.getLogger("pbm.mailin")


class ParseOncePolicy(EmailPolicy):
    """policy.default, but a header value is parsed once: the email package parses it again
    on every access, and reading one mail asks for Content-Type alone nine times."""

    def header_fetch_parse(self, name, value):
        if hasattr(value, "name"):
            return value
        unfolded = value.replace("\r", "").replace("\n", "")  # as EmailPolicy does
        return _parsed_header(self.header_factory, name, unfolded)


@lru_cache(maxsize=256)
def _parsed_header(factory, name: str, value: str):
    # Parsed headers are immutable strings with their defects: safe to share.
    return factory(name, value)


READING = ParseOncePolicy()


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
        # deferred: start-up speed of the mail pipe; only HTML-only mails need the parser
        from .htmltext import html_to_text

        text = html_to_text(text)
    return text


def normalize_reply_line(line: str) -> str:
    """A reply's command line as the grammar reads a Subject: one line, printable, and the
    backquotes of our example (`c7-e3`) dropped, for those who copy them."""
    from .grammar import normalize

    return normalize(line).replace("`", "").strip()


def reply_parts(own: list[str]) -> tuple[str, str]:
    """A reply's own lines as (its command: the first line once greetings are set aside,
    its comment: the rest) (docs/spec/server.md §4.3, §11.3)."""
    lines = after_greetings(own)
    first = normalize_reply_line(lines[0]) if lines else ""
    rest = lines[1:]
    while rest and not rest[0].strip():
        rest.pop(0)
    return first, comment_from(rest)


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


@lru_cache(maxsize=64)
def from_addresses(value: str) -> tuple[tuple[str, str], ...]:
    """The (name, address) pairs of a From header's value: the loop guard, the origin and
    the author each ask for them, and three parses were an eighth of reading a mail."""
    return tuple(getaddresses([value]))


def origin_address(message, envelope_sender: str | None) -> str | None:
    """The mail's origin (docs/spec/server.md §4.2): the one address of its From; the
    envelope sender only where From is unusable (absent, several addresses, not a plain ASCII
    addr-spec, headers.checked_address). Reply-To decides nothing: whoever writes a mail
    chooses it freely, and neither SPF, DKIM nor DMARC checks it."""
    addresses = from_addresses(_header(message, "From"))
    if len(addresses) == 1:
        try:
            return checked_address(addresses[0][1] or "")
        except HeaderError:
            pass
    try:
        return checked_address((envelope_sender or "").strip().strip("<>").strip())
    except HeaderError:
        return None


# Only the MTA's own verdict is read, and only so much: authres takes about 70 us a byte,
# and the headers an MTA adds (OpenDKIM, SPF, OpenDMARC; or rspamd's one) are far shorter.
MAX_AUTH_RESULTS_BYTES = 2048
MAX_AUTH_RESULTS_HEADERS = 20


@lru_cache(maxsize=1)
def _auth_results_parser():
    # deferred: start-up speed of the mail pipe; only a home with [mail] authserv_id needs it
    import authres
    import authres.dmarc

    return authres.FeatureContext(authres.dmarc)


def _auth_results_values(message) -> list[str]:
    """The Authentication-Results values, topmost first, unfolded, at most a few."""
    values = []
    for name, value in message.raw_items():
        if name.lower() == "authentication-results":
            values.append(re.sub(r"\r?\n[ \t]", " ", str(value)).strip())
            if len(values) == MAX_AUTH_RESULTS_HEADERS:
                break
    return values


def dmarc_failed(config, message, origin: str) -> bool:
    """Whether the MTA in front, named by `[mail] authserv_id`, found that the mail fails
    DMARC for the origin's domain (docs/spec/server.md §7). The topmost header of that id
    with a DMARC result decides: the MTA adds its own (one per milter) above what the mail
    came with, and anyone can write a header of any id, but a forged verdict below the
    MTA's is never read, and one read where the MTA gave none can only refuse its writer.
    A header that cannot be parsed is no verdict (logged), nor is a result for another
    domain; past MAX_AUTH_RESULTS_BYTES of headers of that id nothing more is read."""
    trusted = config.get("mail.authserv_id").lower()
    if not trusted:
        return False
    domain = origin.rpartition("@")[2].lower()
    budget = MAX_AUTH_RESULTS_BYTES
    for value in _auth_results_values(message):
        if trusted not in value.lower():
            continue  # cannot be of the trusted id: not worth authres's time
        budget -= len(value)
        if budget < 0:
            log.info(
                "Authentication-Results of %s beyond %d bytes not read",
                trusted,
                MAX_AUTH_RESULTS_BYTES,
            )
            return False
        try:
            header = _auth_results_parser().parse_value(value)
        except Exception as error:  # hostile input: no verdict, never a crash of the pipe
            # The parser quotes the hostile header, undecodable bytes (surrogates) included.
            shown = str(error).encode("utf-8", "backslashreplace").decode("utf-8")
            log.info("an Authentication-Results header not understood: %s", shown)
            continue
        verdicts = [r for r in header.results if r.method == "dmarc"]
        if header.authserv_id != trusted or not verdicts:
            continue
        return any(
            str(result.result).lower() == "fail"
            and str(getattr(result, "header_from", None) or domain).lower() == domain
            for result in verdicts
        )
    return False


def author(message) -> tuple[str, str]:
    """(display name, address) of the From header, each "" when absent."""
    for name, address in from_addresses(_header(message, "From")):
        return name, address
    return "", ""


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
    if any(a.lower() == own for _, a in from_addresses(_header(message, "From"))):
        return "our own mail came back"
    return None


def message_id_of(message) -> str | None:
    """The Message-ID as `<token>`, read from the raw header before any decoding; a token
    that is not plain printable ASCII (headers.message_id_token) counts as none."""
    for name, value in message.raw_items():
        if name.lower() == "message-id":
            match = MESSAGE_ID_RE.search(re.sub(r"\r?\n[ \t]", " ", str(value)))
            return message_id_token(match.group(0)) if match else None
    return None


def message_key(message_id: str | None, raw: bytes) -> str:
    """The inbox key against duplicates: the Message-ID's token, else the mail's hash."""
    return message_id[1:-1] if message_id else "sha256:" + hashlib.sha256(raw).hexdigest()


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


# What the loop guard and the answer need, when the rest of a mail is beyond reading.
ANSWER_HEADERS = READ_HEADERS | {b"subject", b"content-type", b"authentication-results"}


def answer_headers(raw: bytes) -> bytes:
    """The headers that decide whether and where to answer, each only if within the limits:
    a From beyond them is unusable, and the origin is then the envelope sender."""
    block, _ = split_headers(raw)
    kept = [
        name + b":" + value
        for name, value in headers_of(block[:MAX_HEADER_BLOCK_BYTES])
        if name in ANSWER_HEADERS and not header_problem(name, value)
    ]
    return b"".join(line if line.endswith(b"\n") else line + b"\n" for line in kept) + b"\n"


def parse_bounded(raw: bytes, headers_only: bool):
    """(message, problem): the parsed message, or its answerable headers and why the rest
    cannot be read (beyond a limit of bounds.py)."""
    try:
        check_raw(raw)
        if headers_only:
            return BytesHeaderParser(policy=READING).parsebytes(raw), None
        message = BytesParser(policy=READING).parsebytes(raw)
        check_parsed(message)
        return message, None
    except TooComplex as error:
        problem = str(error)
    except RecursionError:
        problem = "its parts are nested too deeply"
    return BytesHeaderParser(policy=READING).parsebytes(answer_headers(raw)), problem


def recipients_from_environment(environ) -> list[str]:
    """The address a mail came to, with its +token, as Postfix's pipe(8) and local(8) give
    it to the command they run."""
    return [environ[name] for name in ("ORIGINAL_RECIPIENT", "RECIPIENT") if environ.get(name)]


def written_recipients(raw: bytes) -> list[str]:
    """For a mail handed over as a file, with no envelope (`pbm receive`): the addresses it
    says it was delivered or addressed to (Delivered-To, To, Cc), as `sendmail -t` takes
    them from a message."""
    message, _ = parse_bounded(raw, headers_only=True)
    found = []
    for name in ("Delivered-To", "To", "Cc"):
        try:
            values = [str(value) for value in message.get_all(name) or []]
        except Exception:  # a header too broken to decode names no recipient
            continue
        found += [address for _, address in getaddresses(values) if address]
    return found


def delivered_to(message, envelope_recipients) -> list[str]:
    """The addresses the mail was delivered to: the envelope recipients (the pipe's
    $ORIGINAL_RECIPIENT or $RECIPIENT, `pbm serve`'s RCPT TO), else the Delivered-To
    headers the MTA added; ten at most."""
    candidates = list(envelope_recipients or [])
    if not candidates:
        try:
            candidates = [str(v) for v in message.get_all("Delivered-To") or []]
        except Exception:  # a header too broken to decode names no recipient
            candidates = []
    return candidates[:10]


def reply_token(config, message, envelope_recipients) -> str | None:
    """The reply token of the address the mail was delivered to (delivered_to)."""
    plus_addressed = [r for r in delivered_to(message, envelope_recipients) if "+" in r]
    if not plus_addressed:
        return None  # the plain address: a command mail need not load the tokens' module
    from .replies import token_of_recipient

    for recipient in plus_addressed:
        token = token_of_recipient(config, recipient)
        if token is not None:
            return token
    return None


MAX_ANSWERED_IDS = 20


def answered_ids(config, message) -> tuple[str, ...]:
    """The Message-IDs of our own mails that a mail answers, from In-Reply-To and
    References (read raw, before any decoding): a reply that came to the plain address
    finds its board by them (grants.thread_reply). Only ids of the server's own domain."""
    domain = "@" + config.server_domain.lower() + ">"
    found: list[str] = []
    for name, value in message.raw_items():
        if name.lower() not in ("in-reply-to", "references"):
            continue
        for match in MESSAGE_ID_RE.finditer(str(value)):
            token = message_id_token(match.group(0))
            if token and token.lower().endswith(domain) and token not in found:
                found.append(token)
    return tuple(found[-MAX_ANSWERED_IDS:])


def read_message(
    config, raw: bytes, size: int, envelope_sender: str | None, envelope_recipients=None
):
    """(request, refusal) for one message: (None, None) when it must get no answer, a
    refusal text when it is answered without running (too large, beyond reading). A mail
    to a reply address (docs/spec/server.md §11.3) carries its command in the body's first
    line; its Subject is ignored."""
    limit = config.number("limits.max_message_bytes")
    too_large = size > limit
    message, problem = parse_bounded(raw, headers_only=too_large)
    for defect in getattr(message, "defects", []):
        log.info("message defect: %s", defect)
    if envelope_sender is None and message.get("Return-Path") is not None:
        envelope_sender = _header(message, "Return-Path")
    reason = loop_reason(message, envelope_sender, config)
    service = service_mail(
        config, message, raw, delivered_to(message, envelope_recipients), not (too_large or problem)
    )
    if service is not None:
        # A bounce or an unsubscribe (docs/spec/server.md §5.9, §5.10): acted on whatever
        # the loop guard says, answered only where it would answer a command. An unsubscribe
        # is a stranger's where the MTA says DMARC failed: its token is then not taken.
        key = message_key(message_id_of(message), raw)
        origin = origin_address(message, envelope_sender) if service.answered else None
        if origin is not None and dmarc_failed(config, message, origin):
            if reason:  # a stranger's, and the loop guard answers nothing: not even that
                log.info("dropped without answer: %s; DMARC failed for %s", reason, origin)
                return None, None
            return Request(text="", sender=origin, key=key, stranger=True), None
        sender = None if reason else origin
        return Request(text="", sender=sender, key=key, service=service), None
    if reason:
        log.info("dropped without answer: %s", reason)
        return None, None
    origin = origin_address(message, envelope_sender)
    if origin is None:
        log.info("dropped: no address to answer%s", f" ({problem})" if problem else "")
        return None, None
    stranger = dmarc_failed(config, message, origin)
    if stranger:
        log.info("DMARC failed for %s: the mail is a stranger's", origin)
    message_id = message_id_of(message)
    key = message_key(message_id, raw)
    subject = _header(message, "Subject")
    if too_large or problem:
        if too_large:
            refusal = f"Message too large (limit {limit} bytes); nothing was done"
        else:
            log.info("could not read a mail: %s", problem)
            refusal = f"Could not read your mail: {problem}; nothing was done"
        request = Request(text=subject, sender=origin, key=key, message_id=message_id)
        return replace(request, stranger=stranger), refusal
    token = reply_token(config, message, envelope_recipients)
    name, address = author(message)
    if token is not None:
        own = own_lines(body_text(message), name, address)
        first, comment = reply_parts(own)
        return Request(
            text=first,
            body=comment,
            sender=origin,
            key=key,
            message_id=message_id,
            body_lines=own,
            token=token,
            subject=subject,
            stranger=stranger,
        ), None
    request = build_request(subject, body_text(message), origin, key, message_id, name, address)
    return replace(request, stranger=stranger, replied_to=answered_ids(config, message)), None


def build_request(
    text: str,
    body: str,
    sender: str | None,
    key: str | None = None,
    message_id: str | None = None,
    author_name: str = "",
    author_address: str = "",
):
    """The one way a command's words, body and origin become a Request (the mail, the
    command line, the tests): the body is stripped to the sender's own words (its author's
    name and address tell a signature without `-- `, ownwords.own_lines)."""
    lines = own_lines(body, author_name, author_address)
    return Request(
        text=text,
        body=comment_from(lines),
        sender=sender,
        key=key,
        message_id=message_id,
        body_lines=lines,
    )


def start_password_check(config, request):
    """Begin the argon2 check of the command's password before the rest of the server is
    imported (see security.EarlyCheck); None when the words name no password, or when the
    command will not get as far as its password (security.password_check_needed)."""
    # deferred: the argon2 check starts before the rest of pbm is imported; these are the
    # least it needs (the command table says where passwords stand)
    from . import commands  # noqa: F401
    from .grammar import password_of
    from .security import EarlyCheck, password_check_needed
    from .store import Store

    pair = password_of(request.text)
    if pair is None or not config.db_path.exists():
        return None
    try:
        store = Store.open(config.db_path)
        try:
            if not password_check_needed(store, config, request, pair[0]):
                return None
            stored = store.users.password_hash(pair[0])
        finally:
            store.close()
    except Exception:  # an unready database is for open_server to report; this only saves time
        return None
    return EarlyCheck(pair[0], pair[1], stored)


def setup_logging(config):
    from .private import create_private, make_folders

    log_dir = config.home / "log"
    try:
        make_folders(log_dir)
        create_private(log_dir / "pbm.log")
        # A hostile mail's text reaches some lines: a byte UTF-8 cannot write must not
        # cost the whole line.
        handler = logging.FileHandler(
            log_dir / "pbm.log", encoding="utf-8", errors="backslashreplace"
        )
    except OSError:
        handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(
        logging.Formatter("%(asctime)s %(process)d %(name)s %(levelname)s %(message)s")
    )
    root = logging.getLogger("pbm")
    if not root.handlers:
        root.addHandler(handler)
        root.setLevel(logging.INFO)
