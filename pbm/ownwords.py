"""The sender's own words in a mail body (docs/spec/server.md §4.3, §11.3): what a mail
client added around them (quoted blocks and the lines that introduce them, signatures,
footers, forwarded originals, an inline PGP signature) set aside, and for a reply, the
greeting above its first line.

Every rule looks at a line and at most a few lines after it, and only the first MAX_LINES
lines are read (far more than a reply below a quoted board mail holds), so the work is
bounded whatever the body's size.
"""

import re

MAX_LINES = 10_000
CONTROL_RE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
# The title line our own mails begin with (docs/spec/server.md §5.4).
TITLE = (
    r"(?:(?:Summary|Preview|Replay|Submit|Nag|Subscription Summary|Notification) of \S+ Board"
    r"|A new \S+ board \(\d+\) has been started\.)"
)
# What ends the sender's words: a signature, a client's footer, a forwarded or unquoted
# original (Outlook and most phones put it below a separator, unquoted), our own mail text.
SIGNATURE = r"(?:--|_{10,}|\*{60}|-----BEGIN PGP SIGNATURE-----)$"
ORIGINAL = (
    r"-{2,} ?(?:original message|ursprüngliche nachricht|message d'origine|mensaje original"
    r"|messaggio originale|oorspronkelijk bericht|mensagem original|originalmeddelande"
    r"|opprinnelig melding|oprindelig meddelelse|forwarded message|weitergeleitete nachricht"
    r"|message transféré|mensaje reenviado) ?-{2,}"
    r"|begin forwarded message:|anfang der weitergeleiteten nachricht:"
)
FOOTER = (
    r"(?:sent (?:from|with|via|using)|get outlook for|download outlook for|envoy[ée] (?:de|depuis)"
    r"|gesendet (?:von|mit)|von meinem .{1,40} gesendet|enviado (?:desde|do|de)|inviato da"
    r"|verstuurd (?:vanaf|met)|verzonden (?:vanaf|met)|skickat från|sendt fra|wysłane z"
    r"|отправлено (?:с|из)).{0,80}$"
)
ENDS_RE = re.compile(rf"{SIGNATURE}|{ORIGINAL}|{FOOTER}|(?-i:{TITLE})", re.IGNORECASE)
# An unquoted original below a header block, as Outlook writes it (also localised).
HEADER_FROM_RE = re.compile(r"(?:from|von|de|da|van|fra|från|od) ?:", re.IGNORECASE)
HEADER_NEXT_RE = re.compile(
    r"(?:sent|date|to|gesendet|datum|an|envoyé|à|enviado|para|inviato|data|verzonden|aan"
    r"|sendt|skickat|till|wysłane|do) ?:",
    re.IGNORECASE,
)
# The line that introduces a quoted block: `On … wrote:`, `Am … schrieb …:`, `Le … a écrit :`,
# `El … escribió:` and their kin, whole or wrapped over up to three lines. Any other line
# ending with `:` counts as one only when a quoted block follows it (mutt's `* %n <%a> [%d]:`).
ATTRIBUTION_LEAD = r"(?:on|am|le|el|il|op|den|em|w dniu|dne|på) "
ATTRIBUTION_LEAD_RE = re.compile(ATTRIBUTION_LEAD, re.IGNORECASE)
ATTRIBUTION_RE = re.compile(
    ATTRIBUTION_LEAD + r".*\b(?:wrote|writes|schrieb|schreibt|a écrit|a ecrit|escribió"
    r"|escribio|ha scritto|schreef|skrev|napisał|napisal|escreveu|kirjoitti|írta|napsal"
    r"|написал|написала)\b.*:",
    re.IGNORECASE,
)
ATTRIBUTION_LINES = 3
# Blank lines a client leaves between an attribution and its quoted block (alpine: one).
ATTRIBUTION_GAP = 2
GREETING_WORDS = (
    "hi|hello|hey|hiya|howdy|dear|greetings|good (?:morning|afternoon|evening|day)|yo"
    "|hallo|moin|servus|liebe|lieber|guten (?:tag|morgen|abend)|grüß dich|gruss|grüezi"
    "|bonjour|bonsoir|salut|coucou|cher|chère|hola|buenos días|buenos dias|buenas"
    "|querido|querida|estimado|estimada|ciao|salve|buongiorno|buonasera|caro|cara"
    "|hej|hejsan|hei|hoi|beste|goedemorgen|goedemiddag|olá|oi|bom dia|boa tarde"
    "|cześć|witam|witaj|dzień dobry|привет|здравствуйте|ahoj|merhaba"
)
# A name after the greeting starts with two letters, so that no move (`a1-c5`, `e5`) is one.
GREETING_RE = re.compile(
    rf"(?:{GREETING_WORDS})(?:[ ,]+[^\W\d_]{{2,}}[\w.'’-]*){{0,3}}[ ,!.:;]*",
    re.IGNORECASE,
)
PGP_BEGIN = "-----BEGIN PGP SIGNED MESSAGE-----"
PGP_SIGNATURE = "-----BEGIN PGP SIGNATURE-----"
PGP_END = "-----END PGP SIGNATURE-----"


def plain_lines(text: str) -> list[str]:
    """The body as lines: one kind of line ending, no control characters, no trailing
    blanks, and an inline PGP signature reduced to the text it signs."""
    text = CONTROL_RE.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))
    return _unsigned([line.rstrip() for line in text.split("\n", MAX_LINES)[:MAX_LINES]])


def _unsigned(lines: list[str]) -> list[str]:
    """An inline-signed text (RFC 4880, section 7): the armor header lines up to a blank line are
    dropped, dash-escaped lines (`- -- `) unescaped, the signature block removed."""
    try:
        start = next(i for i, line in enumerate(lines) if line.strip() == PGP_BEGIN)
    except StopIteration:
        return lines
    body = start + 1
    while body < len(lines) and lines[body].strip():
        body += 1
    end = next(
        (i for i in range(body, len(lines)) if lines[i].strip() == PGP_SIGNATURE), len(lines)
    )
    after = next((i + 1 for i in range(end, len(lines)) if lines[i].strip() == PGP_END), end)
    signed = [line[2:] if line.startswith("- ") else line for line in lines[body + 1 : end]]
    return lines[:start] + signed + lines[after:]


def _is_quote(line: str) -> bool:
    return line.lstrip().startswith(">")


def _quote_follows(lines: list[str], i: int) -> bool:
    for line in lines[i : i + ATTRIBUTION_GAP + 1]:
        if line.strip():
            return _is_quote(line)
    return False


def _attribution(lines: list[str], i: int) -> int:
    """The number of lines of an attribution starting at line i, 0 if none; negative when
    no quoted block follows it (then the original follows unquoted, or nothing does)."""
    line = lines[i].strip()
    if line.endswith(":"):
        if _quote_follows(lines, i + 1):
            return 1
        return -1 if ATTRIBUTION_RE.fullmatch(line) else 0
    if not ATTRIBUTION_LEAD_RE.match(line):
        return 0
    for span in range(2, ATTRIBUTION_LINES + 1):
        part = lines[i : i + span]
        if len(part) < span or not part[-1].strip():
            return 0
        if part[-1].endswith(":"):
            if not ATTRIBUTION_RE.fullmatch(" ".join(p.strip() for p in part)):
                return 0
            return span if _quote_follows(lines, i + span) else -span
    return 0


def _ends_own_words(lines: list[str], i: int) -> bool:
    trimmed = lines[i].strip()
    if ENDS_RE.match(trimmed):
        return True
    if HEADER_FROM_RE.match(trimmed):
        return any(HEADER_NEXT_RE.match(line.strip()) for line in lines[i + 1 : i + 4])
    return False


def _runs(lines: list[str]) -> list[list[str]]:
    """The stretches of the sender's own lines between quoted blocks, up to the first line
    that ends them."""
    runs: list[list[str]] = []
    run: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line:
            run.append(line)
            i += 1
            continue
        if _ends_own_words(lines, i):
            break
        quote = _is_quote(line)
        span = 1 if quote else _attribution(lines, i)
        if span < 0:
            break
        if span:
            if run:
                runs.append(run)
                run = []
            i += span
            continue
        run.append(line)
        i += 1
    if run:
        runs.append(run)
    return [trimmed for trimmed in (_trimmed(run) for run in runs) if trimmed]


def _trimmed(lines: list[str]) -> list[str]:
    start = next((i for i, line in enumerate(lines) if line.strip()), len(lines))
    end = len(lines)
    while end > start and not lines[end - 1].strip():
        end -= 1
    return lines[start:end]


def _names(sender_name: str, address: str) -> set[str]:
    """How a sender's signature may begin: the display name, its first word, the address's
    local part."""
    names = set()
    name = " ".join(sender_name.split()).casefold()
    if name:
        names |= {name, name.split()[0]}
    local = address.partition("@")[0].casefold()
    if local:
        names.add(local)
    return {n for n in names if len(n) >= 2}


def _is_signed_by(paragraph: list[str], names: set[str]) -> bool:
    first = paragraph[0].strip(" \t-—–,.!").casefold()
    return any(
        first == name or (first.startswith(name) and not first[len(name)].isalnum())
        for name in names
    )


def _without_bare_signature(runs: list[list[str]], names: set[str]) -> list[list[str]]:
    """alpine writes its signature above the quoted mail with no `-- ` line before it (its
    defaults: signature-at-bottom and enable-sigdashes off), and another client may write
    one below: a closing paragraph of a stretch that begins with the sender's name, never
    the first paragraph of the mail, is taken for a signature."""
    if not names:
        return runs
    kept = []
    for number, run in enumerate(runs):
        starts = [0] + [i + 1 for i, line in enumerate(run) if not line.strip()]
        last = max(s for s in starts if s < len(run) and run[s].strip())
        if (number or last) and _is_signed_by(run[last:], names):
            run = _trimmed(run[:last])
        if run:
            kept.append(run)
    return kept


def own_lines(text: str, sender_name: str = "", address: str = "") -> list[str]:
    """The sender's own words, stretches between quoted blocks joined by a blank line;
    leading and trailing blank lines removed, inner ones kept."""
    runs = _without_bare_signature(_runs(plain_lines(text)), _names(sender_name, address))
    joined: list[str] = []
    for run in runs:
        joined += ([""] if joined else []) + run
    return joined


def is_greeting(line: str) -> bool:
    return bool(GREETING_RE.fullmatch(line.strip()))


def after_greetings(lines: list[str]) -> list[str]:
    """A reply's own lines from its first line on (docs/spec/server.md §11.3): the greetings
    above it set aside. That line is the command, whatever it says: no later line is ever
    looked for."""
    start = 0
    while start < len(lines) and (not lines[start].strip() or is_greeting(lines[start])):
        start += 1
    return lines[start:]
