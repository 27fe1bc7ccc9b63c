"""Outgoing mail: messages composed into the outbox inside the command's transaction,
delivered after commit into the Maildir $PBM_HOME/outbox or through an SMTP relay."""

import json
import logging
import os
import re
import smtplib
import socket
import textwrap
from dataclasses import dataclass, field
from datetime import timedelta
from email.message import EmailMessage
from email.utils import format_datetime, formataddr, make_msgid

from .config import now, parse_stamp, stamp

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


def clean_header(value: str) -> str:
    """No CR, LF or control characters can reach a header."""
    return re.sub(r"[\x00-\x1f\x7f]+", " ", value).strip()


def compose(config, mail: Mail, in_reply_to: str | None = None) -> EmailMessage:
    message = EmailMessage()
    message["From"] = formataddr((config.get("server.name"), config.get("server.address")))
    message["To"] = ", ".join(clean_header(a) for a in mail.to)
    message["Subject"] = clean_header(mail.subject)
    message["Date"] = format_datetime(now())
    message["Message-ID"] = make_msgid(domain=config.server_domain)
    message["Auto-Submitted"] = "auto-replied" if mail.reply else "auto-generated"
    message["X-Auto-Response-Suppress"] = "All"
    if mail.reply and in_reply_to:
        message["In-Reply-To"] = clean_header(in_reply_to)
        message["References"] = clean_header(in_reply_to)
    for name, value in mail.headers.items():
        message[name] = clean_header(value)
    message.set_content(wrap_text(mail.body).rstrip("\n") + "\n", charset="utf-8")
    return message


def envelope_sender(config) -> str:
    return config.get("server.bounce_address")


def queue(store, config, mail: Mail, in_reply_to=None) -> int:
    """Store the rendered message as an outbox row, in the caller's transaction."""
    message = compose(config, mail, in_reply_to)
    return store.outbox_add(
        created_at=stamp(now()),
        kind=mail.kind,
        recipients=list(mail.to),
        envelope_from=envelope_sender(config),
        message_id=message["Message-ID"],
        message=message.as_bytes(),
    )


class TransientDeliveryError(Exception):
    pass


class PermanentDeliveryError(Exception):
    pass


def _write_maildir(config, row) -> None:
    """Write into tmp/ then rename into new/; the name is the row id, so a rewrite replaces."""
    base = config.outbox_dir
    for sub in ("tmp", "new", "cur"):
        (base / sub).mkdir(parents=True, exist_ok=True)
    name = f"{int(row['id']):010d}.pbm"
    temporary = base / "tmp" / name
    with open(temporary, "wb") as handle:
        handle.write(row["message"])
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, base / "new" / name)


def _smtp_send(config, row) -> None:
    host, port = config.get("smtp.host"), config.number("smtp.port")
    security = config.get("smtp.security") or "none"
    recipients = json.loads(row["recipients"])
    try:
        if security == "ssl":
            client = smtplib.SMTP_SSL(host, port, timeout=30)
        else:
            client = smtplib.SMTP(host, port, timeout=30)
        with client:
            if security == "starttls":
                client.starttls()
            if config.get("smtp.username"):
                client.login(config.get("smtp.username"), config.get("smtp.password"))
            refused = client.sendmail(row["envelope_from"] or "", recipients, row["message"])
    except smtplib.SMTPRecipientsRefused as error:
        codes = [code for code, _ in error.recipients.values()]
        detail = "; ".join(f"{a}: {c} {m!r}" for a, (c, m) in error.recipients.items())
        if all(400 <= code < 500 for code in codes):
            raise TransientDeliveryError(detail) from error
        raise PermanentDeliveryError(detail) from error
    except smtplib.SMTPResponseException as error:
        detail = f"{error.smtp_code} {error.smtp_error!r}"
        if 400 <= error.smtp_code < 500:
            raise TransientDeliveryError(detail) from error
        raise PermanentDeliveryError(detail) from error
    except (smtplib.SMTPException, OSError, socket.timeout) as error:
        raise TransientDeliveryError(f"{type(error).__name__}: {error}") from error
    if refused:
        log.warning("outbox %s: some recipients refused: %s", row["id"], refused)


def next_attempt(row, at):
    attempts = row["attempts"]
    delay = RETRY_DELAYS[attempts] if attempts < len(RETRY_DELAYS) else RETRY_LATER
    return at + delay


def deliver(store, config, row_ids) -> dict:
    """Send the given outbox rows once each; returns counts by outcome."""
    counts = {"sent": 0, "retry": 0, "failed": 0, "skipped": 0}
    for row_id in row_ids:
        moment = now()
        row = store.outbox_claim(row_id, stamp(moment), stamp(moment - STALE_CLAIM))
        if row is None:
            counts["skipped"] += 1
            continue
        try:
            if config.get("smtp.host"):
                _smtp_send(config, row)
            else:
                _write_maildir(config, row)
        except PermanentDeliveryError as error:
            log.error("outbox %s failed for good: %s", row_id, error)
            store.outbox_mark_failed(row_id, str(error))
            counts["failed"] += 1
        except (TransientDeliveryError, OSError) as error:
            if moment - parse_stamp(row["created_at"]) >= GIVE_UP_AFTER:
                log.error("outbox %s failed after 5 days: %s", row_id, error)
                store.outbox_mark_failed(row_id, f"gave up after 5 days: {error}")
                counts["failed"] += 1
            else:
                log.warning("outbox %s will be retried: %s", row_id, error)
                store.outbox_mark_retry(row_id, stamp(next_attempt(row, moment)), str(error))
                counts["retry"] += 1
        else:
            store.outbox_mark_sent(row_id, stamp(now()))
            counts["sent"] += 1
    return counts


def flush(store, config) -> dict:
    """Deliver every row that is due (cron, `pbm outbox flush`)."""
    moment = now()
    return deliver(store, config, store.outbox_due(stamp(moment), stamp(moment - STALE_CLAIM)))
