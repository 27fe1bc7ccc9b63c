"""Outgoing mail: messages composed into the outbox inside the command's transaction,
delivered after commit into the Maildir $PBM_HOME/outbox or through an SMTP relay."""

import binascii
import logging
import os
import re
import secrets
import textwrap
from dataclasses import dataclass, field
from datetime import timedelta
from email import quoprimime
from email.message import EmailMessage
from email.utils import format_datetime, make_msgid
from functools import lru_cache

from .clock import now, parse_stamp, stamp
from .headers import HeaderError, checked_header, encoded_words, has_control
from .htmlmail import HtmlPart
from .htmlmail import attach as attach_html
from .private import make_folders, private_opener
from .replica import ship

log = logging.getLogger("pbm.mailout")

LINE_WIDTH = 76
RETRY_DELAYS = (
    timedelta(minutes=1),
    timedelta(minutes=5),
    timedelta(minutes=30),
    timedelta(hours=2),
    timedelta(hours=6),
)
RETRY_LATER = timedelta(hours=12)
GIVE_UP_AFTER = timedelta(days=5)
STALE_CLAIM = timedelta(minutes=10)


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
    lines = []
    for line in text.splitlines():
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


def compose(config, mail: Mail, in_reply_to: str | None = None) -> "OutgoingMessage":
    """The message for one Mail; every header value passes headers.checked_header, once."""
    headers = {
        "From": (config.get("server.name"), config.get("server.address")),
        "To": list(mail.to),
        "Subject": mail.subject,
        "Date": format_datetime(now()),
        "Message-ID": make_msgid(domain=config.server_domain),
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
    """The MIME part of a mail with an HTML alternative or attached files: built by the email
    package, whose headers here are only its own MIME ones (no value of ours to parse again)."""
    part = EmailMessage()
    part.set_content(body, charset="utf-8")
    if mail.html is not None:
        attach_html(part, mail.html)
    for file_name, mime_type, text in mail.attachments:
        maintype, subtype = mime_type.split("/")
        part.add_attachment(
            text.encode("utf-8"), maintype=maintype, subtype=subtype, filename=file_name
        )
    _, _, payload = part.as_bytes().partition(b"\n\n")
    return [(name, str(value)) for name, value in part.items()], payload


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
    """The text/plain part's headers and encoded body, chosen as the email package's
    set_content chooses (policy.default): 7bit or 8bit when every line fits 78 bytes,
    else the shorter of quoted-printable and base64 on the first ten lines."""
    lines = body.encode("utf-8").splitlines()
    normal = b"\n".join(lines) + b"\n"
    if max((len(line) for line in lines), default=0) <= FOLD_AT:
        cte, payload = ("7bit" if normal.isascii() else "8bit"), normal
    else:
        sniff = b"\n".join(lines[:10]) + b"\n"
        sniff_qp = quoprimime.body_encode(sniff.decode("latin-1"), FOLD_AT)
        if len(sniff_qp) > len(binascii.b2a_base64(sniff)):
            cte, step = "base64", FOLD_AT // 4 * 3
            payload = b"".join(
                binascii.b2a_base64(normal[i : i + step]) for i in range(0, len(normal), step)
            )
        else:
            cte = "quoted-printable"
            payload = quoprimime.body_encode(normal.decode("latin-1"), FOLD_AT).encode("ascii")
    return [
        ("Content-Type", 'text/plain; charset="utf-8"'),
        ("Content-Transfer-Encoding", cte),
        ("MIME-Version", "1.0"),
    ], payload


def envelope_sender(config, mail: Mail) -> str | None:
    """The envelope sender (docs/spec/server.md §5.2): `server.bounce_address` when set;
    else the null sender for a direct answer to a command (RFC 3834), and None for the mail
    we start, which gets a VERP sender per recipient at delivery (bounces.verp_sender)."""
    fixed = config.get("server.bounce_address")
    if fixed:
        return fixed
    return "" if mail.to_sender else None


def queue(store, config, mail: Mail, in_reply_to=None, inbox_key=None) -> int:
    """Store the rendered message as an outbox row, in the caller's transaction."""
    return queue_measured(store, config, mail, in_reply_to, inbox_key)[0]


def queue_measured(store, config, mail: Mail, in_reply_to=None, inbox_key=None):
    """(outbox row id, bytes of the message): queue(), and what the message costs to send."""
    message = compose(config, mail, in_reply_to)
    data = message.as_bytes()
    row_id = store.outbox.add(
        created_at=stamp(now()),
        kind=mail.kind,
        recipients=list(mail.to),
        envelope_from=envelope_sender(config, mail),
        message_id=message["Message-ID"],
        message=data,
        inbox_key=inbox_key,
        userid=mail.userid,
    )
    return row_id, len(data)


class TransientDeliveryError(Exception):
    pass


class PermanentDeliveryError(Exception):
    pass


def write_maildir(config, name: str, message: bytes) -> None:
    """One file into tmp/, synced, then renamed into new/: a reader never sees half a mail."""
    temporary = _maildir(config) / "tmp" / name
    with open(temporary, "wb", opener=private_opener) as handle:
        handle.write(message)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, config.outbox_dir / "new" / name)


def _maildir(config):
    base = config.outbox_dir
    for sub in ("tmp", "new", "cur"):
        make_folders(base / sub)
    return base


def maildir_name(row_id: int) -> str:
    """An outbox row's file name: made from its id only, so a rewrite replaces it."""
    return f"{int(row_id):010d}.pbm"


MAILDIR_NAME = re.compile(r"[0-9]{10}\.pbm")


@dataclass
class MaildirBatch:
    """Outbox rows on their way into the Maildir, written into tmp/ but not yet synced."""

    written: list = field(default_factory=list)  # in tmp/: sync, then publish
    present: list = field(default_factory=list)  # in new/ or cur/ before a crash: only marked
    failed: list = field(default_factory=list)  # (row, error)

    def paths(self, config) -> list:
        return [config.outbox_dir / "tmp" / maildir_name(row.id) for row in self.written]

    @property
    def delivered(self) -> list:
        return self.written + self.present


def stage_maildir(config, rows) -> MaildirBatch:
    """Write the rows into tmp/ without a sync: sync_together makes the whole batch
    durable at once (with the commit, in `pbm serve`), or fsync_each, then
    publish_maildir renames it into new/. A row taken over from a claimer that died (claim_many gives its status as
    it found it) is not written again if its file got into new/ or cur/ before the crash:
    the crash came between the rename and the sent mark, and a second file would be a
    second delivery."""
    base = _maildir(config)
    batch = MaildirBatch()
    for row in rows:
        name = maildir_name(row.id)
        if row.status == "sending" and _in_maildir(base, name):
            batch.present.append(row)
            continue
        try:
            with open(base / "tmp" / name, "wb", opener=private_opener) as handle:
                handle.write(row.message)
        except OSError as error:
            batch.failed.append((row, str(error)))
        else:
            batch.written.append(row)
    return batch


def _in_maildir(base, name: str) -> bool:
    """Delivered: still in new/, or moved into cur/ by its reader (with its `:2,` flags)."""
    if (base / "new" / name).exists() or (base / "cur" / name).exists():
        return True
    return any(base.joinpath("cur").glob(name + ":*"))


def publish_maildir(config, batch: MaildirBatch) -> None:
    """Rename the synced files into new/; one that cannot be renamed is written again
    later (its row is marked for retry by the caller, from batch.failed)."""
    base = config.outbox_dir
    published = []
    for row in batch.written:
        name = maildir_name(row.id)
        try:
            os.replace(base / "tmp" / name, base / "new" / name)
        except OSError as error:
            batch.failed.append((row, str(error)))
        else:
            published.append(row)
    batch.written = published


def recover_maildir(store, config) -> int:
    """A file left in tmp/ whose row is marked sent was synced there, and a crash lost its
    rename (a rename becomes durable with the next sync, the sent mark may come first):
    rename it into new/ now. Returns how many."""
    folder = config.outbox_dir / "tmp"
    if not folder.is_dir():
        return 0
    names = {int(p.name[:10]): p.name for p in folder.iterdir() if MAILDIR_NAME.fullmatch(p.name)}
    moved = 0
    for row_id in store.outbox.sent_among(sorted(names)):
        name = names[row_id]
        try:
            os.replace(folder / name, config.outbox_dir / "new" / name)
            moved += 1
        except FileNotFoundError:
            pass  # renamed meanwhile by the process that wrote it
    return moved


def sync_together(paths) -> None:
    """Make files written without a sync durable with as few syncs as the system allows:
    one syncfs(2) per file system they are on (Linux: it gives the guarantee of an fsync
    of every file there, and flushes whatever else is dirty there), else one sync(2).

    Never through a descriptor of the file itself: the database is among them, and closing
    any descriptor of it drops every POSIX lock SQLite holds on it in this process (the
    readers' and the writer's), which a concurrent reader then sees as a disk I/O error.
    A descriptor of the file's folder names the same file system and holds no lock."""
    syncfs = _syncfs()
    if syncfs is None:
        os.sync()
        return
    done = set()
    for path in paths:
        folder = os.path.dirname(os.path.abspath(path))
        device = os.stat(folder).st_dev
        if device in done:
            continue
        done.add(device)
        descriptor = os.open(folder, os.O_RDONLY)
        try:
            if syncfs(descriptor) != 0:
                number = _errno()
                raise OSError(number, f"syncfs: {os.strerror(number)}", str(path))
        finally:
            os.close(descriptor)


def fsync_each(paths) -> None:
    """One fsync a file: for the few files of one mail's delivery, where loading syncfs
    (ctypes) would cost the mail pipe more than the fsync it saves."""
    for path in paths:
        descriptor = os.open(path, os.O_RDONLY)
        try:
            os.fsync(descriptor)
        finally:
            os.close(descriptor)


@lru_cache(maxsize=1)
def _syncfs():
    # deferred: ctypes costs the mail pipe's start-up a few milliseconds
    import ctypes

    try:
        return ctypes.CDLL(None, use_errno=True).syncfs
    except (OSError, AttributeError):
        return None


def _errno() -> int:
    import ctypes

    return ctypes.get_errno()


def _smtp_send(config, row) -> dict:
    """An outbox row to the relay (send_smtp): a row queued without an envelope sender
    goes in one transaction per recipient, each with its own VERP sender."""
    if row.envelope_from is None:
        # deferred: the mail pipe delivers the answers it queued, mostly into the Maildir
        from .bounces import verp_sender

        envelopes = [(verp_sender(config, row.id, r), [r]) for r in row.recipients]
    else:
        envelopes = [(row.envelope_from, row.recipients)]
    return send_smtp(config, envelopes, row.message)


def send_smtp(config, envelopes, message: bytes) -> dict:
    """Hand the message to the relay, one transaction per (envelope sender, recipients) of
    `envelopes`, on one connection; returns the recipients it refused {address: (code,
    text)}. Raises TransientDeliveryError or PermanentDeliveryError when nobody got it."""
    host, port = config.get("smtp.host"), config.number("smtp.port")
    security = config.get("smtp.security") or "none"
    # deferred: start-up speed of the mail pipe; only SMTP delivery needs them
    import smtplib

    timeout = config.number("smtp.timeout")
    try:
        if security == "ssl":
            client = smtplib.SMTP_SSL(host, port, timeout=timeout)
        else:
            client = smtplib.SMTP(host, port, timeout=timeout)
        with client:
            if security == "starttls":
                client.starttls()
            if config.get("smtp.username"):
                client.login(config.get("smtp.username"), config.get("smtp.password"))
            # SMTP lines end in CRLF (RFC 5321, 2.3.8); smtplib fixes the line ends of a
            # str message only, and a relay may read bare LFs as one over-long line.
            crlf = re.sub(rb"\r?\n", b"\r\n", message)
            if len(envelopes) == 1:
                [(sender, recipients)] = envelopes
                return client.sendmail(sender or "", recipients, crlf)
            return _send_each(client, envelopes, crlf)
    except smtplib.SMTPRecipientsRefused as error:
        return {a: (code, str(text)) for a, (code, text) in error.recipients.items()}
    except smtplib.SMTPResponseException as error:
        detail = f"{error.smtp_code} {error.smtp_error!r}"
        if 400 <= error.smtp_code < 500:
            raise TransientDeliveryError(detail) from error
        raise PermanentDeliveryError(detail) from error
    except (TimeoutError, smtplib.SMTPException, OSError) as error:
        raise TransientDeliveryError(f"{type(error).__name__}: {error}") from error


def _send_each(client, envelopes, crlf: bytes) -> dict:
    """One transaction per envelope: a refusal is that envelope's recipients' alone; a
    connection lost after the first leaves the rest deferred (421), to be retried alone."""
    import smtplib

    refused = {}
    for done, (sender, recipients) in enumerate(envelopes):
        try:
            refused.update(client.sendmail(sender or "", recipients, crlf))
        except smtplib.SMTPRecipientsRefused as error:
            refused.update({a: (c, str(t)) for a, (c, t) in error.recipients.items()})
        except smtplib.SMTPResponseException as error:
            refused.update({a: (error.smtp_code, str(error.smtp_error)) for a in recipients})
            try:
                client.rset()
            except smtplib.SMTPException:
                pass
        except (TimeoutError, smtplib.SMTPException, OSError) as error:
            if done == 0:
                raise
            lost = f"connection lost: {type(error).__name__}: {error}"
            for _, rest in envelopes[done:]:
                refused.update({a: (421, lost) for a in rest})
            break
    return refused


def next_attempt(row, at):
    attempts = row.attempts
    delay = RETRY_DELAYS[attempts] if attempts < len(RETRY_DELAYS) else RETRY_LATER
    return at + delay


def deliver(store, config, row_ids) -> dict:
    """Send the given outbox rows once each; returns counts by outcome. Rows are claimed,
    and in the Maildir written, synced and marked sent, a batch at a time: every commit
    and every sync costs the disk a flush."""
    counts = {"sent": 0, "retry": 0, "failed": 0, "skipped": 0}
    pending = list(row_ids)
    while pending:
        batch, pending = pending, []
        moment = now()
        rows = claim(store, batch, moment)
        counts["skipped"] += len(batch) - len(rows)
        if config.get("smtp.host"):
            for row in rows:
                pending.extend(_deliver_by_smtp(store, config, row, moment, counts))
        else:
            pending.extend(_deliver_to_maildir(store, config, rows, moment, counts))
    return counts


def claim(store, row_ids, moment) -> list:
    """Take rows for delivery (Outbox.claim_many): in the caller's transaction when there
    is one, as `pbm serve` folds the claim into the commit of the commands."""
    return store.outbox.claim_many(
        row_ids, _new_claim(moment), stamp(moment - STALE_CLAIM), claimer_is_gone
    )


def _new_claim(moment) -> str:
    """The claim on rows being sent: its time orders it for staleness, the process id tells
    whether its claimer still lives, the random tail tells two claims of one second apart."""
    return f"{stamp(moment)}#{os.getpid()}#{secrets.token_hex(6)}"


def claimer_is_gone(claim: str | None) -> bool:
    """A claim whose process has died (killed mid-delivery) is taken over at once."""
    try:
        pid = int((claim or "").split("#")[1])
    except (IndexError, ValueError):
        return True
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


def _deliver_to_maildir(store, config, rows, moment, counts) -> list[int]:
    """The rows written and synced, renamed into new/, marked sent."""
    batch = stage_maildir(config, rows)
    try:
        fsync_each(batch.paths(config))
    except OSError as error:
        batch.failed.extend((row, str(error)) for row in batch.written)
        batch.written = []
    publish_maildir(config, batch)
    alerts = retry_failed(store, config, batch, moment, counts)
    if batch.delivered:
        store.outbox.mark_sent_many([row.id for row in batch.delivered], stamp(now()))
        counts["sent"] += len(batch.delivered)
    return alerts


def retry_failed(store, config, batch: MaildirBatch, moment, counts) -> list[int]:
    """Rows whose file could not be written: retried later; returns operator alerts."""
    alerts = []
    for row, error in batch.failed:
        outcome, more = _retry_or_give_up(store, config, row, moment, error)
        alerts.extend(more)
        counts[outcome] += 1
    return alerts


def _deliver_by_smtp(store, config, row, moment, counts) -> list[int]:
    """One row to the relay, marked at once: a message handed over must not go again."""
    try:
        refused = _smtp_send(config, row)
    except PermanentDeliveryError as error:
        counts["failed"] += 1
        return _give_up(store, config, row, str(error))
    except TransientDeliveryError as error:
        outcome, alerts = _retry_or_give_up(store, config, row, moment, str(error))
        counts[outcome] += 1
        return alerts
    alerts = []
    deferred = [a for a, (code, _) in refused.items() if 400 <= code < 500]
    rejected = {a: r for a, r in refused.items() if a not in deferred}
    recipients = row.recipients
    if rejected:
        alerts.extend(_report_rejected(store, config, row, rejected))
    if deferred:
        detail = "; ".join(f"{a}: {refused[a][0]} {refused[a][1]}" for a in deferred)
        if len(deferred) == len(recipients):
            outcome, more = _retry_or_give_up(store, config, row, moment, detail)
            alerts.extend(more)
            counts[outcome] += 1
        else:
            store.outbox.narrow_recipients(
                row.id, deferred, detail, stamp(next_attempt(row, moment))
            )
            counts["retry"] += 1
    elif len(rejected) == len(recipients):
        store.outbox.mark_failed(row.id, _describe(rejected))
        counts["failed"] += 1
    else:
        store.outbox.mark_sent_many([row.id], stamp(now()))
        counts["sent"] += 1
    return alerts


def _describe(refused) -> str:
    return "; ".join(f"{address}: {code} {text}" for address, (code, text) in refused.items())


def _retry_or_give_up(store, config, row, moment, error):
    """('retry' or 'failed', operator alerts to deliver)."""
    if moment - parse_stamp(row.created_at) >= GIVE_UP_AFTER:
        return "failed", _give_up(store, config, row, f"gave up after 5 days: {error}")
    log.warning("outbox %s will be retried: %s", row.id, error)
    store.outbox.mark_retry(row.id, stamp(next_attempt(row, moment)), error)
    return "retry", []


def _give_up(store, config, row, error) -> list[int]:
    log.error("outbox %s failed for good: %s", row.id, error)
    store.outbox.mark_failed(row.id, error)
    return _alert_operator(store, config, row, error)


def _report_rejected(store, config, row, rejected) -> list[int]:
    detail = _describe(rejected)
    log.error("outbox %s: the relay refused %s", row.id, detail)
    return _alert_operator(store, config, row, f"refused: {detail}")


def _alert_operator(store, config, row, error) -> list[int]:
    """Queue a note to the operator about an address that cannot be reached (never about
    a note to the operator itself); returns the rows to deliver."""
    operator = config.get("server.operator_address")
    if not operator or row.kind == "operator":
        return []
    mail = Mail(
        kind="operator",
        subject="PBM delivery failure",
        body=(
            f"Outbox message {row.id} ({row.kind}) to {', '.join(row.recipients)}\n"
            f"could not be delivered: {error}\n\nSee `pbm outbox list`."
        ),
        to=[operator],
    )
    with store.write():
        return [queue(store, config, mail)]


def flush(store, config) -> dict:
    """Deliver every row that is due (cron, `pbm outbox flush`), after finishing the
    renames a crash cut short. With [replica] wait, only once the replica holds the
    commits that queued them."""
    ship(config)
    if not config.get("smtp.host"):
        recover_maildir(store, config)
    return deliver(store, config, store.outbox.due(stamp(now())))
