"""One answer per incoming mail, within a ceiling on all the mail it makes the server send
(docs/spec/server.md §7.1; docs/security.md, issue 25).

A command's direct answers (Context.reply) are not queued one by one: the answers of one
command, and those of all the commands of a `multiple` body, go to the sender as one mail
whose sections say which command each answers. Whatever the commands of a `multiple` body
make the server send is charged to the mail's ceiling as it is queued; a command that would
take the mail past it is undone, and neither it nor the commands after it are run. Answers
to one address are capped per hour and per day, past which they are not sent.
"""

import logging
import re
from dataclasses import dataclass

from .clock import DAY, HOUR, now, stamp
from .grammar import GrammarError, mask_unparsed, normalize, parse
from .mailout import queue_measured
from .message import LINE_WIDTH, Mail, compose, wrap_text
from .request import Result
from .security import mask_secrets

log = logging.getLogger("pbm.answers")

# An error mail quotes this much of the mail it answers, and says where it stopped
# (templates/mail/error.txt).
QUOTE_LIMIT_BYTES = 4096
# Board mails of a board the mail moves or starts: what a normal move sends.
BOARD_MAIL_KINDS = ("board", "new_board")
# A command line as a heading or in the list of commands not run: one short line.
SHOWN_COMMAND_BYTES = 64
SUBJECT_COMMAND_CHARS = 60
# What the one answer of a `multiple` mail may take beyond its sections (its headers, its
# headings and the list of commands not run), reserved from the mail's ceiling at the start.
ANSWER_FRAME_BYTES = 8192
BODY_RE = re.compile(r"<body[^>]*>(.*)</body>", re.S | re.I)


class OverCeiling(Exception):
    """Raised inside a command's savepoint: its mail would take the incoming mail past its
    ceiling, so it is undone."""


@dataclass
class Cost:
    mails: int = 0
    bytes: int = 0

    def add(self, other: "Cost"):
        self.mails += other.mails
        self.bytes += other.bytes


@dataclass
class Section:
    """The direct answers of one command, under the command line as the answer shows it
    (passwords masked); `number` is its line in a `multiple` body."""

    command: str
    mails: list[Mail]
    number: int | None = None


@dataclass
class NotRun:
    number: int
    command: str


def capped_quote(lines: list[str], limit: int = QUOTE_LIMIT_BYTES) -> tuple[list[str], bool]:
    """(the lines an error mail quotes, whether some were left out): at most `limit` bytes
    of UTF-8 in all, the last line cut where the limit falls."""
    kept, left = [], limit
    for line in lines:
        data = line.encode("utf-8")
        if len(data) > left:
            head = data[:left].decode("utf-8", "ignore")
            if head:
                kept.append(head)
            return kept, True
        kept.append(line)
        left -= len(data)
    return kept, False


def shown_command(text: str, secrets) -> str:
    """A command line as an answer shows it: its passwords masked, or, where the syntax is
    unknown (secrets None), every word after the second hidden; cut to a heading's length."""
    words = normalize(text).split()
    if secrets is None:
        shown = " ".join(mask_unparsed(words))
    else:
        shown = mask_secrets(" ".join(words), secrets)
    data = shown.encode("utf-8")
    if len(data) > SHOWN_COMMAND_BYTES:
        shown = data[: SHOWN_COMMAND_BYTES - 3].decode("utf-8", "ignore") + "..."
    return shown


def shown_line(text: str, games, timeouts) -> str:
    """A `multiple` line that was not run, as the answer names it: the words in a userid's
    and a password's place are both masked (nothing checked which is which)."""
    try:
        parsed = parse(text, games, timeouts)
    except GrammarError:
        return shown_command(text, None)
    hidden = list(parsed.secrets)
    positions = parsed.spec.auth_positions(parsed.args)
    if positions is not None:
        hidden += [parsed.args[i] for i in positions if i < len(parsed.args)]
    return shown_command(text, hidden)


def cost_of(store, mail: Mail, size: int) -> Cost:
    """What a queued mail costs the incoming mail's ceiling: a board mail of a board the
    mail moves or starts, to a member of its audience at addresses confirmed for them,
    counts as one mail; any other mail counts its bytes as well."""
    if (
        mail.kind in BOARD_MAIL_KINDS
        and mail.userid is not None
        and all(store.limits.address_proven(mail.userid, address) for address in mail.to)
    ):
        return Cost(1, 0)
    return Cost(1, size)


class Answering:
    """The direct answers of the commands of one `multiple` mail, sent as one mail when the
    last has run, and what the mail has made the server send so far (its ceiling)."""

    def __init__(self, server, request, lines: int):
        self.server = server
        self.request = request
        self.lines = lines
        self.sections: list[Section] = []
        self.not_run: list[NotRun] = []
        self.over_line_limit: tuple[int, int] | None = None  # (first line not run, last)
        self.spent = Cost(1, ANSWER_FRAME_BYTES)  # the answer itself, reserved
        self.commands = 0  # run so far
        self.number = 0  # the line of the command running
        self.result = Result(ok=True)
        config = server.config
        self.ceiling = Cost(
            config.number("limits.mails_per_incoming_mail"),
            config.number("limits.bytes_per_incoming_mail"),
        )

    def add(self, ctx, answers: list[Mail], cost: Cost):
        """Charge one command's mail to the ceiling and keep its answers; OverCeiling (the
        command is then undone) when it would go past, unless it is the mail's first."""
        charge = Cost(cost.mails, cost.bytes)
        for mail in answers:
            # As the mail it would have been alone: the one answer costs no more.
            charge.bytes += len(compose(self.server.config, mail).as_bytes())
        if self.commands and (
            self.spent.mails + charge.mails > self.ceiling.mails
            or self.spent.bytes + charge.bytes > self.ceiling.bytes
        ):
            raise OverCeiling()
        self.commands += 1
        self.spent.add(charge)
        if answers:
            self.sections.append(Section(command_of(ctx), answers, self.number))

    def merge(self, result: Result):
        self.result.ok = self.result.ok and result.ok and not result.not_run
        self.result.printed.extend(result.printed)
        self.result.queued.extend(result.queued)

    def skip(self, number: int, line: str):
        """A command not run because the mail reached its ceiling."""
        self.result.ok = False
        defaults = self.server.timeout_defaults()
        timeouts = (defaults["nag_days"], defaults["forfeit_days"])
        self.not_run.append(NotRun(number, shown_line(line, self.server.games, timeouts)))

    def skip_over_limit(self, first: int, last: int):
        self.result.ok = False
        self.over_line_limit = (first, last)

    def finish(self) -> list[int]:
        """Queue the one answer, in the transaction of the commands (print it for the
        operator); the outbox rows queued."""
        mail = combined_answer(self.server, self.sections, self)
        if mail is None:
            return []
        if self.request.operator:
            self.result.printed.append(mail)
            return []
        queued = len(self.result.queued)
        send_answer(self.server, self.request, mail, self.result)
        return [row_id for row_id, _ in self.result.queued[queued:]]


def command_of(ctx) -> str:
    return shown_command(ctx.request.text, ctx.secrets if ctx.parsed else None)


def answer_command(server, ctx, answers: list[Mail], result: Result):
    """The answer to a command that came alone: its answers in one mail."""
    mail = combined_answer(server, [Section(command_of(ctx), answers)], None)
    if mail is not None:
        send_answer(server, ctx.request, mail, result)


def combined_answer(server, sections, answering) -> Mail | None:
    """The one answer: a command's only answer as it is; else one mail with a section per
    answer, under the command it answers, and (`answering` a `multiple`'s) the commands
    not run."""
    mails = [mail for section in sections for mail in section.mails]
    not_run = answering.not_run if answering else []
    over = answering.over_line_limit if answering else None
    if len(mails) == 1 and not not_run and not over:
        return mails[0]
    if not mails and not not_run and not over:
        return None
    threads = {mail.headers.get("References") for mail in mails}
    one_board = len(threads) == 1 and None not in threads
    headers = {"References": threads.pop()} if one_board else {}
    carriers = [mail.headers for mail in mails if "Reply-To" in mail.headers]
    if one_board and carriers:
        # The latest token (an earlier one may be stale already), with the Message-ID it
        # was written with: the mail that carries it is this one.
        headers["Reply-To"] = carriers[-1]["Reply-To"]
        if "Message-ID" in carriers[-1]:
            headers["Message-ID"] = carriers[-1]["Message-ID"]
    views = [
        {
            "heading": f"{s.number}. {s.command}" if s.number is not None else None,
            "parts": [
                {
                    "subject": mail.subject,
                    "body": mail.body,
                    "link": None
                    if one_board or "Reply-To" not in mail.headers
                    else f"mailto:{mail.headers['Reply-To']}",
                    "html": _inner_html(mail.html.html) if mail.html is not None else None,
                }
                for mail in s.mails
            ],
        }
        for s in sections
    ]
    values = {
        "sections": views,
        "commands": answering.lines if answering else None,
        "command": None if answering else sections[0].command,
        "not_run": not_run,
        "over": over,
        "ceiling": answering.ceiling if answering else None,
        "line_limit": server.config.number("limits.max_multiple_lines"),
    }
    text = _byte_wrapped(server.render("mail/answers.txt", **values))
    # With an HTML part only when each answer has one: a text answer's copy in it would make
    # the answer cost more than the mails it stands for.
    html = None
    if mails and all(mail.html is not None for mail in mails):
        html = _combined_html(server, values, mails)
    kinds = {mail.kind for mail in mails}
    if answering:
        subject = f"Answers to your {answering.lines} commands"
    else:
        command = values["command"]
        if len(command) > SUBJECT_COMMAND_CHARS:
            command = command[: SUBJECT_COMMAND_CHARS - 3] + "..."
        subject = f"Answers to: {command}"
    return Mail(
        kinds.pop() if len(kinds) == 1 else "answers",
        subject,
        text,
        [],
        reply=True,
        to_sender=True,
        headers=headers,
        html=html,
        attachments=tuple(a for mail in mails for a in mail.attachments),
    )


def _inner_html(html: str) -> str:
    """The content of an HTML part's body, to stand among other answers' (user text in it
    is escaped, so its own tags are the template's)."""
    match = BODY_RE.search(html)
    return match.group(1) if match else html


def _combined_html(server, values, mails):
    # deferred: only an answer with a board's picture in it needs them
    from markupsafe import Markup

    from .htmlmail import HtmlPart
    from .templating import html_environment

    for section in values["sections"]:
        for part in section["parts"]:
            if part["html"] is not None:
                part["html"] = Markup(part["html"])
    environment = html_environment(server.config.home)
    html = environment.get_template("mail/answers.html").render(**values)
    pictures = {}
    for mail in mails:
        for picture in mail.html.pictures if mail.html is not None else ():
            pictures.setdefault(picture.cid, picture)
    return HtmlPart(html, tuple(pictures.values()))


def _byte_wrapped(text: str, limit: int = LINE_WIDTH) -> str:
    """Lines of at most `limit` bytes: the answer then goes as 7 or 8 bit, never as
    quoted-printable or base64 (mailout.text_part), so it costs no more than the mails it
    stands for."""
    lines = []
    for line in wrap_text(text).split("\n"):
        while len(line.encode("utf-8")) > limit:
            head = line.encode("utf-8")[:limit].decode("utf-8", "ignore")
            lines.append(head)
            line = line[len(head) :]
        lines.append(line)
    return "\n".join(lines)


def send_answer(server, request, mail: Mail, result: Result):
    """Queue the answer to the sender, unless the sender has had their answers for the hour
    or the day (limits.answers_per_*): it is then logged and counted, not sent."""
    store, config = server.store, server.config
    address = request.sender.lower()
    moment = now()
    if store.limits.address_confirmed(address):
        per_hour = config.number("limits.answers_per_confirmed_address_per_hour")
        per_day = config.number("limits.answers_per_confirmed_address_per_day")
    else:
        per_hour = config.number("limits.answers_per_address_per_hour")
        per_day = config.number("limits.answers_per_address_per_day")
    reached = store.limits.limit_reached_at
    if reached("answer", address, stamp(moment - DAY), per_day) or reached(
        "answer", address, stamp(moment - HOUR), per_hour
    ):
        log.warning("answer cap: %s answer to %s not sent", mail.kind, address)
        store.limits.add_rate_event("answer_withheld", address, stamp(moment))
        return
    store.limits.add_rate_event("answer", address, stamp(moment))
    mail.to = [request.sender]
    row_id, _ = queue_measured(store, config, mail, request.message_id, request.key)
    result.queued.append((row_id, mail))
