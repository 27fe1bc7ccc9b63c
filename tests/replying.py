"""Replies as real mail clients write them, to a mail pbm sent (docs/spec/server.md §11.3)."""

import html
import itertools
from email.message import EmailMessage

_numbers = itertools.count(1)
STYLES = ("top", "bottom", "html", "outlook")


def _original_lines(original) -> list[str]:
    """The text a client quotes: the plain part of a mail with an HTML alternative."""
    return original.get_body(("plain",)).get_content().rstrip("\n").split("\n")


def reply_mail(original, sender, answer, style="top", comment="") -> bytes:
    """A reply from `sender` to `original`, its first own line `answer`, the original quoted
    as a client of that style quotes it; `Re:` subject, In-Reply-To and References set, To
    the original's Reply-To."""
    own = [answer] + ([""] + comment.split("\n") if comment else [])
    lines = _original_lines(original)
    attribution = f"On Mon, 2 Nov 2026 at 10:00, {original['From']} wrote:"
    message = EmailMessage()
    message["From"] = sender
    message["To"] = str(original["Reply-To"])
    message["Subject"] = "Re: " + str(original["Subject"])
    message["Message-ID"] = f"<reply-{next(_numbers)}@client.example>"
    message["In-Reply-To"] = original["Message-ID"]
    message["References"] = original["Message-ID"]
    if style == "top":
        text = "\n".join(own + ["", attribution] + ["> " + line for line in lines]) + "\n"
        message.set_content(text)
    elif style == "bottom":
        text = (
            "\n".join(
                [attribution]
                + ["> " + line for line in lines]
                + [""]
                + own
                + ["", "-- ", "Sent from my phone"]
            )
            + "\n"
        )
        message.set_content(text)
    elif style == "outlook":
        header = [
            f"From: {original['From']}",
            "Sent: Monday, November 2, 2026 10:00",
            f"To: {original['To']}",
            f"Subject: {original['Subject']}",
        ]
        message.set_content("\n".join(own + ["", "_" * 32] + header + [""] + lines) + "\n")
    elif style == "html":
        mine = "".join(f"<div>{html.escape(line) or '<br>'}</div>" for line in own)
        quoted = "<br>".join(html.escape(line) for line in lines)
        message.set_content(
            f'<html><body><div dir="ltr">{mine}</div><br><div class="gmail_quote">'
            f'<div dir="ltr" class="gmail_attr">{html.escape(attribution)}<br></div>'
            f'<blockquote class="gmail_quote">{quoted}</blockquote></div></body></html>',
            subtype="html",
        )
    else:
        raise ValueError(style)
    return message.as_bytes()
