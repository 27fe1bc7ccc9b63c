"""Replies as real mail clients write them, to a mail pbm sent (docs/spec/server.md §11.3).

Each client's body is laid out as that client writes it with its default settings: where
the cursor starts (above or below the quote), its attribution line, how it quotes, where
its signature or footer goes and whether a `-- ` line precedes it. `top`, `bottom`, `html`
and `outlook` are the generic shapes the first tests used; the others are named after the
client they copy.
"""

import html
import itertools
import textwrap
from email.message import EmailMessage

_numbers = itertools.count(1)
NAMES = {"alice": "Alice Example", "bob": "Bob Sample", "mallory": "Mallory Mint"}
FROM_NAME = "PBeM Server"
SERVER = "pbm@localhost"


def _original_lines(original) -> list[str]:
    """The text a client quotes: the plain part of a mail with an HTML alternative."""
    return original.get_body(("plain",)).get_content().rstrip("\n").split("\n")


def _quoted(lines, prefix="> ", empty=">") -> list[str]:
    return [prefix + line if line else empty for line in lines]


def _name_of(sender: str) -> str:
    local = sender.partition("@")[0]
    return NAMES.get(local, local.capitalize())


def _top(own, lines, sender):
    attribution = f"On Mon, 2 Nov 2026 at 10:00, {FROM_NAME} <{SERVER}> wrote:"
    return own + ["", attribution] + _quoted(lines, empty="> ")


def _bottom(own, lines, sender):
    attribution = f"On Mon, 2 Nov 2026 at 10:00, {FROM_NAME} <{SERVER}> wrote:"
    return (
        [attribution] + _quoted(lines, empty="> ") + [""] + own + ["", "-- ", "Sent from my phone"]
    )


def _outlook(own, lines, sender, original):
    header = [
        f"From: {FROM_NAME} <{SERVER}>",
        "Sent: Friday, November 27, 2026 4:33 PM",
        f"To: {sender} <{sender}>",
        f"Subject: {original['Subject']}",
    ]
    return own + ["", "_" * 32] + header + [""] + lines


def _mutt(own, lines, sender):
    # mutt and neomutt: attribution "On %d, %n wrote:", date_format "!%a, %b %d, %Y at
    # %I:%M:%S%p %Z"; answered below the quote; $signature after "-- " ($sig_dashes).
    attribution = f"On Fri, Nov 27, 2026 at 04:33:10PM +0000, {FROM_NAME} wrote:"
    return [attribution] + _quoted(lines) + [""] + own + ["", "-- ", _name_of(sender)]


def _mutt_german(own, lines, sender):
    # set attribution="Am %d schrieb %n:"
    attribution = f"Am Fri, Nov 27, 2026 at 04:33:10PM +0000 schrieb {FROM_NAME}:"
    return [attribution] + _quoted(lines) + [""] + own + ["", "-- ", _name_of(sender)]


def _neomutt(own, lines, sender):
    # set attribution_intro="* %n <%a> [%{%Y-%m-%d %H:%M}]:", answered inline: the move
    # under the quoted title, the rest of the quote after it.
    attribution = f"* {FROM_NAME} <{SERVER}> [2026-11-27 16:33]:"
    head, rest = lines[:2], lines[2:]
    return (
        [attribution]
        + _quoted(head)
        + [""]
        + own
        + [""]
        + _quoted(rest)
        + ["", "-- ", _name_of(sender)]
    )


def _alpine(own, lines, sender):
    # alpine's defaults: the cursor above the quote, the signature file inserted there too
    # (signature-at-bottom off) with no "-- " line (enable-sigdashes off), reply-leadin
    # "On _DAYDATE_, _FROM_ wrote:" followed by a blank line.
    signature = [_name_of(sender), "Department of Knight Studies, Example University"]
    attribution = f"On Fri, 27 Nov 2026, {FROM_NAME} wrote:"
    return own + ["", signature[0], signature[1], "", attribution, ""] + _quoted(lines)


def _aerc(own, lines, sender):
    # aerc's quoted_reply template: "On {{dateFormat … "Mon Jan 2, 2006 at 3:04 PM MST"}},
    # {{.OriginalFrom | names}} wrote:", the editor's cursor below it.
    attribution = f"On Fri Nov 27, 2026 at 4:33 PM UTC, {FROM_NAME} wrote:"
    return [attribution] + _quoted(lines) + [""] + own


def _thunderbird(own, lines, sender):
    # Thunderbird: "start my reply below the quote", "On <date>, <author> wrote:", the
    # signature below the reply after "-- ".
    attribution = f"On 11/27/26 4:33 PM, {FROM_NAME} wrote:"
    return [attribution] + _quoted(lines) + [""] + own + ["", "-- ", _name_of(sender)]


def _gmail(own, lines, sender):
    # Gmail's text part: above the quote; the attribution wrapped at 78 columns.
    attribution = f"On Fri, Nov 27, 2026 at 4:33 PM {FROM_NAME} <{SERVER}> wrote:"
    return own + [""] + textwrap.wrap(attribution, 78) + [""] + _quoted(lines)


def _apple_mail(own, lines, sender):
    # Apple Mail (macOS): the attribution is part of the quote.
    attribution = f"On 27 Nov 2026, at 16:33, {FROM_NAME} <{SERVER}> wrote:"
    return own + [""] + _quoted([attribution, ""] + lines, empty="> ")


def _iphone(own, lines, sender):
    attribution = f"On 27 Nov 2026, at 16:33, {FROM_NAME} <{SERVER}> wrote:"
    quoted = [attribution, "", "\ufeff" + lines[0]] + lines[1:]
    return own + ["", "Sent from my iPhone", ""] + _quoted(quoted, empty="> ")


def _android(own, lines, sender, original):
    # Samsung Email: its footer, then the original unquoted under a separator.
    header = [
        "-------- Original message --------",
        f"From: {FROM_NAME} <{SERVER}> ",
        "Date: 27/11/2026 16:33 (GMT+00:00) ",
        f"To: {sender} ",
        f"Subject: {original['Subject']} ",
    ]
    return own + ["", "", "", "Sent from my Galaxy", "", "", *header, ""] + lines


def _outlook_mobile(own, lines, sender, original):
    return (
        own
        + ["", "Get Outlook for Android<https://aka.ms/AAb9ysg>"]
        + _outlook([], lines, sender, original)
    )


def _pgp_inline(own, lines, sender):
    # mutt with crypt_autosign and inline PGP (pgp_mime off): everything it signs is
    # dash-escaped, the "-- " of the signature too.
    signed = _mutt(own, lines, sender)
    escaped = ["- " + line if line.startswith("-") else line for line in signed]
    return (
        ["-----BEGIN PGP SIGNED MESSAGE-----", "Hash: SHA256", ""]
        + escaped
        + [
            "-----BEGIN PGP SIGNATURE-----",
            "",
            "iHUEARYIAB0WIQQexampleexampleexampleexampleexAMPLEFAmVkZXMACgkQ",
            "=abcd",
            "-----END PGP SIGNATURE-----",
        ]
    )


PLAIN = {
    "top": _top,
    "bottom": _bottom,
    "mutt": _mutt,
    "mutt-german": _mutt_german,
    "neomutt": _neomutt,
    "alpine": _alpine,
    "aerc": _aerc,
    "thunderbird": _thunderbird,
    "apple-mail": _apple_mail,
    "iphone": _iphone,
    "pgp-inline": _pgp_inline,
}
WITH_ORIGINAL = {"outlook": _outlook, "android": _android, "outlook-mobile": _outlook_mobile}
STYLES = ("top", "bottom", "html", "outlook", "gmail", *sorted(set(PLAIN) - {"top", "bottom"}))
STYLES += ("android", "outlook-mobile")


def _gmail_html(own, lines):
    mine = "".join(f"<div>{html.escape(line) or '<br>'}</div>" for line in own)
    attribution = f"On Fri, Nov 27, 2026 at 4:33 PM {FROM_NAME} &lt;{SERVER}&gt; wrote:"
    quoted = "<br>".join(html.escape(line) for line in lines)
    return (
        f'<div dir="ltr">{mine}</div><br><div class="gmail_quote">'
        f'<div dir="ltr" class="gmail_attr">{attribution}<br></div>'
        f'<blockquote class="gmail_quote">{quoted}</blockquote></div>'
    )


def reply_mail(original, sender, answer, style="top", comment="") -> bytes:
    """A reply from `sender` to `original`, its first own line `answer` and then `comment`,
    laid out as the client `style` lays it out; `Re:` subject, In-Reply-To and References
    set, To the original's Reply-To."""
    own = [answer] + ([""] + comment.split("\n") if comment else [])
    lines = _original_lines(original)
    message = EmailMessage()
    message["From"] = f"{_name_of(sender)} <{sender}>"
    message["To"] = str(original["Reply-To"])
    message["Subject"] = "Re: " + str(original["Subject"])
    message["Message-ID"] = f"<reply-{next(_numbers)}@client.example>"
    message["In-Reply-To"] = original["Message-ID"]
    message["References"] = original["Message-ID"]
    if style == "html":
        # An HTML-only reply, as some webmails send it.
        message.set_content(f"<html><body>{_gmail_html(own, lines)}</body></html>", "html")
    elif style == "gmail":
        message.set_content("\n".join(_gmail(own, lines, sender)) + "\n")
        message.add_alternative(f"<html><body>{_gmail_html(own, lines)}</body></html>", "html")
    elif style in PLAIN:
        message.set_content("\n".join(PLAIN[style](own, lines, sender)) + "\n")
    elif style in WITH_ORIGINAL:
        message.set_content("\n".join(WITH_ORIGINAL[style](own, lines, sender, original)) + "\n")
    else:
        raise ValueError(style)
    return message.as_bytes()
