"""What reaches the dispatcher and what it answers; light enough for mail_handler.py to
build a request before the rest of the server is imported."""

from dataclasses import dataclass, field
from typing import Any, Protocol


class ServiceWork(Protocol):
    """What a mail to a service address asks for (servicemail.py): it runs in place of a
    command, in the request's transaction; `answered` says whether its sender hears back."""

    answered: bool

    def run(self, ctx: Any) -> None: ...


@dataclass
class Request:
    text: str
    body: str = ""
    # The mail's origin (mailin.origin_address): who may use a reply token, whose limits
    # count, what a command confirms, where direct replies go. None: the operator.
    sender: str | None = None
    key: str | None = None  # inbox key against duplicates
    message_id: str | None = None
    body_lines: list[str] = field(default_factory=list)  # the stripped body, for quoting
    token: str | None = None  # a reply token (replies.py): `text` is then the reply's first line
    # A mail to a service address (a bounce, an unsubscribe): its `run(ctx)` stands for a
    # command (servicemail.py).
    service: ServiceWork | None = None
    stranger: bool = False  # the MTA's DMARC check failed for the origin: nothing runs
    subject: str = ""  # a reply's Subject, which is not its command: quoted in an error mail
    # The Message-IDs of ours a mail to the plain address answers (In-Reply-To, References):
    # one that carried a reply token stands for it (grants.thread_reply).
    replied_to: tuple[str, ...] = ()
    # A reply matched by the Message-ID it answers: the token that mail carried.
    thread_token_id: str | None = None

    @property
    def is_reply(self) -> bool:
        """A reply to one of our mails, read as one: its first line is the command."""
        return self.token is not None or self.thread_token_id is not None

    @property
    def operator(self) -> bool:
        return self.sender is None


@dataclass
class Result:
    ok: bool
    duplicate: bool = False
    printed: list = field(default_factory=list)  # Mail for the operator's terminal
    queued: list = field(default_factory=list)  # (outbox row id, Mail)
    # Undone and not run: its mail would have taken the incoming mail's past its ceiling.
    not_run: bool = False
