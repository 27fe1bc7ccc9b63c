"""Boards, their seats, the ply log, snapshots and comments."""

import json

from .records import BoardRecord, LoggedPlyRecord, PlyRecord
from .repository import Repository

# The board lists of the web view (docs/spec/server.md §11.8): archived boards are finished
# ones that cleanup has archived; `ended` is both.
LISTINGS = {
    "active": "status = 'active'",
    "finished": "status = 'finished' AND archived_at IS NULL",
    "archived": "status = 'finished' AND archived_at IS NOT NULL",
    "ended": "status = 'finished'",
}


class Boards(Repository):
    def next_number(self, game: str) -> int:
        number = self._value("SELECT next_number FROM counters WHERE game = ?", (game,))
        if number is None:
            number = 101
            self.conn.execute("INSERT INTO counters (game, next_number) VALUES (?, ?)", (game, 102))
        else:
            self.conn.execute(
                "UPDATE counters SET next_number = next_number + 1 WHERE game = ?", (game,)
            )
        return number

    def create(
        self,
        *,
        game,
        number,
        options,
        seed,
        nag_days,
        forfeit_days,
        total_days,
        created_at,
        userids,
        rated,
        clock=(None, None, None),
    ) -> int:
        """`clock`: the correspondence clock's initial bank, increment and cap in seconds,
        or Nones for a board without one."""
        cursor = self.conn.execute(
            "INSERT INTO boards (game, number, status, options, seed, nag_days, forfeit_days, "
            "total_days, created_at, last_move_at, rated, clock_initial, clock_increment, "
            "clock_cap) VALUES (?, ?, 'active', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                game,
                number,
                json.dumps(options, sort_keys=True),
                seed,
                nag_days,
                forfeit_days,
                total_days,
                created_at,
                created_at,
                int(rated),
                *clock,
            ),
        )
        board_id = cursor.lastrowid
        self.conn.executemany(
            "INSERT INTO seats (board_id, seat, userid) VALUES (?, ?, ?)",
            [(board_id, seat, userid) for seat, userid in enumerate(userids)],
        )
        return board_id

    def get(self, game: str, number: int) -> BoardRecord | None:
        """A board that is not removed; removed boards behave as not found."""
        return self._record(
            BoardRecord,
            "SELECT * FROM boards WHERE game = ? AND number = ? AND status != 'removed'",
            (game, number),
        )

    def by_id(self, board_id: int) -> BoardRecord | None:
        return self._record(BoardRecord, "SELECT * FROM boards WHERE id = ?", (board_id,))

    def seat_userids(self, board_id: int) -> list[str]:
        return self._column(
            "SELECT userid FROM seats WHERE board_id = ? ORDER BY seat", (board_id,)
        )

    def set_seat_userids(self, board_id: int, userids):
        self.conn.execute("DELETE FROM seats WHERE board_id = ?", (board_id,))
        self.conn.executemany(
            "INSERT INTO seats (board_id, seat, userid) VALUES (?, ?, ?)",
            [(board_id, seat, userid) for seat, userid in enumerate(userids)],
        )

    def plies(self, board_id: int) -> list[PlyRecord]:
        """The live plies of the log, in order."""
        return self._records(
            PlyRecord,
            "SELECT ply, seat, userid, kind, text, auto, charged, created_at, clock_charged "
            "FROM moves WHERE board_id = ? AND undone_at IS NULL ORDER BY ply",
            (board_id,),
        )

    def log_mark(self, board_id: int) -> tuple[int, int | None]:
        """The count of the live plies and their highest id: what identifies a committed
        log (pbm/boardcache.py), read from the index of live plies alone."""
        count, highest = self.conn.execute(
            "SELECT count(*), max(id) FROM moves WHERE board_id = ? AND undone_at IS NULL",
            (board_id,),
        ).fetchone()
        return count, highest

    def log(self, board_id: int) -> list[LoggedPlyRecord]:
        """Every ply the board's log holds, undone ones too, in the order they were made."""
        return self._records(
            LoggedPlyRecord,
            "SELECT ply, seat, userid, kind, text, auto, charged, created_at, undone_at "
            "FROM moves WHERE board_id = ? ORDER BY id",
            (board_id,),
        )

    def append_ply(
        self, board_id: int, *, ply, seat, userid, kind, text, auto, charged, at, clock_charged=None
    ):
        self.conn.execute(
            "INSERT INTO moves (board_id, ply, seat, userid, kind, text, auto, charged, created_at, "
            "clock_charged) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (board_id, ply, seat, userid, kind, text, int(auto), charged, at, clock_charged),
        )
        self.conn.execute("UPDATE boards SET last_move_at = ? WHERE id = ?", (at, board_id))

    def undo_all_plies(self, board_id: int, at: str):
        self.conn.execute(
            "UPDATE moves SET undone_at = ? WHERE board_id = ? AND undone_at IS NULL",
            (at, board_id),
        )

    def set_status(self, board_id: int, status: str, finished_at: str | None = None):
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

    def all(self) -> list[BoardRecord]:
        return self._records(
            BoardRecord, "SELECT * FROM boards WHERE status != 'removed' ORDER BY game, number"
        )

    def of_game(self, game: str, userids=(), include_archived=False) -> list[BoardRecord]:
        """A game's boards, optionally only those where any of the userids holds a seat."""
        sql = "SELECT * FROM boards WHERE game = ? AND status != 'removed'"
        params = [game]
        if not include_archived:
            sql += " AND archived_at IS NULL"
        if userids:
            marks = ",".join("?" * len(userids))
            sql += f" AND id IN (SELECT board_id FROM seats WHERE userid IN ({marks}))"
            params.extend(userids)
        return self._records(BoardRecord, sql + " ORDER BY number", params)

    def listed(self, game: str, listing: str, offset: int, limit: int) -> list[BoardRecord]:
        """One page of a game's boards of a LISTINGS kind, by number. The boards skipped
        are counted in the index alone; only the page's rows are read."""
        return self._records(
            BoardRecord,
            "SELECT * FROM boards WHERE id IN (SELECT id FROM boards WHERE game = ? AND "
            f"{LISTINGS[listing]} ORDER BY number LIMIT ? OFFSET ?) ORDER BY number",
            (game, limit, offset),
        )

    def count_listed(self, game: str, listing: str) -> int:
        return self._value(
            f"SELECT count(*) FROM boards WHERE game = ? AND {LISTINGS[listing]}", (game,)
        )

    def listed_of_user(self, userid: str, listing: str, offset: int, limit: int):
        """One page of the boards of a LISTINGS kind where the user holds a seat."""
        return self._records(
            BoardRecord,
            f"SELECT * FROM boards WHERE {LISTINGS[listing]} AND id IN "
            "(SELECT board_id FROM seats WHERE userid = ?) ORDER BY game, number LIMIT ? OFFSET ?",
            (userid, limit, offset),
        )

    def count_listed_of_user(self, userid: str, listing: str) -> int:
        return self._value(
            f"SELECT count(*) FROM boards WHERE {LISTINGS[listing]} AND id IN "
            "(SELECT board_id FROM seats WHERE userid = ?)",
            (userid,),
        )

    def active_counts(self) -> dict:
        return dict(
            self.conn.execute(
                "SELECT game, count(*) AS n FROM boards WHERE status = 'active' GROUP BY game"
            ).fetchall()
        )

    def listing_counts(self) -> dict:
        """Per game, the number of its boards in each listing: {game: {listing: n}}."""
        listings = ("active", "finished", "archived")
        sums = ", ".join(f"sum({LISTINGS[listing]})" for listing in listings)
        rows = self.conn.execute(f"SELECT game, {sums} FROM boards GROUP BY game").fetchall()
        return {row[0]: dict(zip(listings, row[1:])) for row in rows}

    def active_of_user(self, userid: str) -> list[BoardRecord]:
        return self._records(
            BoardRecord,
            "SELECT * FROM boards WHERE status = 'active' AND id IN "
            "(SELECT board_id FROM seats WHERE userid = ?) ORDER BY game, number",
            (userid,),
        )

    def of_user(self, userid: str) -> list[BoardRecord]:
        """Every board, of any status but removed, where the user holds a seat."""
        return self._records(
            BoardRecord,
            "SELECT * FROM boards WHERE status != 'removed' AND id IN "
            "(SELECT board_id FROM seats WHERE userid = ?) ORDER BY game, number",
            (userid,),
        )

    def count_moved_since(self, since: str) -> int:
        """Boards on which a player made a ply since a time, finished ones too."""
        return self._value(
            "SELECT count(DISTINCT board_id) FROM moves WHERE created_at >= ? AND auto = 0",
            (since,),
        )

    def count_players_moved_since(self, since: str) -> int:
        """Players who made a ply themselves since a time."""
        return self._value(
            "SELECT count(DISTINCT userid) FROM moves WHERE created_at >= ? AND auto = 0",
            (since,),
        )

    def count_started_since(self, userid: str, since: str) -> int:
        """Boards of every game created since a time with the user in a seat."""
        return self._value(
            "SELECT count(*) FROM boards WHERE created_at >= ? AND id IN "
            "(SELECT board_id FROM seats WHERE userid = ?)",
            (since, userid),
        )

    def count_active(self, game: str, userid: str, except_board: int | None = None) -> int:
        return self._value(
            "SELECT count(*) FROM boards WHERE game = ? AND status = 'active' AND id != ? AND id IN "
            "(SELECT board_id FROM seats WHERE userid = ?)",
            (game, except_board or -1, userid),
        )

    def undo_plies_from(self, board_id: int, ply: int, at: str):
        self.conn.execute(
            "UPDATE moves SET undone_at = ? WHERE board_id = ? AND ply >= ? AND undone_at IS NULL",
            (at, board_id, ply),
        )

    def active(self, games=None) -> list[BoardRecord]:
        sql = "SELECT * FROM boards WHERE status = 'active'"
        params = []
        if games:
            sql += f" AND game IN ({','.join('?' * len(games))})"
            params.extend(games)
        return self._records(BoardRecord, sql + " ORDER BY game, number", params)

    def to_archive(self, before: str, games=None) -> list[BoardRecord]:
        sql = "SELECT * FROM boards WHERE status = 'finished' AND archived_at IS NULL AND finished_at <= ?"
        params = [before]
        if games:
            sql += f" AND game IN ({','.join('?' * len(games))})"
            params.extend(games)
        return self._records(BoardRecord, sql + " ORDER BY game, number", params)

    def archive(self, board_id: int, at: str):
        self.conn.execute(
            "UPDATE boards SET archived_at = ?, snapshot_ply = NULL, snapshot_state = NULL "
            "WHERE id = ?",
            (at, board_id),
        )

    def set_nagged(self, board_id: int, at: str):
        self.conn.execute("UPDATE boards SET last_nag_at = ? WHERE id = ?", (at, board_id))
