"""The connection, its transactions and savepoints (the schema's steps are in migrations.py,
steps_m001_m011.py and steps_from_m012.py).

Every read-then-write runs inside `Store.write()`, which opens the transaction with
BEGIN IMMEDIATE so two processes never interleave a check and its update.
"""

import sqlite3
from contextlib import contextmanager
from pathlib import Path

from ..private import create_private
from .boards import Boards
from .delivery import Delivery
from .invitations import Invitations
from .limits import Limits
from .migrations import CORE_SET, core_step_names
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
LITESTREAM_TABLES_SQL = (
    "SELECT name, sql FROM sqlite_master WHERE type = 'table' "
    "AND name LIKE '\\_litestream\\_%' ESCAPE '\\'"
)


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


def _create_private(path: Path) -> None:
    """A new database file is 0600 (pbm/private.py): SQLite would make it 0644 less the
    umask, and its -wal and -shm take the database's mode."""
    if Path(path).exists():
        return
    try:
        create_private(path)
    except OSError:
        pass  # SQLite's own open names the trouble, as unusable_database_cause expects


def _has_litestream_tables(conn: sqlite3.Connection) -> bool:
    return conn.execute(LITESTREAM_TABLES_SQL).fetchone() is not None


class Store:
    """One connection to $PBM_HOME/pbm.db, its transactions, and one repository per concern."""

    def __init__(self, conn: sqlite3.Connection):
        self.conn = conn
        # False once Litestream's tables are seen: see leave_checkpoints_to_litestream().
        self.checkpoints = True
        self._schema_seen = None  # PRAGMA schema_version when Litestream's tables were sought
        self._group_checkpoints = False  # wal_autocheckpoint set for group commits
        self._db = None
        self._path: str | None = None
        self._grouped = False
        self._writing = False
        self._synchronous = "FULL"  # as open() sets it; group() commits with NORMAL
        # Told of every commit and every rollback (a savepoint's too): what keeps rows read
        # in a transaction for later ones (pbm/boardcache.py) keeps only committed ones.
        self.listeners: list = []
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
        # The journal of a statement inside a savepoint (every command's) in memory: on
        # disk it was a new file in /var/tmp for every command that queued a mail.
        conn.execute("PRAGMA temp_store=MEMORY")
        store = cls(conn)
        store.leave_checkpoints_to_litestream()
        return store

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

    def commit_paths(self) -> list[str]:
        """The files a commit writes: the database and its write-ahead log beside it (the
        connection's file does not change, so it is asked for once)."""
        path = self._path
        if path is None:
            path = self._path = self.conn.execute("PRAGMA database_list").fetchone()[2]
        return [path, path + "-wal"]

    @property
    def in_transaction(self) -> bool:
        return self.conn.in_transaction

    @contextmanager
    def write(self):
        """One read-then-write unit: BEGIN IMMEDIATE, then COMMIT or ROLLBACK; inside
        group() or another write() (the commands of one `multiple` mail) a savepoint,
        released or rolled back alone."""
        if self._grouped or self._writing:
            with self._savepoint("request"):
                yield self
            return
        self._synchronize("FULL")  # a write alone is durable at its COMMIT
        self.conn.execute("BEGIN IMMEDIATE")
        self._writing = True
        try:
            yield self
        except BaseException:
            if self.conn.in_transaction:
                self.conn.execute("ROLLBACK")
            self._rolled_back()
            raise
        finally:
            self._writing = False
        self.conn.execute("COMMIT")
        self._committed()

    @contextmanager
    def snapshot(self):
        """Several reads that see one committed state (a deferred read transaction)."""
        self.conn.execute("BEGIN")
        try:
            yield self
        finally:
            self.conn.execute("COMMIT")

    def leave_checkpoints_to_litestream(self):
        """No automatic checkpoints once the database holds Litestream's tables: Litestream
        makes them in a database it replicates and checkpoints it itself, and a checkpoint
        of pbm's beside its own damaged the replica (docs/reliability.md, promise 11).
        Looked for again only when the schema has changed: asked before every group."""
        if not self.checkpoints:
            return
        version = self.conn.execute("PRAGMA schema_version").fetchone()[0]
        if version == self._schema_seen:
            return
        self._schema_seen = version
        if _has_litestream_tables(self.conn):
            self.checkpoints = False
            self.conn.execute("PRAGMA wal_autocheckpoint=0")

    @contextmanager
    def group(self):
        """Group commit: one BEGIN IMMEDIATE ... COMMIT around several write() units, each
        of them a savepoint. The COMMIT is not synced (synchronous=NORMAL: SQLite still
        syncs its checkpoints): the caller makes it durable with one sync of the file
        system, together with the files it writes, before it tells anyone. The setting
        stays until a write() outside a group sets FULL again: `pbm serve`'s writer runs
        group after group, and setting it twice a group cost 60 µs. A checkpoint
        costs two syncs of its own: this connection makes one every GROUP_CHECKPOINT_PAGES
        pages of log (40 MB), not every 1,000, and none once Litestream has made its tables
        (see open(): `pbm serve` may have opened the database before Litestream first ran)."""
        self.leave_checkpoints_to_litestream()
        if self.checkpoints and not self._group_checkpoints:
            # a setting of the connection, which nothing else changes: set once
            self.conn.execute(f"PRAGMA wal_autocheckpoint={GROUP_CHECKPOINT_PAGES}")
            self._group_checkpoints = True
        self._synchronize("NORMAL")
        self.conn.execute("BEGIN IMMEDIATE")
        self._grouped = True
        try:
            yield self
            self._grouped = False
            self.conn.execute("COMMIT")
            self._committed()
        except BaseException:
            if self.conn.in_transaction:
                self.conn.execute("ROLLBACK")
            self._rolled_back()
            raise
        finally:
            self._grouped = False

    def _synchronize(self, level: str):
        if self._synchronous != level:
            self.conn.execute(f"PRAGMA synchronous={level}")
            self._synchronous = level

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
            self._rolled_back()
            raise
        self.conn.execute(f"RELEASE SAVEPOINT {name}")

    def _committed(self):
        for listener in self.listeners:
            listener.committed()

    def _rolled_back(self):
        for listener in self.listeners:
            listener.rolled_back()

    # -- migrations --------------------------------------------------------------

    def core_pending(self) -> list[tuple[str, str]]:
        """Core migrations not yet applied, read with plain SQL: every mail checks this."""
        applied = self.core_applied()
        return [(CORE_SET, name) for name in core_step_names() if name not in applied]

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

    def replication_tables(self) -> dict[str, str]:
        """Litestream's own tables (`_litestream_seq`, `_litestream_lock`), each with the
        statement that made it: pbm leaves them be."""
        return dict(self.conn.execute(LITESTREAM_TABLES_SQL).fetchall())

    def add_replication_tables(self, statements: dict[str, str]):
        """Make each of Litestream's tables that is missing with its statement."""
        present = self.replication_tables()
        for name, statement in statements.items():
            if name not in present:
                self.conn.execute(statement)

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
