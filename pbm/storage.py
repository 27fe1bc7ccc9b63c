"""All of pbm's SQL: the schema, its migrations, and every query the core runs.

Every read-then-write runs inside `Store.write()`, which opens the transaction with
BEGIN IMMEDIATE so two processes never interleave a check and its update.
"""

import json
import sqlite3
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path

BUSY_TIMEOUT_SECONDS = 30
CORE_SET = "pbm"
_CORE_STEPS = []


def _core_step(step):
    _CORE_STEPS.append(step)
    return step


@lru_cache(maxsize=1)
def core_migrations():
    """The core's sqlite-utils migration set. Built on demand: importing sqlite_utils costs
    more than a whole mail command, and only `pbm init` and `pbm migrate` need it."""
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
        not_null={"board_id", "ply", "seat", "userid", "kind", "text", "auto", "charged", "created_at"},
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
        not_null={"created_at", "kind", "recipients", "message_id", "message", "status", "attempts"},
        defaults={"attempts": 0},
    )
    db["outbox"].create_index(["status", "next_attempt_at"])
    db["audit"].create(
        {"id": int, "at": str, "kind": str, "game": str, "board": int, "userid": str, "detail": str},
        pk="id",
        not_null={"at", "kind"},
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


@_core_step
def m002_votes_queues_watching_ratings(db):
    db["votes"].create(
        {"board_id": int, "kind": str, "proposer": str, "created_at": str, "accepted": str,
         "last_nag_at": str},
        pk="board_id",
        foreign_keys=[("board_id", "boards", "id")],
        not_null={"kind", "proposer", "created_at", "accepted"},
    )
    db["queued"].create(
        {"board_id": int, "seat": int, "move_text": str, "guard": str, "comment": str,
         "resign": int},
        pk=("board_id", "seat"),
        foreign_keys=[("board_id", "boards", "id")],
        not_null={"resign"},
        defaults={"resign": 0},
    )
    db["submissions"].create(
        {"board_id": int, "seat": int, "move_text": str, "guard": str, "comment": str,
         "move_number": int},
        pk=("board_id", "seat"),
        foreign_keys=[("board_id", "boards", "id")],
        not_null={"move_text", "move_number"},
    )
    db["subscribe_all"].create(
        {"game": str, "userid": str}, pk=("game", "userid"),
        foreign_keys=[("userid", "users", "userid")],
    )
    db["notify_board"].create(
        {"board_id": int, "userid": str}, pk=("board_id", "userid"),
        foreign_keys=[("board_id", "boards", "id"), ("userid", "users", "userid")],
    )
    db["notify_game"].create(
        {"game": str, "userid": str}, pk=("game", "userid"),
        foreign_keys=[("userid", "users", "userid")],
    )
    db["ratings"].create(
        {"game": str, "userid": str, "rating": int, "games": int, "won": int, "lost": int,
         "tied": int},
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
    """Addresses a command of the account has come from (issue 13.6). Addresses registered
    before this step are taken as proven: their owners have been receiving mail there."""
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


class Store:
    """One connection to $PBM_HOME/pbm.db and the queries the core needs."""

    def __init__(self, conn: sqlite3.Connection):
        self.conn = conn
        self._db = None

    @property
    def db(self):
        """sqlite-utils on the same connection, for schema work."""
        if self._db is None:
            import sqlite_utils

            self._db = sqlite_utils.Database(self.conn, execute_plugins=False)
        return self._db

    @classmethod
    def open(cls, path: Path) -> "Store":
        conn = sqlite3.connect(str(path), timeout=BUSY_TIMEOUT_SECONDS, isolation_level=None)
        conn.execute("PRAGMA foreign_keys=ON")
        conn.execute("PRAGMA synchronous=FULL")
        return cls(conn)

    def close(self):
        self.conn.close()

    # -- transactions ------------------------------------------------------------

    @contextmanager
    def write(self):
        """One read-then-write unit: BEGIN IMMEDIATE, then COMMIT or ROLLBACK."""
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield self
        except BaseException:
            if self.conn.in_transaction:
                self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")

    @contextmanager
    def savepoint(self):
        """Undo a refused command's partial writes but keep the transaction."""
        self.conn.execute("SAVEPOINT command")
        try:
            yield
        except BaseException:
            self.conn.execute("ROLLBACK TO SAVEPOINT command")
            self.conn.execute("RELEASE SAVEPOINT command")
            raise
        self.conn.execute("RELEASE SAVEPOINT command")

    # -- migrations --------------------------------------------------------------

    def core_pending(self) -> list[tuple[str, str]]:
        """Core migrations not yet applied, read with plain SQL: every mail checks this."""
        applied = set()
        if self._value(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '_sqlite_migrations'"
        ):
            applied = {
                r["name"]
                for r in self._rows(
                    "SELECT name FROM _sqlite_migrations WHERE migration_set = ?", (CORE_SET,)
                )
            }
        return [(CORE_SET, step.__name__) for step in _CORE_STEPS if step.__name__ not in applied]

    def pending_migrations(self, migration_sets):
        return [(s.name, m.name) for s in migration_sets for m in s.pending(self.db)]

    def applied_migrations(self, migration_sets):
        return [(s.name, m.name, m.applied_at) for s in migration_sets for m in s.applied(self.db)]

    def apply_migrations(self, migration_sets):
        for migration_set in migration_sets:
            migration_set.apply(self.db)

    def enable_wal(self):
        self.db.enable_wal()

    def integrity_check(self) -> str:
        return self.conn.execute("PRAGMA integrity_check").fetchone()[0]

    # -- helpers -------------------------------------------------------------------

    def _rows(self, sql, params=()):
        cursor = self.conn.execute(sql, params)
        names = [d[0] for d in cursor.description]
        return [dict(zip(names, row)) for row in cursor.fetchall()]

    def _row(self, sql, params=()):
        rows = self._rows(sql, params)
        return rows[0] if rows else None

    def _value(self, sql, params=()):
        row = self.conn.execute(sql, params).fetchone()
        return row[0] if row else None

    # -- inbox ---------------------------------------------------------------------

    def inbox_seen(self, key: str) -> bool:
        return self._value("SELECT 1 FROM inbox WHERE key = ?", (key,)) is not None

    def inbox_add(self, key: str, at: str):
        self.conn.execute("INSERT INTO inbox (key, received_at) VALUES (?, ?)", (key, at))

    # -- users ---------------------------------------------------------------------

    def get_user(self, userid: str):
        return self._row("SELECT * FROM users WHERE userid = ?", (userid,))

    def password_hash(self, userid: str) -> str | None:
        return self._value(
            "SELECT password_hash FROM users WHERE userid = ? AND status = 'active'", (userid,)
        )

    def create_user(self, userid: str, password_hash: str, addresses, at: str):
        self.conn.execute(
            "INSERT INTO users (userid, password_hash, status, created_at) VALUES (?, ?, 'active', ?)",
            (userid, password_hash, at),
        )
        self.set_addresses(userid, addresses)

    def set_password_hash(self, userid: str, password_hash: str):
        self.conn.execute(
            "UPDATE users SET password_hash = ? WHERE userid = ?", (password_hash, userid)
        )

    def addresses(self, userid: str) -> list[str]:
        return [
            r["address"]
            for r in self._rows(
                "SELECT address FROM addresses WHERE userid = ? ORDER BY position", (userid,)
            )
        ]

    def set_addresses(self, userid: str, addresses):
        self.conn.execute("DELETE FROM addresses WHERE userid = ?", (userid,))
        self.conn.executemany(
            "INSERT INTO addresses (userid, address, position) VALUES (?, ?, ?)",
            [(userid, address, i) for i, address in enumerate(addresses)],
        )

    def delete_user(self, userid: str, at: str):
        """Keep the userid as a tombstone so it is never reused; erase the rest."""
        self.conn.execute("DELETE FROM addresses WHERE userid = ?", (userid,))
        for table in ("subscriptions", "subscribe_all", "notify_board", "notify_game",
                      "challenge_settings"):
            self.conn.execute(f"DELETE FROM {table} WHERE userid = ?", (userid,))
        self.conn.execute(
            "UPDATE users SET password_hash = NULL, status = 'deleted', deleted_at = ? "
            "WHERE userid = ?",
            (at, userid),
        )

    def active_userids(self) -> list[str]:
        return [
            r["userid"]
            for r in self._rows("SELECT userid FROM users WHERE status = 'active' ORDER BY userid")
        ]

    # -- boards --------------------------------------------------------------------

    def next_board_number(self, game: str) -> int:
        number = self._value("SELECT next_number FROM counters WHERE game = ?", (game,))
        if number is None:
            number = 101
            self.conn.execute("INSERT INTO counters (game, next_number) VALUES (?, ?)", (game, 102))
        else:
            self.conn.execute(
                "UPDATE counters SET next_number = next_number + 1 WHERE game = ?", (game,)
            )
        return number

    def create_board(self, *, game, number, options, seed, nag_days, forfeit_days, total_days,
                     created_at, userids, rated) -> int:
        cursor = self.conn.execute(
            "INSERT INTO boards (game, number, status, options, seed, nag_days, forfeit_days, "
            "total_days, created_at, last_move_at, rated) VALUES (?, ?, 'active', ?, ?, ?, ?, ?, ?, ?, ?)",
            (game, number, json.dumps(options, sort_keys=True), seed, nag_days, forfeit_days,
             total_days, created_at, created_at, int(rated)),
        )
        board_id = cursor.lastrowid
        self.conn.executemany(
            "INSERT INTO seats (board_id, seat, userid) VALUES (?, ?, ?)",
            [(board_id, seat, userid) for seat, userid in enumerate(userids)],
        )
        return board_id

    def get_board(self, game: str, number: int):
        """A board that is not removed; removed boards behave as not found."""
        return self._row(
            "SELECT * FROM boards WHERE game = ? AND number = ? AND status != 'removed'",
            (game, number),
        )

    def board_by_id(self, board_id: int):
        return self._row("SELECT * FROM boards WHERE id = ?", (board_id,))

    def seat_userids(self, board_id: int) -> list[str]:
        return [
            r["userid"]
            for r in self._rows(
                "SELECT userid FROM seats WHERE board_id = ? ORDER BY seat", (board_id,)
            )
        ]

    def set_seat_userids(self, board_id: int, userids):
        self.conn.execute("DELETE FROM seats WHERE board_id = ?", (board_id,))
        self.conn.executemany(
            "INSERT INTO seats (board_id, seat, userid) VALUES (?, ?, ?)",
            [(board_id, seat, userid) for seat, userid in enumerate(userids)],
        )

    def moves(self, board_id: int) -> list[dict]:
        """The live plies of the log, in order."""
        return self._rows(
            "SELECT ply, seat, userid, kind, text, auto, charged, created_at FROM moves "
            "WHERE board_id = ? AND undone_at IS NULL ORDER BY ply",
            (board_id,),
        )

    def append_move(self, board_id: int, *, ply, seat, userid, kind, text, auto, charged, at):
        self.conn.execute(
            "INSERT INTO moves (board_id, ply, seat, userid, kind, text, auto, charged, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (board_id, ply, seat, userid, kind, text, int(auto), charged, at),
        )
        self.conn.execute("UPDATE boards SET last_move_at = ? WHERE id = ?", (at, board_id))

    def undo_all_moves(self, board_id: int, at: str):
        self.conn.execute(
            "UPDATE moves SET undone_at = ? WHERE board_id = ? AND undone_at IS NULL", (at, board_id)
        )

    def set_board_status(self, board_id: int, status: str, finished_at: str | None = None):
        self.conn.execute(
            "UPDATE boards SET status = ?, finished_at = coalesce(?, finished_at) WHERE id = ?",
            (status, finished_at, board_id),
        )

    def set_comment(self, board_id: int, author: str | None, text: str | None, at: str | None):
        self.conn.execute(
            "UPDATE boards SET comment_author = ?, comment_text = ?, comment_at = ? WHERE id = ?",
            (author, text, at, board_id),
        )

    def save_snapshot(self, board_id: int, ply: int, state):
        self.conn.execute(
            "UPDATE boards SET snapshot_ply = ?, snapshot_state = ? WHERE id = ?",
            (ply, json.dumps(state, sort_keys=True, separators=(",", ":")), board_id),
        )

    def drop_snapshot(self, board_id: int):
        self.conn.execute(
            "UPDATE boards SET snapshot_ply = NULL, snapshot_state = NULL WHERE id = ?", (board_id,)
        )

    def all_boards(self):
        return self._rows("SELECT * FROM boards WHERE status != 'removed' ORDER BY game, number")

    def boards_of_game(self, game: str, userids=(), include_archived=False):
        """A game's boards, optionally only those where any of the userids holds a seat."""
        sql = "SELECT * FROM boards WHERE game = ? AND status != 'removed'"
        params = [game]
        if not include_archived:
            sql += " AND archived_at IS NULL"
        if userids:
            marks = ",".join("?" * len(userids))
            sql += f" AND id IN (SELECT board_id FROM seats WHERE userid IN ({marks}))"
            params.extend(userids)
        return self._rows(sql + " ORDER BY number", params)

    def active_board_counts(self) -> dict:
        return {
            r["game"]: r["n"]
            for r in self._rows(
                "SELECT game, count(*) AS n FROM boards WHERE status = 'active' GROUP BY game"
            )
        }

    def active_boards_of_user(self, userid: str):
        return self._rows(
            "SELECT * FROM boards WHERE status = 'active' AND id IN "
            "(SELECT board_id FROM seats WHERE userid = ?) ORDER BY game, number",
            (userid,),
        )

    def count_boards_started_since(self, userid: str, since: str) -> int:
        """Boards of every game created since a time with the user in a seat."""
        return self._value(
            "SELECT count(*) FROM boards WHERE created_at >= ? AND id IN "
            "(SELECT board_id FROM seats WHERE userid = ?)",
            (since, userid),
        )

    def count_active_boards(self, game: str, userid: str, except_board: int | None = None) -> int:
        return self._value(
            "SELECT count(*) FROM boards WHERE game = ? AND status = 'active' AND id != ? AND id IN "
            "(SELECT board_id FROM seats WHERE userid = ?)",
            (game, except_board or -1, userid),
        )

    # -- subscriptions and challenge settings -----------------------------------------

    def subscribers(self, board_id: int) -> list[str]:
        return [
            r["userid"]
            for r in self._rows(
                "SELECT userid FROM subscriptions WHERE board_id = ? ORDER BY userid", (board_id,)
            )
        ]

    def subscribe(self, board_id: int, userid: str):
        self.conn.execute(
            "INSERT OR IGNORE INTO subscriptions (board_id, userid) VALUES (?, ?)",
            (board_id, userid),
        )

    def challenge_limit(self, game: str, userid: str) -> int | None:
        """The most active boards a user accepts in a game; None: no limit."""
        return self._value(
            "SELECT max_active FROM challenge_settings WHERE game = ? AND userid = ?",
            (game, userid),
        )

    def set_inactive_flag(self, game: str, userid: str, inactive: bool):
        self.conn.execute(
            "INSERT INTO challenge_settings (game, userid, inactive) VALUES (?, ?, ?) "
            "ON CONFLICT (game, userid) DO UPDATE SET inactive = excluded.inactive",
            (game, userid, int(inactive)),
        )

    # -- results -------------------------------------------------------------------

    def add_result(self, *, game, board_id, finished_at, rated, points, reason, scores) -> int:
        cursor = self.conn.execute(
            "INSERT INTO results (game, board_id, finished_at, rated, points, reason) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (game, board_id, finished_at, int(rated), points, reason),
        )
        result_id = cursor.lastrowid
        self.conn.executemany(
            "INSERT INTO result_seats (result_id, seat, userid, score) VALUES (?, ?, ?, ?)",
            [(result_id, seat, userid, score) for seat, (userid, score) in enumerate(scores)],
        )
        return result_id

    def board_result(self, board_id: int):
        """The result of a finished board with its seats' scores, or None."""
        result = self._row(
            "SELECT * FROM results WHERE board_id = ? ORDER BY id DESC LIMIT 1", (board_id,)
        )
        if result is not None:
            result["seats"] = self._rows(
                "SELECT seat, userid, score FROM result_seats WHERE result_id = ? ORDER BY seat",
                (result["id"],),
            )
        return result

    # -- votes ---------------------------------------------------------------------

    def vote(self, board_id: int):
        row = self._row("SELECT * FROM votes WHERE board_id = ?", (board_id,))
        if row is not None:
            row["accepted"] = json.loads(row["accepted"])
        return row

    def start_vote(self, board_id: int, kind: str, proposer: str, at: str, accepted):
        self.conn.execute(
            "INSERT INTO votes (board_id, kind, proposer, created_at, accepted) VALUES (?, ?, ?, ?, ?)",
            (board_id, kind, proposer, at, json.dumps(sorted(accepted))),
        )

    def set_vote_accepted(self, board_id: int, accepted):
        self.conn.execute(
            "UPDATE votes SET accepted = ? WHERE board_id = ?",
            (json.dumps(sorted(accepted)), board_id),
        )

    def set_vote_nagged(self, board_id: int, at: str):
        self.conn.execute("UPDATE votes SET last_nag_at = ? WHERE board_id = ?", (at, board_id))

    def end_vote(self, board_id: int):
        self.conn.execute("DELETE FROM votes WHERE board_id = ?", (board_id,))

    def undo_plies_from(self, board_id: int, ply: int, at: str):
        self.conn.execute(
            "UPDATE moves SET undone_at = ? WHERE board_id = ? AND ply >= ? AND undone_at IS NULL",
            (at, board_id, ply),
        )

    # -- queued moves, pending resignations, submissions ---------------------------------

    def queued(self, board_id: int, seat: int):
        return self._row(
            "SELECT * FROM queued WHERE board_id = ? AND seat = ?", (board_id, seat)
        )

    def set_queued_move(self, board_id: int, seat: int, text, guard, comment):
        self.conn.execute(
            "INSERT INTO queued (board_id, seat, move_text, guard, comment) VALUES (?, ?, ?, ?, ?) "
            "ON CONFLICT (board_id, seat) DO UPDATE SET move_text = excluded.move_text, "
            "guard = excluded.guard, comment = excluded.comment",
            (board_id, seat, text, guard, comment),
        )

    def set_pending_resignation(self, board_id: int, seat: int, pending: bool):
        self.conn.execute(
            "INSERT INTO queued (board_id, seat, resign) VALUES (?, ?, ?) "
            "ON CONFLICT (board_id, seat) DO UPDATE SET resign = excluded.resign",
            (board_id, seat, int(pending)),
        )
        self._drop_empty_queue_rows(board_id)

    def clear_queued_move(self, board_id: int, seat: int):
        self.conn.execute(
            "UPDATE queued SET move_text = NULL, guard = NULL, comment = NULL "
            "WHERE board_id = ? AND seat = ?",
            (board_id, seat),
        )
        self._drop_empty_queue_rows(board_id)

    def _drop_empty_queue_rows(self, board_id: int):
        self.conn.execute(
            "DELETE FROM queued WHERE board_id = ? AND move_text IS NULL AND resign = 0",
            (board_id,),
        )

    def clear_queues(self, board_id: int):
        for table in ("queued", "submissions", "votes"):
            self.conn.execute(f"DELETE FROM {table} WHERE board_id = ?", (board_id,))

    def submission(self, board_id: int, seat: int):
        return self._row(
            "SELECT * FROM submissions WHERE board_id = ? AND seat = ?", (board_id, seat)
        )

    def set_submission(self, board_id: int, seat: int, text, guard, comment, move_number):
        self.conn.execute(
            "INSERT INTO submissions (board_id, seat, move_text, guard, comment, move_number) "
            "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (board_id, seat) DO UPDATE SET "
            "move_text = excluded.move_text, guard = excluded.guard, comment = excluded.comment, "
            "move_number = excluded.move_number",
            (board_id, seat, text, guard, comment, move_number),
        )

    def drop_submissions(self, board_id: int, seat: int | None = None):
        if seat is None:
            self.conn.execute("DELETE FROM submissions WHERE board_id = ?", (board_id,))
        else:
            self.conn.execute(
                "DELETE FROM submissions WHERE board_id = ? AND seat = ?", (board_id, seat)
            )

    # -- watching: subscriptions and notifications ----------------------------------------

    def unsubscribe(self, board_id: int, userid: str) -> bool:
        return bool(
            self.conn.execute(
                "DELETE FROM subscriptions WHERE board_id = ? AND userid = ?", (board_id, userid)
            ).rowcount
        )

    def subscribed_boards(self, game: str, userid: str) -> list[dict]:
        return self._rows(
            "SELECT b.* FROM boards b JOIN subscriptions s ON s.board_id = b.id "
            "WHERE b.game = ? AND s.userid = ? ORDER BY b.number",
            (game, userid),
        )

    def subscribe_all_users(self, game: str) -> list[str]:
        return [
            r["userid"]
            for r in self._rows(
                "SELECT userid FROM subscribe_all WHERE game = ? ORDER BY userid", (game,)
            )
        ]

    def set_subscribe_all(self, game: str, userid: str, on: bool):
        if on:
            self.conn.execute(
                "INSERT OR IGNORE INTO subscribe_all (game, userid) VALUES (?, ?)", (game, userid)
            )
        else:
            self.conn.execute(
                "DELETE FROM subscribe_all WHERE game = ? AND userid = ?", (game, userid)
            )

    def board_notifiers(self, board_id: int) -> list[str]:
        return [
            r["userid"]
            for r in self._rows(
                "SELECT userid FROM notify_board WHERE board_id = ? ORDER BY userid", (board_id,)
            )
        ]

    def game_notifiers(self, game: str) -> list[str]:
        return [
            r["userid"]
            for r in self._rows(
                "SELECT userid FROM notify_game WHERE game = ? ORDER BY userid", (game,)
            )
        ]

    def toggle_board_notify(self, board_id: int, userid: str) -> bool:
        """Flip a user's notification for one board; True when it is now on."""
        removed = self.conn.execute(
            "DELETE FROM notify_board WHERE board_id = ? AND userid = ?", (board_id, userid)
        ).rowcount
        if removed:
            return False
        self.conn.execute(
            "INSERT INTO notify_board (board_id, userid) VALUES (?, ?)", (board_id, userid)
        )
        return True

    def toggle_game_notify(self, game: str, userid: str) -> bool:
        removed = self.conn.execute(
            "DELETE FROM notify_game WHERE game = ? AND userid = ?", (game, userid)
        ).rowcount
        if removed:
            return False
        self.conn.execute("INSERT INTO notify_game (game, userid) VALUES (?, ?)", (game, userid))
        return True

    # -- challenge settings ------------------------------------------------------------

    def challenge_settings(self, game: str, userid: str):
        return self._row(
            "SELECT * FROM challenge_settings WHERE game = ? AND userid = ?", (game, userid)
        )

    def set_challenge_limit(self, game: str, userid: str, limit: int | None):
        self.conn.execute(
            "INSERT INTO challenge_settings (game, userid, max_active) VALUES (?, ?, ?) "
            "ON CONFLICT (game, userid) DO UPDATE SET max_active = excluded.max_active",
            (game, userid, limit),
        )

    def set_seeking(self, game: str, userid: str, count: int):
        self.conn.execute(
            "INSERT INTO challenge_settings (game, userid, seeking) VALUES (?, ?, ?) "
            "ON CONFLICT (game, userid) DO UPDATE SET seeking = excluded.seeking",
            (game, userid, count),
        )

    def decrement_seeking(self, game: str, userid: str):
        self.conn.execute(
            "UPDATE challenge_settings SET seeking = seeking - 1 "
            "WHERE game = ? AND userid = ? AND seeking > 0",
            (game, userid),
        )

    def all_challenge_settings(self, game: str) -> list[dict]:
        return self._rows("SELECT * FROM challenge_settings WHERE game = ?", (game,))

    # -- ratings -------------------------------------------------------------------

    def rating(self, game: str, userid: str):
        return self._row("SELECT * FROM ratings WHERE game = ? AND userid = ?", (game, userid))

    def ratings_of_game(self, game: str) -> list[dict]:
        return self._rows("SELECT * FROM ratings WHERE game = ?", (game,))

    def save_rating(self, game, userid, rating, games, won, lost, tied):
        self.conn.execute(
            "INSERT INTO ratings (game, userid, rating, games, won, lost, tied) "
            "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (game, userid) DO UPDATE SET "
            "rating = excluded.rating, games = excluded.games, won = excluded.won, "
            "lost = excluded.lost, tied = excluded.tied",
            (game, userid, rating, games, won, lost, tied),
        )

    def add_rating_change(self, result_id, userid, before, after, provisional):
        self.conn.execute(
            "INSERT INTO rating_changes (result_id, userid, before, after, provisional) "
            "VALUES (?, ?, ?, ?, ?)",
            (result_id, userid, before, after, int(provisional)),
        )

    def rating_changes(self, result_id: int) -> list[dict]:
        return self._rows(
            "SELECT * FROM rating_changes WHERE result_id = ? ORDER BY userid", (result_id,)
        )

    def clear_ratings(self, games):
        for game in games:
            self.conn.execute(
                "DELETE FROM rating_changes WHERE result_id IN "
                "(SELECT id FROM results WHERE game = ?)",
                (game,),
            )
            self.conn.execute("DELETE FROM ratings WHERE game = ?", (game,))

    def results(self, game: str, rated_only=False) -> list[dict]:
        sql = "SELECT r.*, b.number FROM results r JOIN boards b ON b.id = r.board_id WHERE r.game = ?"
        if rated_only:
            sql += " AND r.rated = 1"
        rows = self._rows(sql + " ORDER BY r.id", (game,))
        seats = self._rows(
            "SELECT rs.* FROM result_seats rs JOIN results r ON r.id = rs.result_id "
            "WHERE r.game = ? ORDER BY rs.result_id, rs.seat",
            (game,),
        )
        by_result = {}
        for seat in seats:
            by_result.setdefault(seat["result_id"], []).append(seat)
        for row in rows:
            row["seats"] = by_result.get(row["id"], [])
        return rows

    def result_games(self) -> list[str]:
        return [r["game"] for r in self._rows("SELECT DISTINCT game FROM results ORDER BY game")]

    def standings_userids(self, game: str) -> list[str]:
        """Users with a rated game, an active board or a setting in this game; never deleted."""
        return [
            r["userid"]
            for r in self._rows(
                "SELECT userid FROM users WHERE status = 'active' AND userid IN ("
                " SELECT userid FROM ratings WHERE game = ? AND games > 0"
                " UNION SELECT s.userid FROM seats s JOIN boards b ON b.id = s.board_id"
                "   WHERE b.game = ? AND b.status = 'active'"
                " UNION SELECT userid FROM challenge_settings WHERE game = ?) ORDER BY userid",
                (game, game, game),
            )
        ]

    # -- vacations -------------------------------------------------------------------

    def vacations(self, userid: str) -> list[dict]:
        return self._rows(
            "SELECT * FROM vacations WHERE userid = ? ORDER BY started_at", (userid,)
        )

    def start_vacation(self, userid: str, at: str):
        self.conn.execute(
            "INSERT INTO vacations (userid, started_at) VALUES (?, ?)", (userid, at)
        )

    def end_vacation(self, userid: str, at: str, ended_by: str):
        self.conn.execute(
            "UPDATE vacations SET ended_at = ?, ended_by = ? WHERE userid = ? AND ended_at IS NULL",
            (at, ended_by, userid),
        )

    def users_on_vacation(self) -> list[str]:
        return [
            r["userid"]
            for r in self._rows(
                "SELECT DISTINCT userid FROM vacations WHERE ended_at IS NULL ORDER BY userid"
            )
        ]

    # -- cleanup ---------------------------------------------------------------------

    def active_boards(self, games=None) -> list[dict]:
        sql = "SELECT * FROM boards WHERE status = 'active'"
        params = []
        if games:
            sql += f" AND game IN ({','.join('?' * len(games))})"
            params.extend(games)
        return self._rows(sql + " ORDER BY game, number", params)

    def boards_to_archive(self, before: str, games=None) -> list[dict]:
        sql = "SELECT * FROM boards WHERE status = 'finished' AND archived_at IS NULL AND finished_at <= ?"
        params = [before]
        if games:
            sql += f" AND game IN ({','.join('?' * len(games))})"
            params.extend(games)
        return self._rows(sql + " ORDER BY game, number", params)

    def archive_board(self, board_id: int, at: str):
        self.conn.execute(
            "UPDATE boards SET archived_at = ?, snapshot_ply = NULL, snapshot_state = NULL "
            "WHERE id = ?",
            (at, board_id),
        )

    def set_board_nagged(self, board_id: int, at: str):
        self.conn.execute("UPDATE boards SET last_nag_at = ? WHERE id = ?", (at, board_id))

    def prune_inbox(self, before: str) -> int:
        return self.conn.execute("DELETE FROM inbox WHERE received_at < ?", (before,)).rowcount

    def checkpoint(self):
        self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def audit_count_since(self, kind: str, userid: str, since: str) -> int:
        return self._value(
            "SELECT count(*) FROM audit WHERE kind = ? AND userid = ? AND at >= ?",
            (kind, userid, since),
        )

    # -- abuse limits ----------------------------------------------------------------

    def rate_events(self, kind: str, key: str, since: str) -> list[str]:
        """Times of a sender's recent events of one kind, oldest first."""
        return [
            r["at"]
            for r in self._rows(
                "SELECT at FROM rate_events WHERE kind = ? AND key = ? AND at >= ? ORDER BY at",
                (kind, key, since),
            )
        ]

    def add_rate_event(self, kind: str, key: str, at: str):
        self.conn.execute(
            "INSERT INTO rate_events (kind, key, at) VALUES (?, ?, ?)", (kind, key, at)
        )

    def auth_failures(self, userid: str, sender: str, since: str) -> list[str]:
        return [
            r["at"]
            for r in self._rows(
                "SELECT at FROM auth_failures WHERE userid = ? AND sender = ? AND at >= ? "
                "ORDER BY at",
                (userid, sender, since),
            )
        ]

    def add_auth_failure(self, userid: str, sender: str, at: str):
        self.conn.execute(
            "INSERT INTO auth_failures (userid, sender, at) VALUES (?, ?, ?)", (userid, sender, at)
        )

    def prune_rate_rows(self, before: str) -> int:
        pruned = self.conn.execute("DELETE FROM rate_events WHERE at < ?", (before,)).rowcount
        return pruned + self.conn.execute(
            "DELETE FROM auth_failures WHERE at < ?", (before,)
        ).rowcount

    # -- audit ---------------------------------------------------------------------

    def audit(self, at: str, kind: str, *, game=None, board=None, userid=None, detail=None):
        self.conn.execute(
            "INSERT INTO audit (at, kind, game, board, userid, detail) VALUES (?, ?, ?, ?, ?, ?)",
            (at, kind, game, board, userid, json.dumps(detail) if detail is not None else None),
        )

    # -- outbox --------------------------------------------------------------------

    def outbox_add(self, *, created_at, kind, recipients, envelope_from, message_id, message,
                   inbox_key=None, userid=None) -> int:
        cursor = self.conn.execute(
            "INSERT INTO outbox (created_at, kind, recipients, envelope_from, message_id, message, "
            "status, attempts, next_attempt_at, inbox_key, userid) "
            "VALUES (?, ?, ?, ?, ?, ?, 'pending', 0, ?, ?, ?)",
            (created_at, kind, json.dumps(recipients), envelope_from, message_id, message,
             created_at, inbox_key, userid),
        )
        return cursor.lastrowid

    def outbox_pending_for(self, inbox_key: str) -> list[int]:
        """Rows a command queued but whose delivery a crash may have cut short."""
        return [
            r["id"]
            for r in self._rows(
                "SELECT id FROM outbox WHERE inbox_key = ? AND status IN ('pending', 'sending') "
                "ORDER BY id",
                (inbox_key,),
            )
        ]

    def outbox_count_to_user(self, userid: str, kinds, since: str) -> int:
        marks = ",".join("?" * len(kinds))
        return self._value(
            f"SELECT count(*) FROM outbox WHERE userid = ? AND created_at >= ? AND kind IN ({marks})",
            (userid, since, *kinds),
        )

    def outbox_narrow_recipients(self, row_id: int, recipients, error: str, next_attempt_at: str):
        """Keep retrying only the addresses the relay deferred; the others are done."""
        with self.write():
            self.conn.execute(
                "UPDATE outbox SET status = 'pending', recipients = ?, attempts = attempts + 1, "
                "next_attempt_at = ?, last_error = ?, claimed_at = NULL WHERE id = ?",
                (json.dumps(recipients), next_attempt_at, error, row_id),
            )

    def outbox_claim_many(self, row_ids, claim: str, stale_before: str, is_dead) -> list[dict]:
        """Take rows for delivery in one transaction: pending ones, and ones whose claim is
        stale or whose claimer `is_dead(claim)`; rows done or held elsewhere are left out."""
        if not row_ids:
            return []
        marks = ",".join("?" * len(row_ids))
        with self.write():
            takeable = [
                r["id"]
                for r in self._rows(
                    f"SELECT id, status, claimed_at FROM outbox WHERE id IN ({marks})", row_ids
                )
                if r["status"] == "pending"
                or (r["status"] == "sending"
                    and (r["claimed_at"] < stale_before or is_dead(r["claimed_at"])))
            ]
            if not takeable:
                return []
            marks = ",".join("?" * len(takeable))
            self.conn.execute(
                f"UPDATE outbox SET status = 'sending', claimed_at = ? WHERE id IN ({marks})",
                (claim, *takeable),
            )
            return self._rows(f"SELECT * FROM outbox WHERE id IN ({marks}) ORDER BY id", takeable)

    def outbox_due(self, at: str) -> list[int]:
        """Rows due for a delivery attempt, and rows being sent (the claim decides)."""
        return [
            r["id"]
            for r in self._rows(
                "SELECT id FROM outbox WHERE (status = 'pending' AND next_attempt_at <= ?) "
                "OR status = 'sending' ORDER BY id",
                (at,),
            )
        ]

    def outbox_mark_sent_many(self, row_ids, at: str):
        marks = ",".join("?" * len(row_ids))
        with self.write():
            self.conn.execute(
                f"UPDATE outbox SET status = 'sent', sent_at = ?, attempts = attempts + 1, "
                f"last_error = NULL WHERE id IN ({marks})",
                (at, *row_ids),
            )

    def outbox_mark_retry(self, row_id: int, next_attempt_at: str, error: str):
        with self.write():
            self.conn.execute(
                "UPDATE outbox SET status = 'pending', attempts = attempts + 1, "
                "next_attempt_at = ?, last_error = ?, claimed_at = NULL WHERE id = ?",
                (next_attempt_at, error, row_id),
            )

    def outbox_mark_failed(self, row_id: int, error: str):
        with self.write():
            self.conn.execute(
                "UPDATE outbox SET status = 'failed', attempts = attempts + 1, last_error = ?, "
                "claimed_at = NULL WHERE id = ?",
                (error, row_id),
            )

    def outbox_reschedule(self, row_id: int, at: str) -> bool:
        with self.write():
            return bool(
                self.conn.execute(
                    "UPDATE outbox SET status = 'pending', next_attempt_at = ?, claimed_at = NULL "
                    "WHERE id = ? AND status IN ('pending', 'failed')",
                    (at, row_id),
                ).rowcount
            )

    def outbox_rows(self, statuses=None):
        sql = (
            "SELECT id, created_at, kind, recipients, message_id, status, attempts, "
            "next_attempt_at, last_error, sent_at FROM outbox"
        )
        params = []
        if statuses:
            sql += f" WHERE status IN ({','.join('?' * len(statuses))})"
            params.extend(statuses)
        return self._rows(sql + " ORDER BY id", params)

    # -- hardening (issue 13) --------------------------------------------------------

    def auth_failures_of_user(self, userid: str, since: str) -> list[str]:
        """Times of failed logins to one userid from any sender, oldest first."""
        return [
            r["at"]
            for r in self._rows(
                "SELECT at FROM auth_failures WHERE userid = ? AND at >= ? ORDER BY at",
                (userid, since),
            )
        ]

    def address_proven(self, userid: str, address: str) -> bool:
        return self._row(
            "SELECT 1 FROM address_proofs WHERE userid = ? AND address = ?",
            (userid, address.lower()),
        ) is not None

    def add_address_proof(self, userid: str, address: str, at: str):
        self.conn.execute(
            "INSERT OR IGNORE INTO address_proofs (userid, address, at) VALUES (?, ?, ?)",
            (userid, address.lower(), at),
        )
