"""One mail in, one outcome out: the same steps for the MTA pipe (mail_handler.py), the SMTP
listener (`pbm serve`) and the tests. A mail is consumed only when it was answered or the
spec says to drop it; anything the operator can cure (permissions, a missing or damaged
database, a bad pbm.ini, a full disk) leaves it with the MTA to retry (exit 75, SMTP 451),
is logged in one line naming the cause and the cure, and is mailed to the operator at most
once an hour per cause."""

import json
import logging
import os
import sys
import tempfile
import time
from dataclasses import dataclass
from hashlib import sha256
from pathlib import Path

from .config import Config, resolve_home
from .failures import Cause, curable_cause
from .homelock import handling_mail
from .mailin import (
    read_limited,
    read_message,
    recipients_from_environment,
    setup_logging,
    start_password_check,
)
from .private import make_folders, private_opener

log = logging.getLogger("pbm.intake")

ALERT_EVERY_SECONDS = 3600
ALERT_STATE = "alerts.json"


@dataclass
class MailOutcome:
    consumed: bool  # False: the MTA must keep the mail and try again later
    cause: Cause | None = None
    result: object = None  # the dispatcher's Result, when a command ran


class DirectServer:
    """Run a mail on a server that is already open (the tests, `pbm serve`'s worker)."""

    def __init__(self, server):
        self.server = server

    def early_check(self, config, request):
        return None

    def run(self, request, refusal, early):
        if refusal is not None:
            return self.server.refuse_message(request, refusal)
        return self.server.execute(request, early=early)


class OpenPerMail:
    """The pipe: the password check starts before the rest of pbm is imported, then the
    server is opened for this one mail."""

    def __init__(self, config):
        self.config = config

    def early_check(self, config, request):
        return start_password_check(config, request)

    def run(self, request, refusal, early):
        # deferred: the dispatcher, the commands and the games load while the early
        # password check (start_password_check) runs
        from .dispatch import open_server

        with open_server(self.config) as server:
            return DirectServer(server).run(request, refusal, early)


def read_for_command(
    config: Config,
    raw: bytes,
    size: int,
    envelope_sender: str | None,
    envelope_recipients,
    checker,
) -> tuple | None:
    """(request, refusal, early check) for one mail, None when it must get no answer: the
    reading that `pbm serve` does in its reader processes (pbm/readerpool.py). `checker`
    starts the early password check: a pipeline, or a reader's ReaderChecks."""
    request, refusal = read_message(config, raw, size, envelope_sender, envelope_recipients)
    if request is None:
        return None
    early = None
    if refusal is None and request.token is None and not request.stranger:
        early = checker.early_check(config, request)
    return request, refusal, early


def process_message(
    raw: bytes,
    size: int,
    envelope_sender: str | None,
    pipeline=None,
    config: Config | None = None,
    home=None,
    envelope_recipients=None,
) -> MailOutcome:
    """Read one mail and run it. `pipeline` runs the request (default: open the server for
    this mail); `config` is loaded from `home` when not given. `envelope_recipients` are the
    addresses the MTA delivered it to, where a reply token is read from."""
    home = config.home if config is not None else resolve_home(home)
    try:
        if config is None:
            config = Config.load(home)
        pipeline = pipeline or OpenPerMail(config)
        with handling_mail(home):
            read = read_for_command(
                config, raw, size, envelope_sender, envelope_recipients, pipeline
            )
            if read is None:
                return MailOutcome(consumed=True)
            return MailOutcome(consumed=True, result=pipeline.run(*read))
    except Exception as error:
        return failed_outcome(error, home)


def failed_outcome(error: Exception, home: Path) -> MailOutcome:
    """The outcome of a mail whose handling raised: left with the MTA to retry, the
    operator told."""
    cause = curable_cause(error, home)
    if cause is None:
        # Our own bug: keep the mail for a fixed release rather than lose it.
        log.error("unexpected failure outside a command; the mail will be retried", exc_info=error)
        cause = Cause(
            "internal:" + type(error).__name__,
            f"unexpected {type(error).__name__}: {error}",
            "see the traceback in log/pbm.log and report it",
        )
    retry_later(home, cause)
    return MailOutcome(consumed=False, cause=cause)


def retry_later(home: Path, cause: Cause) -> None:
    """One log line naming the cause and the cure; the operator's mail at most hourly."""
    log.error("mail left with the MTA to retry: %s", cause.line())
    try:
        if _due(home, cause.kind):
            _alert(home, cause)
    except Exception as error:  # telling the operator must never stop the retry
        log.error("could not tell the operator: %s", error)


def _state_paths(home: Path) -> list[Path]:
    """Where the time of the last alert is kept: in the home, else (when the home is not
    writable) in the temporary directory, one file per home."""
    tag = sha256(str(Path(home).resolve()).encode()).hexdigest()[:12]
    return [
        Path(home) / "log" / ALERT_STATE,
        Path(tempfile.gettempdir()) / f"pbm-{os.getuid()}-{tag}-{ALERT_STATE}",
    ]


def _due(home: Path, kind: str) -> bool:
    """True, and recorded, when no alert of this kind went out in the last hour. When no
    state can be written anywhere, no mail is sent (it would go out for every retry)."""
    moment = time.time()
    for path in _state_paths(home):
        try:
            state = json.loads(path.read_text()) if path.exists() else {}
        except (OSError, ValueError):
            state = {}
        if moment - state.get(kind, 0) < ALERT_EVERY_SECONDS:
            return False
        state[kind] = moment
        try:
            make_folders(path.parent)
            scratch = path.with_name(f"{path.name}.{os.getpid()}")
            with open(scratch, "w", opener=private_opener) as handle:
                handle.write(json.dumps(state))
            os.replace(scratch, path)
            return True
        except OSError:
            continue
    return False


def _alert(home: Path, cause: Cause) -> None:
    send_alert(
        home,
        "pbm: incoming mail is waiting",
        f"pbm cannot handle incoming mail; the MTA keeps it and retries.\n\n"
        f"Cause: {cause.text}\nCure: {cause.cure}\n",
    )


def alert_operator(home: Path, kind: str, subject: str, body: str) -> None:
    """Mail the operator about a failure of one kind, at most once an hour (a robot that
    fails, docs/spec/server.md §11.7); a failure to tell is logged, never raised."""
    try:
        if _due(home, kind):
            send_alert(home, subject, body)
    except Exception as error:
        log.error("could not tell the operator: %s", error)


def send_alert(home: Path, subject: str, body: str) -> None:
    """Mail the operator directly: the outbox table lives in the database that may be the
    trouble. Maildir or SMTP, as configured; the defaults when pbm.ini is the trouble."""
    # deferred: start-up speed of the mail pipe (the early password check starts first)
    from .maildir import write_maildir
    from .mailout import send_smtp
    from .message import Mail, compose

    config = Config.load(home, strict=False)
    operator = config.get("server.operator_address")
    if not operator:
        return
    mail = Mail(kind="operator", to=[operator], subject=subject, body=body)
    message = compose(config, mail).as_bytes()
    if config.get("smtp.host"):
        send_smtp(config, [(config.get("server.bounce_address"), [operator])], message)
    else:
        write_maildir(config, f"alert-{int(time.time() * 1000)}-{os.getpid()}.pbm", message)


def main() -> int:
    """mail_handler.py: one mail on standard input; exit 0 when consumed, 75 to retry."""
    home = resolve_home()
    usable = Config.load(home, strict=False)  # a bad pbm.ini is process_message's to report
    setup_logging(usable)
    raw, size = read_limited(sys.stdin.buffer, usable.number("limits.max_message_bytes"))
    outcome = process_message(
        raw,
        size,
        os.environ.get("SENDER"),
        home=home,
        envelope_recipients=recipients_from_environment(os.environ),
    )
    if outcome.consumed:
        return os.EX_OK
    # The MTA shows this in its log and in the deferral reason.
    print(f"pbm: try again later: {outcome.cause.line()}", file=sys.stderr)
    return os.EX_TEMPFAIL
