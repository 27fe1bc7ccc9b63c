"""Commands and replies as real RFC 822 mails through the intake (process_message), as the
pipe and `pbm serve` run them; and the mails that come back, read as players read them."""

from tests.mailpipe import command_mail
from tests.replying import reply_mail


def send(harness, sender, subject, body=""):
    """One command mail from `sender`; the dispatcher's Result."""
    outcome = harness.deliver(command_mail(sender, subject, body))
    return outcome.result


def reply(harness, original, sender, answer, comment="", style="top"):
    """A reply to a mail pbm sent, to the +token address of its Reply-To."""
    raw = reply_mail(original, sender, answer, style, comment)
    return harness.deliver(raw, envelope_recipients=[str(original["Reply-To"])]).result


def text(message) -> str:
    return message.get_body(("plain",)).get_content()


def fresh(harness) -> dict:
    """The mails sent since the last call, by recipient address."""
    found = {}
    for message in harness.new_mails():
        for address in str(message["To"]).split(", "):
            found.setdefault(address, []).append(message)
    return found


def last_to(harness, address, subject_start=""):
    """The newest mail to an address whose subject starts so."""
    mails = [m for m in harness.mails(address) if str(m["Subject"]).startswith(subject_start)]
    assert mails, f"no mail to {address} starting {subject_start!r}"
    return mails[-1]


def flat(message) -> str:
    """The plain text with its lines joined, for phrases the mail may have wrapped."""
    return " ".join(text(message).split())
