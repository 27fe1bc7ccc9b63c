"""The connection, its transactions and savepoints, and the schema's migrations.

Every read-then-write runs inside `Store.write()`, which opens the transaction with
BEGIN IMMEDIATE so two processes never interleave a check and its update.
"""

import sqlite3
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path

from ..private import create_private
from .boards import Boards
from .delivery import Delivery
from .invitations import Invitations
from .limits import Limits
from .outbox import Outbox
from .ratings import Ratings
from .robots import Robots
from .seeks import Seeks
from .tokens import ReplyTokens
from .tournaments import Tournaments
from .users import Users
from .votes import Votes
from .watching import Watching

BUSY_TIMEOUT_SECONDS = 30
GROUP_CHECKPOINT_PAGES = 10_000
CORE_SET = "pbm"
_CORE_STEPS = []


def _core_step(step):
    _CORE_STEPS.append(step)
    return step


@lru_cache(maxsize=1)
def core_migrations():
    """The core's sqlite-utils migration set. Built on demand: importing sqlite_utils costs
    more than a whole mail command, and only `pbm init` and `pbm migrate` need it."""
    # deferred: see above
    import sqlite_utils

    migrations = sqlite_utils.Migrations(CORE_SET)
    for step in _CORE_STEPS:
        migrations()(step)
    return migrations


@_core_step
def m001_core(db):
    db["users"].create(
        {"userid": str, "password_hash": str, "status": str, "created_at": str, "deleted_at": str},
        pk="userid",
        not_null={"status", "created_at"},
    )
    db["addresses"].create(
        {"id": int, "userid": str, "address": str, "position": int},
        pk="id",
        foreign_keys=[("userid", "users", "userid")],
        not_null={"userid", "address", "position"},
    )
    db["addresses"].create_index(["userid", "address"], unique=True)
    db["addresses"].create_index(["address"])
    db["counters"].create({"game": str, "next_number": int}, pk="game", not_null={"next_number"})
    db["boards"].create(
        {
            "id": int,
            "game": str,
            "number": int,
            "status": str,
            "options": str,
            "nag_days": int,
            "forfeit_days": int,
            "total_days": int,
            "seed": int,
            "created_at": str,
            "last_move_at": str,
            "last_nag_at": str,
            "finished_at": str,
            "archived_at": str,
            "rated": int,
            "comment_author": str,
            "comment_text": str,
            "comment_at": str,
            "snapshot_ply": int,
            "snapshot_state": str,
        },
        pk="id",
        not_null={"game", "number", "status", "options", "seed", "created_at", "last_move_at"},
    )
    db["boards"].create_index(["game", "number"], unique=True)
    db["boards"].create_index(["game", "status"])
    db["seats"].create(
        {"board_id": int, "seat": int, "userid": str},
        pk=("board_id", "seat"),
        foreign_keys=[("board_id", "boards", "id"), ("userid", "users", "userid")],
        not_null={"userid"},
    )
    db["seats"].create_index(["userid", "board_id"])
    db["moves"].create(
        {
            "id": int,
            "board_id": int,
            "ply": int,
            "seat": int,
            "userid": str,
            "kind": str,
            "text": str,
            "auto": int,
            "charged": int,
            "created_at": str,
            "undone_at": str,
        },
        pk="id",
        foreign_keys=[("board_id", "boards", "id")],
        not_null={
            "board_id",
            "ply",
            "seat",
            "userid",
            "kind",
            "text",
            "auto",
            "charged",
            "created_at",
        },
    )
    # A ply number is taken once per board among the plies still standing.
    db.execute(
        "CREATE UNIQUE INDEX idx_moves_live_ply ON moves (board_id, ply) WHERE undone_at IS NULL"
    )
    db["subscriptions"].create(
        {"board_id": int, "userid": str},
        pk=("board_id", "userid"),
        foreign_keys=[("board_id", "boards", "id"), ("userid", "users", "userid")],
    )
    db["subscriptions"].create_index(["userid"])
    db["challenge_settings"].create(
        {"game": str, "userid": str, "max_active": int, "seeking": int, "inactive": int},
        pk=("game", "userid"),
        foreign_keys=[("userid", "users", "userid")],
        not_null={"seeking", "inactive"},
        defaults={"seeking": 0, "inactive": 0},
    )
    db["results"].create(
        {
            "id": int,
            "game": str,
            "board_id": int,
            "finished_at": str,
            "rated": int,
            "points": int,
            "reason": str,
        },
        pk="id",
        foreign_keys=[("board_id", "boards", "id")],
        not_null={"game", "board_id", "finished_at", "rated", "points"},
    )
    db["results"].create_index(["board_id"])
    db["result_seats"].create(
        {"result_id": int, "seat": int, "userid": str, "score": float},
        pk=("result_id", "seat"),
        foreign_keys=[("result_id", "results", "id")],
        not_null={"userid", "score"},
    )
    db["inbox"].create({"key": str, "received_at": str}, pk="key", not_null={"received_at"})
    db["outbox"].create(
        {
            "id": int,
            "created_at": str,
            "kind": str,
            "recipients": str,
            "envelope_from": str,
            "message_id": str,
            "message": bytes,
            "status": str,
            "attempts": int,
            "next_attempt_at": str,
            "claimed_at": str,
            "last_error": str,
            "sent_at": str,
        },
        pk="id",
        not_null={
            "created_at",
            "kind",
            "recipients",
            "message_id",
            "message",
            "status",
            "attempts",
        },
        defaults={"attempts": 0},
    )
    db["outbox"].create_index(["status", "next_attempt_at"])
    db["audit"].create(
        {
            "id": int,
            "at": str,
            "kind": str,
            "game": str,
            "board": int,
            "userid": str,
            "detail": str,
        },
        pk="id",
        not_null={"at", "kind"},
    )


def core_step_names() -> list[str]:
    return [step.__name__ for step in _CORE_STEPS]


def is_busy_or_full(error: BaseException) -> bool:
    """A database error that waiting may cure: locked past the busy timeout, or a full disk."""
    if not isinstance(error, sqlite3.OperationalError):
        return False
    text = str(error).lower()
    return any(w in text for w in ("locked", "busy", "disk is full", "disk i/o"))


def unusable_database_cause(error: BaseException) -> str | None:
    """What is wrong when the database cannot be opened, read or written at all (the
    operator must act: permissions, a read-only mount, a damaged file), or None."""
    if not isinstance(error, sqlite3.DatabaseError) or is_busy_or_full(error):
        return None
    text = str(error).lower()
    for words, cause in (
        (("readonly", "read-only"), "the database is read-only to this user"),
        (("unable to open",), "the database cannot be opened"),
        (("not a database", "malformed", "corrupt"), "the database file is damaged"),
        (("no such table", "no such column"), "the database is not migrated"),
    ):
        if any(w in text for w in words):
            return f"{cause} ({error})"
    return f"database error ({error})"


@_core_step
def m002_votes_queues_watching_ratings(db):
    db["votes"].create(
        {
            "board_id": int,
            "kind": str,
            "proposer": str,
            "created_at": str,
            "accepted": str,
            "last_nag_at": str,
        },
        pk="board_id",
        foreign_keys=[("board_id", "boards", "id")],
        not_null={"kind", "proposer", "created_at", "accepted"},
    )
    db["queued"].create(
        {
            "board_id": int,
            "seat": int,
            "move_text": str,
            "guard": str,
            "comment": str,
            "resign": int,
        },
        pk=("board_id", "seat"),
        foreign_keys=[("board_id", "boards", "id")],
        not_null={"resign"},
        defaults={"resign": 0},
    )
    db["submissions"].create(
        {
            "board_id": int,
            "seat": int,
            "move_text": str,
            "guard": str,
            "comment": str,
            "move_number": int,
        },
        pk=("board_id", "seat"),
        foreign_keys=[("board_id", "boards", "id")],
        not_null={"move_text", "move_number"},
    )
    db["subscribe_all"].create(
        {"game": str, "userid": str},
        pk=("game", "userid"),
        foreign_keys=[("userid", "users", "userid")],
    )
    db["notify_board"].create(
        {"board_id": int, "userid": str},
        pk=("board_id", "userid"),
        foreign_keys=[("board_id", "boards", "id"), ("userid", "users", "userid")],
    )
    db["notify_game"].create(
        {"game": str, "userid": str},
        pk=("game", "userid"),
        foreign_keys=[("userid", "users", "userid")],
    )
    db["ratings"].create(
        {
            "game": str,
            "userid": str,
            "rating": int,
            "games": int,
            "won": int,
            "lost": int,
            "tied": int,
        },
        pk=("game", "userid"),
        not_null={"rating", "games", "won", "lost", "tied"},
    )
    db["rating_changes"].create(
        {"result_id": int, "userid": str, "before": int, "after": int, "provisional": int},
        pk=("result_id", "userid"),
        foreign_keys=[("result_id", "results", "id")],
        not_null={"before", "after", "provisional"},
    )
    db["vacations"].create(
        {"id": int, "userid": str, "started_at": str, "ended_at": str, "ended_by": str},
        pk="id",
        foreign_keys=[("userid", "users", "userid")],
        not_null={"userid", "started_at"},
    )
    db["vacations"].create_index(["userid", "started_at"])
    db["boards"].create_index(["status", "archived_at"])
    db["inbox"].create_index(["received_at"])


@_core_step
def m003_abuse_limits_and_outbox_links(db):
    db["rate_events"].create(
        {"id": int, "kind": str, "key": str, "at": str}, pk="id", not_null={"kind", "key", "at"}
    )
    db["rate_events"].create_index(["kind", "key", "at"])
    db["auth_failures"].create(
        {"id": int, "userid": str, "sender": str, "at": str},
        pk="id",
        not_null={"userid", "sender", "at"},
    )
    db["auth_failures"].create_index(["userid", "sender", "at"])
    db["outbox"].add_column("inbox_key", str)
    db["outbox"].add_column("userid", str)
    db["outbox"].create_index(["inbox_key"])
    db["outbox"].create_index(["userid", "created_at"])


@_core_step
def m004_address_proofs(db):
    """Addresses a command of the account has come from (docs/security.md). Addresses
    registered before this step are taken as proven: their owners have been receiving mail
    there."""
    db["address_proofs"].create(
        {"userid": str, "address": str, "at": str},
        pk=("userid", "address"),
        not_null={"at"},
    )
    db.execute(
        "INSERT OR IGNORE INTO address_proofs (userid, address, at) "
        "SELECT a.userid, lower(a.address), u.created_at FROM addresses a "
        "JOIN users u ON u.userid = a.userid"
    )


@_core_step
def m005_password_resets(db):
    """One reset code per account at a time, kept only as its digest (docs/spec/server.md
    §3.2.3)."""
    db["password_resets"].create(
        {"userid": str, "code_digest": str, "created_at": str, "expires_at": str},
        pk="userid",
        foreign_keys=[("userid", "users", "userid")],
        not_null={"code_digest", "created_at", "expires_at"},
    )


@_core_step
def m006_reply_tokens(db):
    """Reply tokens (docs/spec/server.md §11.3): the row of each token's random id."""
    db["reply_tokens"].create(
        {
            "id": str,
            "game": str,
            "number": int,
            "userid": str,
            "move_number": int,
            "created_at": str,
            "expires_at": str,
        },
        pk="id",
        not_null={"game", "number", "userid", "move_number", "created_at", "expires_at"},
    )
    db["reply_tokens"].create_index(["expires_at"])


@_core_step
def m007_mail_settings(db):
    """Per-user mail settings: pbmserv's changing subjects (docs/spec/server.md §5.3) and
    the daily digest (docs/spec/server.md §11.4) with the time of the last one sent."""
    db["mail_settings"].create(
        {"userid": str, "pbmserv_subjects": int, "digest": int, "digest_sent_at": str},
        pk="userid",
        foreign_keys=[("userid", "users", "userid")],
        not_null={"pbmserv_subjects", "digest"},
        defaults={"pbmserv_subjects": 0, "digest": 0},
    )


@_core_step
def m008_reset_reply_tokens(db):
    """The id of the reply token a password reset mail carries (docs/spec/server.md
    §3.2.3): kept apart from reply_tokens so that it can never stand for a board."""
    db["password_resets"].add_column("token_id", str)
    db["password_resets"].create_index(["token_id"], unique=True)


@_core_step
def m009_html_mail(db):
    """Whether a user's board mails carry an HTML part with the board's picture
    (docs/spec/server.md §11.5). Accounts made before stay text-only, as they were."""
    db["users"].add_column("html_mail", int, not_null_default=0)


@_core_step
def m010_board_lists_by_number(db):
    # The web view pages through a game's boards of one status by number
    # (docs/spec/server.md §11.8): with 100,000 boards, neither a sort of them all nor a
    # read of each row skipped to tell finished from archived, for each page and its count.
    db["boards"].create_index(["game", "status", "number", "archived_at"])


@_core_step
def m011_robots(db):
    """The accounts the server moves for, with their game, robot and budget
    (docs/spec/server.md §11.7)."""
    db["robots"].create(
        {"userid": str, "game": str, "robot": str, "seconds": float, "created_at": str},
        pk="userid",
        foreign_keys=[("userid", "users", "userid")],
        not_null={"game", "robot", "seconds", "created_at"},
    )


@_core_step
def m012_bounces_and_unsubscribes(db):
    """What bounces told us (docs/spec/server.md §5.9): each failure report, the addresses
    marked failing, the List-Unsubscribe tokens (one per user and stream) and the boards
    whose nags a player turned off."""
    db["bounces"].create(
        {"id": int, "address": str, "kind": str, "at": str, "outbox_id": int, "detail": str},
        pk="id",
        not_null={"address", "kind", "at", "outbox_id"},
    )
    db["bounces"].create_index(["address", "at"])
    db["failing_addresses"].create(
        {"address": str, "since": str, "reason": str, "outbox_id": int},
        pk="address",
        not_null={"since", "reason"},
    )
    db["unsubscribe_tokens"].create(
        {"token": str, "userid": str, "stream": str, "game": str, "number": int},
        pk="token",
        not_null={"userid", "stream"},
    )
    db["nag_optouts"].create(
        {"board_id": int, "userid": str},
        pk=("board_id", "userid"),
        foreign_keys=[("board_id", "boards", "id"), ("userid", "users", "userid")],
    )


@_core_step
def m013_invitations_seeks_and_clocks(db):
    """Finding opponents (docs/spec/server.md §11.1, §11.2, §9.5): invitations kept apart from
    the boards until they start, each invitee's answer and invitation token; the terms of
    each open seek; a board's correspondence clock and the clock time of each ply; who takes
    challenges only as invitations; and which robots answer seeks."""
    db["invitations"].create(
        {
            "id": int,
            "game": str,
            "number": int,
            "inviter": str,
            "options": str,
            "server_options": str,
            "comment_author": str,
            "comment_text": str,
            "created_at": str,
            "lapses_at": str,
            "status": str,
            "ended_at": str,
        },
        pk="id",
        not_null={
            "game",
            "number",
            "options",
            "server_options",
            "created_at",
            "lapses_at",
            "status",
        },
    )
    db["invitations"].create_index(["game", "number"], unique=True)
    db["invitations"].create_index(["status", "lapses_at"])
    db["invitation_seats"].create(
        {
            "invitation_id": int,
            "seat": int,
            "userid": str,
            "accepted": int,
            "token_id": str,
        },
        pk=("invitation_id", "seat"),
        foreign_keys=[("invitation_id", "invitations", "id")],
        not_null={"userid", "accepted"},
    )
    db["invitation_seats"].create_index(["token_id"], unique=True)
    db["invitation_seats"].create_index(["userid"])
    db["seeks"].create(
        {
            "game": str,
            "userid": str,
            "options": str,
            "server_options": str,
            "rating_low": int,
            "rating_high": int,
            "created_at": str,
            "lapses_at": str,
        },
        pk=("game", "userid"),
        foreign_keys=[("userid", "users", "userid")],
        not_null={"options", "server_options", "created_at", "lapses_at"},
    )
    db["boards"].add_column("clock_initial", int)
    db["boards"].add_column("clock_increment", int)
    db["boards"].add_column("clock_cap", int)
    db["moves"].add_column("clock_charged", int)
    db["challenge_settings"].add_column("invitations", int, not_null_default=0)
    db["robots"].add_column("seek_after_hours", float)


@_core_step
def m014_tournaments(db):
    """Round-robin tournaments (docs/spec/server.md §11.9): each tournament and its terms,
    who joined (and their division once it starts, and whether they left), the boards of
    each division with their seats as paired, and when each division's digest last went
    out. The standings are not stored: they derive from the boards' results."""
    db["tournaments"].create(
        {
            "id": int,
            "name": str,
            "game": str,
            "options": str,
            "server_options": str,
            "largest": int,
            "start_at": str,
            "start_players": int,
            "creator": str,
            "status": str,
            "created_at": str,
            "started_at": str,
            "ended_at": str,
        },
        pk="id",
        not_null={"name", "game", "options", "server_options", "largest", "status", "created_at"},
    )
    db["tournaments"].create_index(["name"], unique=True)
    db["tournaments"].create_index(["status", "start_at"])
    db["tournament_entrants"].create(
        {
            "tournament_id": int,
            "userid": str,
            "joined_at": str,
            "division": int,
            "rating": int,
            "status": str,
            "left_at": str,
        },
        pk=("tournament_id", "userid"),
        foreign_keys=[("tournament_id", "tournaments", "id"), ("userid", "users", "userid")],
        not_null={"joined_at", "status"},
    )
    db["tournament_entrants"].create_index(["userid"])
    db["tournament_boards"].create(
        {
            "board_id": int,
            "tournament_id": int,
            "division": int,
            "white": str,
            "black": str,
            "reported_at": str,
        },
        pk="board_id",
        foreign_keys=[("board_id", "boards", "id"), ("tournament_id", "tournaments", "id")],
        not_null={"tournament_id", "division", "white", "black"},
    )
    db["tournament_boards"].create_index(["tournament_id", "division"])
    db["tournament_divisions"].create(
        {"tournament_id": int, "division": int, "digest_at": str},
        pk=("tournament_id", "division"),
        foreign_keys=[("tournament_id", "tournaments", "id")],
    )


def _create_private(path: Path) -> None:
    """A new database file is 0600 (pbm/private.py): SQLite would make it 0644 less the
    umask, and its -wal and -shm take the database's mode."""
    if Path(path).exists():
        return
    try:
        create_private(path)
    except OSError:
        pass  # SQLite's own open names the trouble, as unusable_database_cause expects


class Store:
    """One connection to $PBM_HOME/pbm.db, its transactions, and one repository per concern."""

    def __init__(self, conn: sqlite3.Connection):
        self.conn = conn
        self._db = None
        self._grouped = False
        self.users = Users(self)
        self.boards = Boards(self)
        self.votes = Votes(self)
        self.watching = Watching(self)
        self.ratings = Ratings(self)
        self.limits = Limits(self)
        self.outbox = Outbox(self)
        self.tokens = ReplyTokens(self)
        self.robots = Robots(self)
        self.delivery = Delivery(self)
        self.invitations = Invitations(self)
        self.seeks = Seeks(self)
        self.tournaments = Tournaments(self)

    @property
    def db(self):
        """sqlite-utils on the same connection, for schema work."""
        if self._db is None:
            # deferred: importing sqlite_utils costs more than a mail command (core_migrations)
            import sqlite_utils

            self._db = sqlite_utils.Database(self.conn, execute_plugins=False)
        return self._db

    @classmethod
    def open(cls, path: Path) -> "Store":
        _create_private(path)
        conn = sqlite3.connect(str(path), timeout=BUSY_TIMEOUT_SECONDS, isolation_level=None)
        conn.execute("PRAGMA foreign_keys=ON")
        conn.execute("PRAGMA synchronous=FULL")
        return cls(conn)

    @classmethod
    def open_read_only(cls, path: Path) -> "Store":
        """A connection that cannot write: the web view's (docs/spec/server.md §11.8)."""
        uri = f"{Path(path).resolve().as_uri()}?mode=ro"
        conn = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_SECONDS, isolation_level=None)
        conn.execute("PRAGMA query_only=ON")
        return cls(conn)

    def close(self):
        self.conn.close()

    # -- transactions ------------------------------------------------------------

    def commit_paths(self) -> list[Path]:
        """The files a commit writes: the database and its write-ahead log."""
        path = Path(self.conn.execute("PRAGMA database_list").fetchone()[2])
        wal = path.with_name(path.name + "-wal")
        return [path, wal] if wal.exists() else [path]

    @property
    def in_transaction(self) -> bool:
        return self.conn.in_transaction

    @contextmanager
    def write(self):
        """One read-then-write unit: BEGIN IMMEDIATE, then COMMIT or ROLLBACK; inside
        group() a savepoint, released or rolled back alone."""
        if self._grouped:
            with self._savepoint("request"):
                yield self
            return
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield self
        except BaseException:
            if self.conn.in_transaction:
                self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")

    @contextmanager
    def snapshot(self):
        """Several reads that see one committed state (a deferred read transaction)."""
        self.conn.execute("BEGIN")
        try:
            yield self
        finally:
            self.conn.execute("COMMIT")

    @contextmanager
    def group(self):
        """Group commit: one BEGIN IMMEDIATE ... COMMIT around several write() units, each
        of them a savepoint. The COMMIT is not synced (synchronous=NORMAL: SQLite still
        syncs its checkpoints): the caller makes it durable with one sync of the file
        system, together with the files it writes, before it tells anyone. A checkpoint
        costs two syncs of its own: this connection makes one every GROUP_CHECKPOINT_PAGES
        pages of log (40 MB), not every 1,000."""
        self.conn.execute(f"PRAGMA wal_autocheckpoint={GROUP_CHECKPOINT_PAGES}")
        self.conn.execute("PRAGMA synchronous=NORMAL")
        try:
            self.conn.execute("BEGIN IMMEDIATE")
            self._grouped = True
            try:
                yield self
                self._grouped = False
                self.conn.execute("COMMIT")
            except BaseException:
                if self.conn.in_transaction:
                    self.conn.execute("ROLLBACK")
                raise
            finally:
                self._grouped = False
        finally:
            self.conn.execute("PRAGMA synchronous=FULL")

    @contextmanager
    def savepoint(self):
        """Undo a refused command's partial writes but keep the transaction."""
        with self._savepoint("command"):
            yield

    @contextmanager
    def _savepoint(self, name):
        self.conn.execute(f"SAVEPOINT {name}")
        try:
            yield
        except BaseException:
            # A full disk or an I/O error may have rolled the whole transaction back.
            if self.conn.in_transaction:
                self.conn.execute(f"ROLLBACK TO SAVEPOINT {name}")
                self.conn.execute(f"RELEASE SAVEPOINT {name}")
            raise
        self.conn.execute(f"RELEASE SAVEPOINT {name}")

    # -- migrations --------------------------------------------------------------

    def core_pending(self) -> list[tuple[str, str]]:
        """Core migrations not yet applied, read with plain SQL: every mail checks this."""
        applied = self.core_applied()
        return [(CORE_SET, step.__name__) for step in _CORE_STEPS if step.__name__ not in applied]

    def core_applied(self) -> set[str]:
        """Names of the core migrations this database has had (a newer pbm's among them)."""
        if not self._value(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '_sqlite_migrations'"
        ):
            return set()
        return {
            r["name"]
            for r in self._rows(
                "SELECT name FROM _sqlite_migrations WHERE migration_set = ?", (CORE_SET,)
            )
        }

    def pending_migrations(self, migration_sets):
        return [(s.name, m.name) for s in migration_sets for m in s.pending(self.db)]

    def applied_migrations(self, migration_sets):
        return [(s.name, m.name, m.applied_at) for s in migration_sets for m in s.applied(self.db)]

    def apply_migrations(self, migration_sets):
        for migration_set in migration_sets:
            migration_set.apply(self.db)

    def enable_wal(self):
        self.db.enable_wal()

    def foreign_schema_objects(self, migration_sets) -> list[str]:
        """What the schema holds beyond what its migrations make here (store/schema.py)."""
        from .schema import foreign_objects

        return foreign_objects(self.conn, migration_sets)

    def integrity_check(self) -> str:
        return self.conn.execute("PRAGMA integrity_check").fetchone()[0]

    # -- helpers -------------------------------------------------------------------

    def _rows(self, sql, params=()):
        cursor = self.conn.execute(sql, params)
        names = [d[0] for d in cursor.description]
        return [dict(zip(names, row)) for row in cursor.fetchall()]

    def _value(self, sql, params=()):
        row = self.conn.execute(sql, params).fetchone()
        return row[0] if row else None

    def backup_to(self, path: Path):
        """A consistent copy of the whole database through SQLite's online backup API:
        writers go on meanwhile, and the copy is one committed state."""
        _create_private(path)
        target = sqlite3.connect(str(path))
        try:
            self.conn.backup(target)
        finally:
            target.close()

    def restore_from(self, path: Path):
        """Overwrite this database, in place and through SQLite, with the one at path, so
        that any other open connection sees the restored state and not a stale file."""
        source = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            source.backup(self.conn)
        finally:
            source.close()

    def file_sizes(self) -> dict:
        """Bytes of the database file and of its write-ahead log."""
        path = Path(self.conn.execute("PRAGMA database_list").fetchone()[2])
        wal = path.with_name(path.name + "-wal")
        return {
            "database": path.stat().st_size if path.exists() else 0,
            "wal": wal.stat().st_size if wal.exists() else 0,
        }

    def checkpoint(self):
        self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
