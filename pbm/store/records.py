"""The rows the store hands out: immutable records, read by attribute.

A record names the columns it carries, and a query's row is read by those names, so a
column a later migration adds is simply not seen until its record grows the field.

Records are NamedTuples rather than frozen dataclasses: every mail starts a process that
defines all of them, and a frozen slotted dataclass takes about ten times as long to
define (0.6 ms against 0.07 ms here; the set of them put 8 ms on every mail).
"""

from typing import NamedTuple


class UserRecord(NamedTuple):
    userid: str
    password_hash: str | None
    status: str  # active, deleted
    created_at: str
    deleted_at: str | None


class ResetCodeRecord(NamedTuple):
    userid: str
    code_digest: str
    created_at: str
    expires_at: str
    token_id: str | None  # the id of the reset mail's reply token (replies.new_reset_token)


class VacationRecord(NamedTuple):
    id: int
    userid: str
    started_at: str
    ended_at: str | None
    ended_by: str | None


class ChallengeSettingsRecord(NamedTuple):
    game: str
    userid: str
    max_active: int | None
    seeking: int
    inactive: int


class BoardRecord(NamedTuple):
    id: int | None  # None: a board that lives only in one command (`preview new`)
    game: str
    number: int
    status: str  # active, finished, removed
    options: str  # JSON
    nag_days: int
    forfeit_days: int
    total_days: int
    seed: int
    created_at: str
    last_move_at: str
    last_nag_at: str | None
    finished_at: str | None
    archived_at: str | None
    rated: int
    comment_author: str | None
    comment_text: str | None
    comment_at: str | None
    snapshot_ply: int | None
    snapshot_state: str | None  # JSON


class PlyRecord(NamedTuple):
    """One entry of a board's log: a move, pass, swap, resignation or forfeit."""

    ply: int
    seat: int
    userid: str
    kind: str
    text: str
    auto: int
    charged: int  # seconds of the mover's clock
    created_at: str


class VoteRecord(NamedTuple):
    board_id: int
    kind: str  # draw, undo
    proposer: str
    created_at: str
    accepted: list[str]
    last_nag_at: str | None


class QueuedRecord(NamedTuple):
    """A seat's queued move and its pending resignation."""

    board_id: int
    seat: int
    move_text: str | None
    guard: str | None
    comment: str | None
    resign: int


class SubmissionRecord(NamedTuple):
    """A simultaneous-move game's hidden move, waiting for the other seats'."""

    board_id: int
    seat: int
    move_text: str
    guard: str | None
    comment: str | None
    move_number: int


class RatingRecord(NamedTuple):
    game: str
    userid: str
    rating: int
    games: int
    won: int
    lost: int
    tied: int


class RatingChangeRecord(NamedTuple):
    result_id: int
    userid: str
    before: int
    after: int
    provisional: int


class ResultSeatRecord(NamedTuple):
    seat: int
    userid: str
    score: float


class ResultRecord(NamedTuple):
    id: int
    game: str
    board_id: int
    finished_at: str
    rated: int
    points: int
    reason: str | None
    seats: tuple[ResultSeatRecord, ...] = ()
    number: int | None = None  # the board's number, where the query joins it


class OutboxRow(NamedTuple):
    """A queued mail with everything its delivery needs."""

    id: int
    created_at: str
    kind: str
    recipients: list[str]
    envelope_from: str | None
    message_id: str
    message: bytes
    status: str  # pending, sending, sent, failed
    attempts: int
    next_attempt_at: str | None
    claimed_at: str | None
    last_error: str | None
    sent_at: str | None
    inbox_key: str | None
    userid: str | None


class OutboxEntry(NamedTuple):
    """A queued mail's delivery state, without the message: `pbm outbox`."""

    id: int
    created_at: str
    kind: str
    recipients: list[str]
    message_id: str
    status: str
    attempts: int
    next_attempt_at: str | None
    last_error: str | None
    sent_at: str | None


class OutboxHealth(NamedTuple):
    """How many mails wait in one state, and since when the oldest: `pbm status`."""

    status: str
    count: int
    oldest_at: str | None


class ReplyTokenRecord(NamedTuple):
    """What one reply token was issued for (docs/spec/server.md §11.3)."""

    id: str
    game: str
    number: int
    userid: str
    move_number: int
    created_at: str
    expires_at: str
