"""Bounces (docs/spec/server.md §5.9): the VERP envelope sender of the mail we start, and
the delivery status notifications that come back to it.

Each recipient of an outbox row gets the envelope sender `<local>+bounce-<id>@<domain>`
of the server's own address. `<id>` is the row id (5 bytes) and the first 10 bytes of
HMAC-SHA256(secret.key, "bounce" ‖ row id ‖ recipient), in lower-case base32 (24
characters), so that a bounce names the message and the recipient it is about and a forged
one names nothing. The `+` form goes wherever the server's address goes (the transport,
`.forward`, an alias map, `pbm serve`), so no mail route is needed for it.

A mail to such an address is read as a DSN (RFC 3464, the stdlib's message/delivery-status),
else through flufl.bounce, which knows the many formats that are not standard; it is never
answered. A permanent failure, or temporary failures over TEMPORARY_SPAN, marks the address
failing: pbm stops mailing it (Server.queue_mails) until a mail comes from it.
"""

import base64
import hmac
import logging
import re
from datetime import timedelta
from typing import NamedTuple

from .clock import parse_stamp, stamp
from .replies import b32_text, own_extension, reply_address

log = logging.getLogger("pbm.bounces")

PREFIX = "bounce-"
ROW_BYTES = 5
MAC_BYTES = 10
ID_CHARS = (ROW_BYTES + MAC_BYTES) * 8 // 5  # 24
ID_RE = re.compile(rf"[a-z2-7]{{{ID_CHARS}}}")
KIND = b"bounce"
# Temporary failures mark an address once they have gone on this long; older ones than
# TEMPORARY_WINDOW no longer count (a mailbox that was full a month ago may work now).
TEMPORARY_SPAN = timedelta(days=3)
TEMPORARY_WINDOW = timedelta(days=14)
MAX_DETAIL_CHARS = 200


def _mac(key: bytes, row_id: int, recipient: str) -> bytes:
    message = b"\0".join((KIND, str(row_id).encode(), recipient.lower().encode()))
    return hmac.digest(key, message, "sha256")[:MAC_BYTES]


def bounce_id(key: bytes, row_id: int, recipient: str) -> str:
    return b32_text(row_id.to_bytes(ROW_BYTES, "big") + _mac(key, row_id, recipient))


def verp_sender(config, row_id: int, recipient: str) -> str:
    """The envelope sender of outbox row `row_id` to `recipient`."""
    return reply_address(config, PREFIX + bounce_id(config.secret_key, row_id, recipient))


class BounceId(NamedTuple):
    """What a bounce address says before its signature is checked: the row and the MAC."""

    row_id: int
    mac: bytes

    def recipient_among(self, key: bytes, addresses) -> str | None:
        """The recipient this id was made for, when it is one of `addresses`."""
        for address in addresses:
            if hmac.compare_digest(self.mac, _mac(key, self.row_id, address)):
                return address.lower()
        return None


def parse_bounce_recipient(config, recipient: str | None) -> BounceId | None:
    """The id of an envelope recipient `<local>+bounce-<id>@<domain>` of our own address;
    None for anything else. Hostile input: nothing but exactly that shape is taken."""
    extension = own_extension(config, recipient)
    if extension is None or not extension.startswith(PREFIX):
        return None
    text = extension[len(PREFIX) :]
    if not ID_RE.fullmatch(text):
        return None
    raw = base64.b32decode(text.upper())
    return BounceId(int.from_bytes(raw[:ROW_BYTES], "big"), raw[ROW_BYTES:])


# -- reading the report ----------------------------------------------------------------


class Failure(NamedTuple):
    kind: str  # permanent, temporary
    detail: str


def read_failure(message, raw: bytes) -> Failure | None:
    """What a bounce says happened: a permanent or temporary failure, or None for anything
    else (a success report, an autoresponder, a mail nobody can read). The stdlib reads a
    standard DSN; flufl.bounce the rest. Never raises: a bounce is hostile input."""
    try:
        failure = _standard_dsn(message)
        if failure is None and not _is_success_report(message):
            failure = _other_formats(raw)
        return failure
    except Exception as error:  # a parser's bug must not keep the mail with the MTA
        log.warning("could not read a bounce: %s: %s", type(error).__name__, error)
        return None


def _delivery_status_blocks(message):
    """The per-recipient field blocks of the message/delivery-status parts."""
    for part in message.walk():
        if part.get_content_type() != "message/delivery-status":
            continue
        payload = part.get_payload()
        if isinstance(payload, list):
            yield from payload[1:]  # the first block is the per-message fields


def _is_success_report(message) -> bool:
    actions = [_field(b, "Action").lower() for b in _delivery_status_blocks(message)]
    return bool(actions) and all(a in ("delivered", "relayed", "expanded") for a in actions)


def _field(block, name: str) -> str:
    try:
        value = block.get(name)
    except Exception:
        return ""
    return " ".join(str(value or "").split())


def _standard_dsn(message) -> Failure | None:
    """RFC 3464: Action failed, or a 5.x.x Status, is permanent; delayed or 4.x.x temporary."""
    found = None
    for block in _delivery_status_blocks(message):
        action = _field(block, "Action").lower()
        status = _field(block, "Status")
        code = _field(block, "Diagnostic-Code")
        detail = _clean(" ".join(filter(None, (status, code))))
        if action == "failed" or (status.startswith("5.") and action != "delivered"):
            return Failure("permanent", detail or "failed")
        if action == "delayed" or status.startswith("4."):
            found = found or Failure("temporary", detail or "delayed")
    return found


def _other_formats(raw: bytes) -> Failure | None:
    # deferred: only a bounce that is not a standard DSN needs the detectors
    import email

    from flufl.bounce import all_failures

    temporary, permanent = all_failures(email.message_from_bytes(raw))
    if permanent:
        return Failure("permanent", _clean("failed: " + _listed(permanent)))
    if temporary:
        return Failure("temporary", _clean("delayed: " + _listed(temporary)))
    return None


def _listed(addresses) -> str:
    return ", ".join(sorted(a.decode("ascii", "replace") for a in addresses))


def _clean(text: str) -> str:
    """Report text fit for a log line, `pbm status` and a mail: printable, one line, short."""
    printable = "".join(c if c.isprintable() else " " for c in text)
    return " ".join(printable.split())[:MAX_DETAIL_CHARS]


# -- acting on it ------------------------------------------------------------------------


class BounceReport(NamedTuple):
    """A mail to a bounce address, read: run by the dispatcher in a transaction of its own
    (Server.execute), never answered."""

    bounce_id: BounceId
    failure: Failure | None

    @property
    def answered(self) -> bool:
        return False

    def run(self, ctx):
        record_bounce(ctx, self)


def record_bounce(ctx, report: BounceReport):
    """Check the signature against the message we sent, count the failure, and mark the
    address when it has failed for good; a bounce for a message we never sent, or with a
    bad signature, changes nothing."""
    store = ctx.store
    row = store.outbox.get(report.bounce_id.row_id)
    if row is None or row.status != "sent":
        log.info("bounce for outbox %s, which was never sent: ignored", report.bounce_id.row_id)
        return
    address = report.bounce_id.recipient_among(ctx.config.secret_key, _addressed(row))
    if address is None:
        log.warning("bounce for outbox %s with a bad signature: ignored", row.id)
        return
    if report.failure is None:
        log.info("mail to the bounce address of outbox %s reports no failure: ignored", row.id)
        return
    failure = report.failure
    at = ctx.now
    store.delivery.add_bounce(address, failure.kind, stamp(at), row.id, failure.detail)
    log.info(
        "bounce: %s failure of %s (outbox %s): %s", failure.kind, address, row.id, failure.detail
    )
    if failure.kind == "temporary":
        since = stamp(at - TEMPORARY_WINDOW)
        first = store.delivery.bounces_since(address, "temporary", since)
        if not first or at - parse_stamp(first[0].at) < TEMPORARY_SPAN:
            return
        reason = f"temporary failures since {first[0].at[:10]}: {failure.detail}"
    else:
        reason = f"permanent failure: {failure.detail}"
    if store.delivery.mark_failing(address, stamp(at), _clean(reason), row.id):
        log.warning("address %s marked failing: %s", address, reason)
        tell_owners(ctx, address, reason)


def _addressed(row) -> list[str]:
    """Every address the row was sent to: its To header (the recipients column narrows as
    deferred recipients are retried), and the recipients column."""
    from email.parser import BytesHeaderParser
    from email.policy import default
    from email.utils import getaddresses

    header_end = row.message.find(b"\n\n")
    headers = BytesHeaderParser(policy=default).parsebytes(row.message[: header_end + 2])
    written = [address for _, address in getaddresses([str(headers.get("To") or "")])]
    return list(dict.fromkeys([*written, *row.recipients]))


def tell_owners(ctx, address: str, reason: str):
    """Each account of the address hears of it at its other working addresses."""
    for userid in ctx.store.delivery.owners(address):
        addresses = ctx.store.users.addresses(userid)
        failing = ctx.store.delivery.failing_among(addresses)
        working = [a for a in addresses if a.lower() not in failing]
        if not working:
            log.warning("%s is unreachable: every address of the account fails", userid)
            continue
        body = ctx.render("mail/address_failing.txt", userid=userid, address=address, reason=reason)
        ctx.mail_user(userid, f"Mail to {userid} bounces", body, "account", addresses=working)


def clear_on_mail(store, origin: str | None):
    """A mail from a failing address shows it works again: its mark is cleared."""
    if origin and store.delivery.clear(origin.lower()):
        log.info("address %s works again: its failing mark is cleared", origin.lower())


def working_addresses(store, addresses) -> list[str]:
    """The addresses not marked failing, in their order."""
    failing = store.delivery.failing_among(addresses)
    return [a for a in addresses if a.lower() not in failing]


def reachability_lines(store, userids) -> list[str]:
    """Board mail lines about seat holders pbm cannot mail at every address
    (docs/spec/server.md §5.9)."""
    if not store.delivery.any_failing():
        return []  # nobody's mail bounces, as mostly: no addresses to count
    counts = store.delivery.failing_counts(userids)
    lines = []
    for userid in dict.fromkeys(userids):
        if userid not in counts:
            continue
        total, failing = counts[userid]
        if failing >= total:
            lines.append(f"Unreachable: {userid} (every address bounces; no answer may come)")
        else:
            lines.append(f"Mail bounces: {userid} (at {failing} of {total} addresses)")
    return lines


def unreachable(store, userid: str) -> bool:
    total, failing = store.delivery.failing_counts([userid]).get(userid, (1, 0))
    return failing >= total
