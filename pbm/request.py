"""What reaches the dispatcher and what it answers; light enough for mail_handler.py to
build a request before the rest of the server is imported."""

from dataclasses import dataclass, field


@dataclass
class Request:
    text: str
    body: str = ""
    sender: str | None = None  # where direct replies go; None: the operator at a terminal
    key: str | None = None  # inbox key against duplicates
    message_id: str | None = None
    body_lines: list[str] = field(default_factory=list)  # the stripped body, for quoting
    token: str | None = None  # a reply token (replies.py): `text` is then the reply's first line
    subject: str = ""  # a reply's Subject, which is not its command: quoted in an error mail

    @property
    def operator(self) -> bool:
        return self.sender is None


@dataclass
class Result:
    ok: bool
    duplicate: bool = False
    printed: list = field(default_factory=list)  # Mail for the operator's terminal
    queued: list = field(default_factory=list)  # (outbox row id, Mail)
