"""Votes, queued moves and pending resignations, simultaneous-move submissions."""

import json

from .records import QueuedRecord, SubmissionRecord, VoteRecord
from .repository import Repository


class Votes(Repository):
    def get(self, board_id: int) -> VoteRecord | None:
        return self._record(
            VoteRecord,
            "SELECT * FROM votes WHERE board_id = ?",
            (board_id,),
            decode={"accepted": json.loads},
        )

    def start(self, board_id: int, kind: str, proposer: str, at: str, accepted):
        self.conn.execute(
            "INSERT INTO votes (board_id, kind, proposer, created_at, accepted) VALUES (?, ?, ?, ?, ?)",
            (board_id, kind, proposer, at, json.dumps(sorted(accepted))),
        )

    def set_accepted(self, board_id: int, accepted):
        self.conn.execute(
            "UPDATE votes SET accepted = ? WHERE board_id = ?",
            (json.dumps(sorted(accepted)), board_id),
        )

    def set_nagged(self, board_id: int, at: str):
        self.conn.execute("UPDATE votes SET last_nag_at = ? WHERE board_id = ?", (at, board_id))

    def end(self, board_id: int):
        self.conn.execute("DELETE FROM votes WHERE board_id = ?", (board_id,))

    def queued(self, board_id: int, seat: int) -> QueuedRecord | None:
        return self._record(
            QueuedRecord, "SELECT * FROM queued WHERE board_id = ? AND seat = ?", (board_id, seat)
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

    def submission(self, board_id: int, seat: int) -> SubmissionRecord | None:
        return self._record(
            SubmissionRecord,
            "SELECT * FROM submissions WHERE board_id = ? AND seat = ?",
            (board_id, seat),
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
