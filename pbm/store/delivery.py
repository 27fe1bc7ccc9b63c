"""What became of our mail: bounces, addresses marked failing, and the List-Unsubscribe
tokens with the streams they turn off (docs/spec/server.md §5.9, §5.10)."""

from .records import BounceRecord, FailingAddressRecord, UnsubscribeTokenRecord
from .repository import Repository


class Delivery(Repository):
    # -- bounces and failing addresses ---------------------------------------------

    def add_bounce(self, address: str, kind: str, at: str, outbox_id: int, detail: str):
        self.conn.execute(
            "INSERT INTO bounces (address, kind, at, outbox_id, detail) VALUES (?, ?, ?, ?, ?)",
            (address, kind, at, outbox_id, detail),
        )

    def bounces_since(self, address: str, kind: str, since: str) -> list[BounceRecord]:
        return self._records(
            BounceRecord,
            "SELECT * FROM bounces WHERE address = ? AND kind = ? AND at >= ? ORDER BY at",
            (address, kind, since),
        )

    def mark_failing(self, address: str, since: str, reason: str, outbox_id: int) -> bool:
        """True when the address was not marked before."""
        return bool(
            self.conn.execute(
                "INSERT OR IGNORE INTO failing_addresses (address, since, reason, outbox_id) "
                "VALUES (?, ?, ?, ?)",
                (address, since, reason, outbox_id),
            ).rowcount
        )

    def clear(self, address: str) -> bool:
        """A mail came from the address: its mark and the failures counted towards one go.
        True when it was marked."""
        cleared = self.conn.execute(
            "DELETE FROM failing_addresses WHERE address = ?", (address,)
        ).rowcount
        self.conn.execute("DELETE FROM bounces WHERE address = ?", (address,))
        return bool(cleared)

    def failing_among(self, addresses) -> set[str]:
        """Which of these addresses (any case) are marked failing, in lower case."""
        lowered = sorted({a.lower() for a in addresses})
        if not lowered:
            return set()
        marks = ",".join("?" * len(lowered))
        return set(
            self._column(
                f"SELECT address FROM failing_addresses WHERE address IN ({marks})", lowered
            )
        )

    def failing(self) -> list[FailingAddressRecord]:
        return self._records(
            FailingAddressRecord, "SELECT * FROM failing_addresses ORDER BY since, address"
        )

    def any_failing(self) -> bool:
        return self._value("SELECT 1 FROM failing_addresses LIMIT 1") is not None

    def owners(self, address: str) -> list[str]:
        """The active accounts an address is registered to."""
        return self._column(
            "SELECT DISTINCT a.userid FROM addresses a JOIN users u ON u.userid = a.userid "
            "WHERE lower(a.address) = ? AND u.status = 'active' ORDER BY a.userid",
            (address.lower(),),
        )

    def failing_counts(self, userids) -> dict:
        """{userid: (addresses, failing addresses)} for those of the users with a failing
        address; one query for all the seat holders of a board."""
        wanted = sorted(set(userids))
        if not wanted:
            return {}
        marks = ",".join("?" * len(wanted))
        rows = self.conn.execute(
            "SELECT a.userid, count(*), count(f.address) FROM addresses a "
            "LEFT JOIN failing_addresses f ON f.address = lower(a.address) "
            f"WHERE a.userid IN ({marks}) GROUP BY a.userid HAVING count(f.address) > 0",
            wanted,
        ).fetchall()
        return {userid: (total, failing) for userid, total, failing in rows}

    def prune_bounces(self, before: str) -> int:
        return self.conn.execute("DELETE FROM bounces WHERE at < ?", (before,)).rowcount

    # -- List-Unsubscribe ------------------------------------------------------------

    def add_unsubscribe_token(self, token: str, userid: str, stream: str, game, number):
        self.conn.execute(
            "INSERT OR IGNORE INTO unsubscribe_tokens (token, userid, stream, game, number) "
            "VALUES (?, ?, ?, ?, ?)",
            (token, userid, stream, game, number),
        )

    def unsubscribe_token(self, token: str) -> UnsubscribeTokenRecord | None:
        return self._record(
            UnsubscribeTokenRecord, "SELECT * FROM unsubscribe_tokens WHERE token = ?", (token,)
        )

    def stop_notify(self, game: str, board_id: int | None, userid: str) -> bool:
        """Notification of the game's board ends, and of this board's, off; True when
        either was on."""
        stopped = self.conn.execute(
            "DELETE FROM notify_game WHERE game = ? AND userid = ?", (game, userid)
        ).rowcount
        if board_id is not None:
            stopped += self.conn.execute(
                "DELETE FROM notify_board WHERE board_id = ? AND userid = ?", (board_id, userid)
            ).rowcount
        return bool(stopped)

    def nags_off(self, board_id: int, userid: str) -> bool:
        return (
            self._value(
                "SELECT 1 FROM nag_optouts WHERE board_id = ? AND userid = ?", (board_id, userid)
            )
            is not None
        )

    def turn_nags_off(self, board_id: int, userid: str) -> bool:
        return bool(
            self.conn.execute(
                "INSERT OR IGNORE INTO nag_optouts (board_id, userid) VALUES (?, ?)",
                (board_id, userid),
            ).rowcount
        )
