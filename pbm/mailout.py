"""Outgoing mail: messages composed into the outbox inside the command's transaction,
delivered after commit into the Maildir $PBM_HOME/outbox (maildir.py) or through an SMTP
relay, with retries and their back-off."""

import logging
import os
import re
import secrets
from datetime import timedelta

from .clock import now, parse_stamp, stamp
from .maildir import (
    MaildirBatch,
    fsync_each,
    publish_maildir,
    recover_maildir,
    stage_maildir,
)
from .message import Mail, compose
from .replica import ship

log = logging.getLogger("pbm.mailout")


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
        row_ids, new_claim(moment), stamp(moment - STALE_CLAIM), claimer_is_gone
    )


def claim_queued(store, written: dict, row_ids, moment) -> list:
    """Take a group's rows for delivery, in its transaction: those its commands wrote
    already claimed (Outbox.writing_claimed) as they are; any other (a duplicate's rows
    that a crash left undelivered) by claim()."""
    others = [row_id for row_id in row_ids if row_id not in written]
    rows = [written[row_id] for row_id in row_ids if row_id in written]
    return sorted(rows + claim(store, others, moment), key=lambda row: row.id)


def new_claim(moment) -> str:
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
