"""The outbox: mail queued in a command's transaction and its delivery state."""

import json
from contextlib import contextmanager

from .records import OutboxEntry, OutboxHealth, OutboxRow
from .repository import Repository


class Outbox(Repository):
    _claim: str | None = None  # while writing_claimed(): the claim new rows are written with
    _written: dict[int, OutboxRow] = {}  # and the rows so written; a new dict each time

    def add(
        self,
        *,
        created_at,
        kind,
        recipients,
        envelope_from,
        message_id,
        message,
        inbox_key=None,
        userid=None,
    ) -> int:
        claim = self._claim
        cursor = self.conn.execute(
            "INSERT INTO outbox (created_at, kind, recipients, envelope_from, message_id, message, "
            "status, attempts, next_attempt_at, inbox_key, userid, claimed_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?)",
            (
                created_at,
                kind,
                json.dumps(recipients),
                envelope_from,
                message_id,
                message,
                "pending" if claim is None else "sending",
                created_at,
                inbox_key,
                userid,
                claim,
            ),
        )
        if claim is not None:
            # As claim_many gives a row it claims: as it was before the claim.
            self._written[cursor.lastrowid] = OutboxRow(
                id=cursor.lastrowid,
                created_at=created_at,
                kind=kind,
                recipients=list(recipients),
                envelope_from=envelope_from,
                message_id=message_id,
                message=message,
                status="pending",
                attempts=0,
                next_attempt_at=created_at,
                claimed_at=None,
                last_error=None,
                sent_at=None,
                inbox_key=inbox_key,
                userid=userid,
            )
        return cursor.lastrowid

    @contextmanager
    def writing_claimed(self, claim: str):
        """Rows added inside are written already claimed by `claim`: for a caller that
        claims them in the same transaction anyway, to deliver them right after its commit
        (pbm serve's group), a read and an update fewer. Yields the rows so written, by id,
        as claim_many would give them; a row of a savepoint rolled back may be among them
        (its id given again to the next row, which replaces it): take only the ids you
        queued."""
        self._claim, self._written = claim, {}
        try:
            yield self._written
        finally:
            self._claim, self._written = None, {}

    def get(self, row_id: int) -> OutboxRow | None:
        return self._record(
            OutboxRow,
            "SELECT * FROM outbox WHERE id = ?",
            (row_id,),
            decode={"recipients": json.loads},
        )

    def pending_for(self, inbox_key: str) -> list[int]:
        """Rows a mail's commands queued but whose delivery a crash may have cut short: its
        own, and those of the lines of a `multiple` (keyed `<key>#<n>`; '$' follows '#')."""
        return self._column(
            "SELECT id FROM outbox WHERE (inbox_key = ? OR (inbox_key > ? AND inbox_key < ?)) "
            "AND status IN ('pending', 'sending') ORDER BY id",
            (inbox_key, inbox_key + "#", inbox_key + "$"),
        )

    def count_to_user(self, userid: str, kinds, since: str) -> int:
        marks = ",".join("?" * len(kinds))
        return self._value(
            f"SELECT count(*) FROM outbox WHERE userid = ? AND created_at >= ? AND kind IN ({marks})",
            (userid, since, *kinds),
        )

    def narrow_recipients(self, row_id: int, recipients, error: str, next_attempt_at: str):
        """Keep retrying only the addresses the relay deferred; the others are done."""
        with self.store.write():
            self.conn.execute(
                "UPDATE outbox SET status = 'pending', recipients = ?, attempts = attempts + 1, "
                "next_attempt_at = ?, last_error = ?, claimed_at = NULL WHERE id = ?",
                (json.dumps(recipients), next_attempt_at, error, row_id),
            )

    def claim_many(self, row_ids, claim: str, stale_before: str, is_dead) -> list[OutboxRow]:
        """Take rows for delivery in one transaction: pending ones, and ones whose claim is
        stale or whose claimer `is_dead(claim)`; rows done or held elsewhere are left out.
        The rows come as they were found: status `sending` tells one taken over."""
        if not row_ids:
            return []
        marks = ",".join("?" * len(row_ids))
        with self.store.write():
            rows = [
                row
                for row in self._records(
                    OutboxRow,
                    f"SELECT * FROM outbox WHERE id IN ({marks}) ORDER BY id",
                    row_ids,
                    decode={"recipients": json.loads},
                )
                if row.status == "pending"
                or (
                    row.status == "sending"
                    and (row.claimed_at < stale_before or is_dead(row.claimed_at))
                )
            ]
            if rows:
                marks = ",".join("?" * len(rows))
                self.conn.execute(
                    f"UPDATE outbox SET status = 'sending', claimed_at = ? WHERE id IN ({marks})",
                    (claim, *(row.id for row in rows)),
                )
            return rows

    def sent_among(self, row_ids) -> list[int]:
        """Which of these rows are marked sent."""
        if not row_ids:
            return []
        marks = ",".join("?" * len(row_ids))
        return self._column(
            f"SELECT id FROM outbox WHERE status = 'sent' AND id IN ({marks}) ORDER BY id",
            list(row_ids),
        )

    def due(self, at: str) -> list[int]:
        """Rows due for a delivery attempt, and rows being sent (the claim decides)."""
        return self._column(
            "SELECT id FROM outbox WHERE (status = 'pending' AND next_attempt_at <= ?) "
            "OR status = 'sending' ORDER BY id",
            (at,),
        )

    def mark_sent_many(self, row_ids, at: str):
        marks = ",".join("?" * len(row_ids))
        with self.store.write():
            self.conn.execute(
                f"UPDATE outbox SET status = 'sent', sent_at = ?, attempts = attempts + 1, "
                f"last_error = NULL WHERE id IN ({marks})",
                (at, *row_ids),
            )

    def mark_retry(self, row_id: int, next_attempt_at: str, error: str):
        with self.store.write():
            self.conn.execute(
                "UPDATE outbox SET status = 'pending', attempts = attempts + 1, "
                "next_attempt_at = ?, last_error = ?, claimed_at = NULL WHERE id = ?",
                (next_attempt_at, error, row_id),
            )

    def mark_failed(self, row_id: int, error: str):
        with self.store.write():
            self.conn.execute(
                "UPDATE outbox SET status = 'failed', attempts = attempts + 1, last_error = ?, "
                "claimed_at = NULL WHERE id = ?",
                (error, row_id),
            )

    def reschedule(self, row_id: int, at: str) -> bool:
        with self.store.write():
            return bool(
                self.conn.execute(
                    "UPDATE outbox SET status = 'pending', next_attempt_at = ?, claimed_at = NULL "
                    "WHERE id = ? AND status IN ('pending', 'failed')",
                    (at, row_id),
                ).rowcount
            )

    def health(self) -> list[OutboxHealth]:
        """Mail not yet sent, by state, with the oldest message's time."""
        return self._records(
            OutboxHealth,
            "SELECT status, count(*) AS count, min(created_at) AS oldest_at FROM outbox "
            "WHERE status != 'sent' GROUP BY status ORDER BY status",
        )

    def rows(self, statuses=None) -> list[OutboxEntry]:
        sql = (
            "SELECT id, created_at, kind, recipients, message_id, status, attempts, "
            "next_attempt_at, last_error, sent_at FROM outbox"
        )
        params = []
        if statuses:
            sql += f" WHERE status IN ({','.join('?' * len(statuses))})"
            params.extend(statuses)
        return self._records(
            OutboxEntry, sql + " ORDER BY id", params, decode={"recipients": json.loads}
        )
