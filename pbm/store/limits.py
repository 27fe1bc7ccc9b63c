"""Abuse limits: inbox keys, rate events, failed logins, and the audit log."""

import json

from .repository import Repository


class Limits(Repository):
    def inbox_seen(self, key: str) -> bool:
        return self._value("SELECT 1 FROM inbox WHERE key = ?", (key,)) is not None

    def inbox_record(self, key: str, at: str) -> bool:
        """Record a mail's key in the caller's transaction; False when it was there
        already. One statement: the check and the record were a read and an insert."""
        cursor = self.conn.execute(
            "INSERT OR IGNORE INTO inbox (key, received_at) VALUES (?, ?)", (key, at)
        )
        return cursor.rowcount == 1

    def prune_inbox(self, before: str) -> int:
        return self.conn.execute("DELETE FROM inbox WHERE received_at < ?", (before,)).rowcount

    def audit_count_since(self, kind: str, userid: str, since: str) -> int:
        return self._value(
            "SELECT count(*) FROM audit WHERE kind = ? AND userid = ? AND at >= ?",
            (kind, userid, since),
        )

    def limit_reached_at(self, kind: str, key: str, since: str, limit: int) -> str | None:
        """None while a sender has had fewer than `limit` events of one kind since `since`;
        else the time of the oldest of its `limit` latest (the limit opens again a window
        after it). SQLite steps over the newer ones in its index and hands back one row, so
        the read costs the same whatever the limit and however many a flood left. A limit
        below one is reached from the window's start."""
        if limit < 1:
            return since
        return self._value(
            "SELECT at FROM rate_events WHERE kind = ? AND key = ? AND at >= ?"
            " ORDER BY at DESC LIMIT 1 OFFSET ?",
            (kind, key, since, limit - 1),
        )

    def add_rate_event(self, kind: str, key: str, at: str):
        self.conn.execute(
            "INSERT INTO rate_events (kind, key, at) VALUES (?, ?, ?)", (kind, key, at)
        )

    def auth_failures(self, userid: str, sender: str, since: str) -> list[str]:
        return self._column(
            "SELECT at FROM auth_failures WHERE userid = ? AND sender = ? AND at >= ? ORDER BY at",
            (userid, sender, since),
        )

    def add_auth_failure(self, userid: str, sender: str, at: str):
        self.conn.execute(
            "INSERT INTO auth_failures (userid, sender, at) VALUES (?, ?, ?)", (userid, sender, at)
        )

    def prune_rate_rows(self, before: str) -> int:
        pruned = self.conn.execute("DELETE FROM rate_events WHERE at < ?", (before,)).rowcount
        return (
            pruned + self.conn.execute("DELETE FROM auth_failures WHERE at < ?", (before,)).rowcount
        )

    def audit(self, at: str, kind: str, *, game=None, board=None, userid=None, detail=None):
        self.conn.execute(
            "INSERT INTO audit (at, kind, game, board, userid, detail) VALUES (?, ?, ?, ?, ?, ?)",
            (at, kind, game, board, userid, json.dumps(detail) if detail is not None else None),
        )

    def auth_failures_of_user(self, userid: str, since: str) -> list[str]:
        """Times of failed logins to one userid from any sender, oldest first."""
        return self._column(
            "SELECT at FROM auth_failures WHERE userid = ? AND at >= ? ORDER BY at",
            (userid, since),
        )

    def address_proven(self, userid: str, address: str) -> bool:
        return (
            self._value(
                "SELECT 1 FROM address_proofs WHERE userid = ? AND address = ?",
                (userid, address.lower()),
            )
            is not None
        )

    def address_confirmed(self, address: str) -> bool:
        """Whether the address is registered to an account and confirmed for it."""
        return (
            self._value(
                "SELECT 1 FROM address_proofs p WHERE p.address = ? AND EXISTS "
                "(SELECT 1 FROM addresses a WHERE a.userid = p.userid "
                "AND lower(a.address) = p.address) LIMIT 1",
                (address.lower(),),
            )
            is not None
        )

    def count_rate_events(self, kind: str, since: str) -> int:
        """Events of one kind from every sender since a time (`pbm status`)."""
        return self._value(
            "SELECT count(*) FROM rate_events WHERE kind = ? AND at >= ?", (kind, since)
        )

    def add_address_proof(self, userid: str, address: str, at: str):
        self.conn.execute(
            "INSERT OR IGNORE INTO address_proofs (userid, address, at) VALUES (?, ?, ?)",
            (userid, address.lower(), at),
        )

    def hold_mail(self, userid: str, address: str, kind: str, at: str):
        self.conn.execute(
            "INSERT INTO held_mails (userid, address, kind, at) VALUES (?, ?, ?, ?)",
            (userid, address.lower(), kind, at),
        )

    def held_mails_of(self, userid: str) -> list[tuple[str, int]]:
        """(address, mails held back) of one account's addresses the player was not told of."""
        return self.conn.execute(
            "SELECT address, count(*) FROM held_mails WHERE userid = ? "
            "GROUP BY address ORDER BY min(id)",
            (userid,),
        ).fetchall()

    def forget_held_mails(self, userid: str):
        self.conn.execute("DELETE FROM held_mails WHERE userid = ?", (userid,))

    def held_mail_count(self) -> int:
        return self._value("SELECT count(*) FROM held_mails")

    def prune_held_mails(self, before: str) -> int:
        return self.conn.execute("DELETE FROM held_mails WHERE at < ?", (before,)).rowcount

    def last_audit_at(self, kind: str) -> str | None:
        return self._value("SELECT max(at) FROM audit WHERE kind = ?", (kind,))
