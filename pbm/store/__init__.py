"""All of pbm's SQL: the schema's migrations (migrations.py), and every query the core
runs, by concern.

`Store` holds the connection and its transactions; `store.users`, `store.boards`,
`store.votes`, `store.watching`, `store.ratings`, `store.limits`, `store.outbox`,
`store.tokens`, `store.robots`, `store.invitations`, `store.seeks` and `store.tournaments`
hold the queries of one concern each and hand out rows as the records of `records`.
"""

from .connection import Store, is_busy_or_full, unusable_database_cause
from .migrations import core_migrations
from .records import (
    BoardRecord,
    ChallengeSettingsRecord,
    InvitationRecord,
    InvitationSeatRecord,
    LoggedPlyRecord,
    OutboxEntry,
    OutboxHealth,
    OutboxRow,
    PlyRecord,
    QueuedRecord,
    RatingChangeRecord,
    RatingRecord,
    ReplyTokenRecord,
    ResetCodeRecord,
    ResultRecord,
    ResultSeatRecord,
    RobotRecord,
    SeekRecord,
    SubmissionRecord,
    TournamentBoardRecord,
    TournamentEntrantRecord,
    TournamentRecord,
    TournamentTag,
    UserRecord,
    VacationRecord,
    VoteRecord,
)

__all__ = [
    "BoardRecord",
    "ChallengeSettingsRecord",
    "InvitationRecord",
    "InvitationSeatRecord",
    "LoggedPlyRecord",
    "OutboxEntry",
    "OutboxHealth",
    "OutboxRow",
    "PlyRecord",
    "QueuedRecord",
    "RatingChangeRecord",
    "RatingRecord",
    "ResetCodeRecord",
    "ReplyTokenRecord",
    "ResultRecord",
    "ResultSeatRecord",
    "RobotRecord",
    "SeekRecord",
    "Store",
    "SubmissionRecord",
    "TournamentBoardRecord",
    "TournamentEntrantRecord",
    "TournamentRecord",
    "TournamentTag",
    "UserRecord",
    "VacationRecord",
    "VoteRecord",
    "core_migrations",
    "is_busy_or_full",
    "unusable_database_cause",
]
