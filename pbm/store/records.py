"""The rows the store hands out: immutable records, read by attribute.

A record names the columns it carries, and a query's row is read by those names, so a
column a later migration adds is simply not seen until its record grows the field.

Every mail starts a process that defines all of them, so defining one must be cheap: a
frozen slotted dataclass costs about 0.6 ms, a typing.NamedTuple about 0.1 ms (it compiles
generated source), a `Record` subclass a few microseconds. A Record is a tuple with a
read-only property per annotated field, and the NamedTuple methods the core uses
(`_fields`, `_make`, `_replace`).
"""

from operator import itemgetter


class Record(tuple):
    __slots__ = ()
    _fields: tuple[str, ...] = ()
    _defaults: dict = {}

    def __init_subclass__(cls):
        fields = tuple(cls.__dict__.get("__annotations__", {}))
        cls._defaults = {name: cls.__dict__[name] for name in fields if name in cls.__dict__}
        cls._fields = fields
        for index, name in enumerate(fields):
            setattr(cls, name, property(itemgetter(index)))

    def __new__(cls, *values, **named):
        fields = cls._fields
        if len(values) > len(fields):
            raise TypeError(f"{cls.__name__} takes {len(fields)} fields, not {len(values)}")
        rest = []
        for name in fields[len(values) :]:
            if name in named:
                rest.append(named.pop(name))
            elif name in cls._defaults:
                rest.append(cls._defaults[name])
            else:
                raise TypeError(f"{cls.__name__} needs the field {name}")
        if named:
            raise TypeError(f"{cls.__name__} has no field {', '.join(named)}")
        return tuple.__new__(cls, values + tuple(rest))

    @classmethod
    def _make(cls, values):
        return cls(*values)

    def _replace(self, **changes):
        return type(self)(*(changes.pop(name, value) for name, value in zip(self._fields, self)))

    def __repr__(self):
        shown = ", ".join(f"{name}={value!r}" for name, value in zip(self._fields, self))
        return f"{type(self).__name__}({shown})"

    def __setattr__(self, name, value):
        raise AttributeError(f"{type(self).__name__} is read-only")


class UserRecord(Record):
    userid: str
    password_hash: str | None
    status: str  # active, deleted
    created_at: str
    deleted_at: str | None


class RobotRecord(Record):
    """A user the server moves for (docs/spec/server.md §11.7)."""

    userid: str
    game: str
    robot: str  # the robot's name among its game's robots
    seconds: float  # the move's time budget
    created_at: str
    # Answers the open seeks of its game that waited this long (docs/spec/server.md §11.2);
    # None: it answers none.
    seek_after_hours: float | None = None


class ResetCodeRecord(Record):
    id: int
    userid: str
    code_digest: str
    created_at: str
    expires_at: str
    token_id: str | None  # the id of the reset mail's reply token (replies.new_reset_token)


class VacationRecord(Record):
    id: int
    userid: str
    started_at: str
    ended_at: str | None
    ended_by: str | None


class ChallengeSettingsRecord(Record):
    game: str
    userid: str
    max_active: int | None
    seeking: int
    inactive: int
    invitations: int = 0  # challenges naming the user become invitations


class BoardRecord(Record):
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
    # The correspondence clock (docs/spec/server.md §9.5), in seconds; None: no clock.
    clock_initial: int | None = None
    clock_increment: int | None = None
    clock_cap: int | None = None


class PlyRecord(Record):
    """One entry of a board's log: a move, pass, swap, resignation or forfeit."""

    ply: int
    seat: int
    userid: str
    kind: str
    text: str
    auto: int
    charged: int  # seconds of the mover's clock
    created_at: str
    # Seconds the correspondence clock ran for the ply (docs/spec/server.md §9.5); None on
    # a board without one.
    clock_charged: int | None = None


class LoggedPlyRecord(Record):
    """One entry of a board's log as stored, undone or not: the board's record shows both."""

    ply: int
    seat: int
    userid: str
    kind: str
    text: str
    auto: int
    charged: int
    created_at: str
    undone_at: str | None


class VoteRecord(Record):
    board_id: int
    kind: str  # draw, undo
    proposer: str
    created_at: str
    accepted: list[str]
    last_nag_at: str | None


class QueuedRecord(Record):
    """A seat's queued move and its pending resignation."""

    board_id: int
    seat: int
    move_text: str | None
    guard: str | None
    comment: str | None
    resign: int


class SubmissionRecord(Record):
    """A simultaneous-move game's hidden move, waiting for the other seats'."""

    board_id: int
    seat: int
    move_text: str
    guard: str | None
    comment: str | None
    move_number: int


class RatingRecord(Record):
    game: str
    userid: str
    rating: int
    games: int
    won: int
    lost: int
    tied: int


class RatingChangeRecord(Record):
    result_id: int
    userid: str
    before: int
    after: int
    provisional: int


class ResultSeatRecord(Record):
    seat: int
    userid: str
    score: float


class ResultRecord(Record):
    id: int
    game: str
    board_id: int
    finished_at: str
    rated: int
    points: int
    reason: str | None
    seats: tuple[ResultSeatRecord, ...] = ()
    number: int | None = None  # the board's number, where the query joins it


class InvitationRecord(Record):
    """An invitation (docs/spec/server.md §11.1) and the board number it reserved."""

    id: int
    game: str
    number: int
    inviter: str | None  # None: a challenge that became an invitation without one
    options: dict
    server_options: dict
    comment_author: str | None
    comment_text: str | None
    created_at: str
    lapses_at: str
    status: str  # open, started, declined, withdrawn, lapsed
    ended_at: str | None


class InvitationSeatRecord(Record):
    invitation_id: int
    seat: int
    userid: str
    accepted: int
    token_id: str | None  # the invitation token of the user's first seat; None on the others


class SeekRecord(Record):
    """A user's open seeks of a game (docs/spec/server.md §11.2): the count and its terms."""

    game: str
    userid: str
    options: dict
    server_options: dict
    rating_low: int | None  # the opponents' ratings accepted; None: any
    rating_high: int | None
    created_at: str
    lapses_at: str
    seeking: int  # the seeking count, as the standings show it


class OutboxRow(Record):
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


class OutboxEntry(Record):
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


class OutboxHealth(Record):
    """How many mails wait in one state, and since when the oldest: `pbm status`."""

    status: str
    count: int
    oldest_at: str | None


class ReplyTokenRecord(Record):
    """What one reply token was issued for (docs/spec/server.md §11.3)."""

    id: str
    game: str
    number: int
    userid: str
    move_number: int
    created_at: str
    expires_at: str
    message_id: str | None = None  # of the mail that carried it


class BounceRecord(Record):
    """One failure a bounce reported for an address we mailed."""

    id: int
    address: str
    kind: str  # permanent, temporary
    at: str
    outbox_id: int
    detail: str | None


class FailingAddressRecord(Record):
    """An address pbm no longer mails: since when, and the failure that marked it."""

    address: str
    since: str
    reason: str
    outbox_id: int | None


class UnsubscribeTokenRecord(Record):
    """The stream a List-Unsubscribe token turns off: nag, digest, subscription, notify."""

    token: str
    userid: str
    stream: str
    game: str | None
    number: int | None


class TournamentRecord(Record):
    """A round-robin tournament (docs/spec/server.md §11.9) and its terms."""

    id: int
    name: str
    game: str
    options: dict  # the plugin's, normalised for two seats
    server_options: dict  # every board's: nag, forfeit and total days, the clock
    largest: int  # the largest division
    start_at: str | None  # it starts then, with whoever has joined
    start_players: int | None  # it starts as soon as this many have joined
    creator: str | None  # None: the operator
    status: str  # open, running, finished, called_off
    created_at: str
    started_at: str | None
    ended_at: str | None


class TournamentEntrantRecord(Record):
    tournament_id: int
    userid: str
    joined_at: str
    division: int | None  # from the start
    rating: int | None  # the rating the divisions were sorted by
    status: str  # playing; left (after the start); timed_out (two losses on time)
    left_at: str | None


class TournamentBoardRecord(Record):
    """A board of a tournament's division, its seats as paired, and how it stands."""

    board_id: int
    tournament_id: int
    division: int
    white: str
    black: str
    reported_at: str | None  # when a digest or the final mail reported its end
    number: int  # the board's number in the tournament's game
    status: str  # the board's: active, finished
    finished_at: str | None


class TournamentTag(Record):
    """What a board mail says of the tournament the board belongs to."""

    tournament_id: int
    name: str
    division: int
