"""Accounts, their addresses and vacations, and each user's per-game challenge settings."""

from .records import ChallengeSettingsRecord, ResetCodeRecord, UserRecord, VacationRecord
from .repository import Repository


class Users(Repository):
    def get(self, userid: str) -> UserRecord | None:
        return self._record(UserRecord, "SELECT * FROM users WHERE userid = ?", (userid,))

    def is_active(self, userid: str) -> bool:
        """Whether the account exists and has not been deleted."""
        return (
            self._value("SELECT 1 FROM users WHERE userid = ? AND status = 'active'", (userid,))
            is not None
        )

    def password_hash(self, userid: str) -> str | None:
        return self._value(
            "SELECT password_hash FROM users WHERE userid = ? AND status = 'active'", (userid,)
        )

    def create(self, userid: str, password_hash: str, addresses, at: str, html_mail=False):
        self.conn.execute(
            "INSERT INTO users (userid, password_hash, status, created_at, html_mail) "
            "VALUES (?, ?, 'active', ?, ?)",
            (userid, password_hash, at, int(html_mail)),
        )
        self.set_addresses(userid, addresses)

    def set_password_hash(self, userid: str, password_hash: str):
        self.conn.execute(
            "UPDATE users SET password_hash = ? WHERE userid = ?", (password_hash, userid)
        )

    def addresses(self, userid: str) -> list[str]:
        return self._column(
            "SELECT address FROM addresses WHERE userid = ? ORDER BY position", (userid,)
        )

    def has_address(self, userid: str, address: str | None) -> bool:
        """Whether `address` (any case) is one of the account's."""
        wanted = (address or "").lower()
        return bool(wanted) and wanted in {a.lower() for a in self.addresses(userid)}

    def with_address(self, address: str) -> list[str]:
        """The active accounts one of whose addresses this is (any case)."""
        return self._column(
            "SELECT DISTINCT a.userid FROM addresses a JOIN users u ON u.userid = a.userid "
            "WHERE lower(a.address) = lower(?) AND u.status = 'active' ORDER BY a.userid",
            (address,),
        )

    def set_addresses(self, userid: str, addresses):
        self.conn.execute("DELETE FROM addresses WHERE userid = ?", (userid,))
        self.conn.executemany(
            "INSERT INTO addresses (userid, address, position) VALUES (?, ?, ?)",
            [(userid, address, i) for i, address in enumerate(addresses)],
        )

    def add_reset_code(
        self, userid: str, code_digest: str, at: str, expires_at: str, token_id: str
    ):
        """One more code: those mailed before stay valid until used or expired."""
        self.conn.execute(
            "INSERT INTO reset_codes (userid, code_digest, created_at, expires_at, token_id) "
            "VALUES (?, ?, ?, ?, ?)",
            (userid, code_digest, at, expires_at, token_id),
        )

    def reset_codes(self, userid: str, at: str) -> list[ResetCodeRecord]:
        """The account's codes not expired at `at`, oldest first."""
        return self._records(
            ResetCodeRecord,
            "SELECT * FROM reset_codes WHERE userid = ? AND expires_at > ? ORDER BY id",
            (userid, at),
        )

    def reset_by_token(self, token_id: str) -> ResetCodeRecord | None:
        return self._record(
            ResetCodeRecord, "SELECT * FROM reset_codes WHERE token_id = ?", (token_id,)
        )

    def drop_reset_codes(self, userid: str):
        """After a reset: the password the codes were for is gone."""
        self.conn.execute("DELETE FROM reset_codes WHERE userid = ?", (userid,))

    def prune_reset_codes(self, before: str) -> int:
        return self.conn.execute("DELETE FROM reset_codes WHERE expires_at < ?", (before,)).rowcount

    def delete(self, userid: str, at: str):
        """Keep the userid as a tombstone so it is never reused; erase the rest."""
        self.conn.execute("DELETE FROM addresses WHERE userid = ?", (userid,))
        for table in (
            "reset_codes",
            "held_mails",
            "subscriptions",
            "subscribe_all",
            "notify_board",
            "notify_game",
            "challenge_settings",
            "seeks",
        ):
            self.conn.execute(f"DELETE FROM {table} WHERE userid = ?", (userid,))
        self.conn.execute(
            "UPDATE users SET password_hash = NULL, status = 'deleted', deleted_at = ? "
            "WHERE userid = ?",
            (at, userid),
        )

    def active_userids(self) -> list[str]:
        return self._column("SELECT userid FROM users WHERE status = 'active' ORDER BY userid")

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

    def challenge_settings(self, game: str, userid: str) -> ChallengeSettingsRecord | None:
        return self._record(
            ChallengeSettingsRecord,
            "SELECT * FROM challenge_settings WHERE game = ? AND userid = ?",
            (game, userid),
        )

    def challenge_settings_of(self, userid: str) -> list[ChallengeSettingsRecord]:
        return self._records(
            ChallengeSettingsRecord,
            "SELECT * FROM challenge_settings WHERE userid = ? ORDER BY game",
            (userid,),
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

    def all_challenge_settings(self, game: str) -> list[ChallengeSettingsRecord]:
        return self._records(
            ChallengeSettingsRecord, "SELECT * FROM challenge_settings WHERE game = ?", (game,)
        )

    def vacations(self, userid: str) -> list[VacationRecord]:
        return self._records(
            VacationRecord,
            "SELECT * FROM vacations WHERE userid = ? ORDER BY started_at",
            (userid,),
        )

    def start_vacation(self, userid: str, at: str):
        self.conn.execute("INSERT INTO vacations (userid, started_at) VALUES (?, ?)", (userid, at))

    def end_vacation(self, userid: str, at: str, ended_by: str):
        self.conn.execute(
            "UPDATE vacations SET ended_at = ?, ended_by = ? WHERE userid = ? AND ended_at IS NULL",
            (at, ended_by, userid),
        )

    def on_vacation(self) -> list[str]:
        return self._column(
            "SELECT DISTINCT userid FROM vacations WHERE ended_at IS NULL ORDER BY userid"
        )

    def pbmserv_subjects(self, userid: str) -> bool:
        return bool(
            self._value("SELECT pbmserv_subjects FROM mail_settings WHERE userid = ?", (userid,))
        )

    def set_pbmserv_subjects(self, userid: str, on: bool):
        self.conn.execute(
            "INSERT INTO mail_settings (userid, pbmserv_subjects) VALUES (?, ?) "
            "ON CONFLICT (userid) DO UPDATE SET pbmserv_subjects = excluded.pbmserv_subjects",
            (userid, int(on)),
        )

    def html_mail(self, userid: str) -> bool:
        return bool(self._value("SELECT html_mail FROM users WHERE userid = ?", (userid,)))

    def set_html_mail(self, userid: str, on: bool):
        self.conn.execute("UPDATE users SET html_mail = ? WHERE userid = ?", (int(on), userid))

    def digest(self, userid: str) -> bool:
        return bool(self._value("SELECT digest FROM mail_settings WHERE userid = ?", (userid,)))

    def set_digest(self, userid: str, on: bool):
        self.conn.execute(
            "INSERT INTO mail_settings (userid, digest) VALUES (?, ?) "
            "ON CONFLICT (userid) DO UPDATE SET digest = excluded.digest",
            (userid, int(on)),
        )

    def digest_due(self, before: str) -> list[str]:
        """Active users with the digest on whose last digest went out before `before`."""
        return self._column(
            "SELECT m.userid FROM mail_settings m JOIN users u ON u.userid = m.userid "
            "WHERE m.digest = 1 AND u.status = 'active' "
            "AND (m.digest_sent_at IS NULL OR m.digest_sent_at <= ?) ORDER BY m.userid",
            (before,),
        )

    def set_digest_sent(self, userid: str, at: str):
        self.conn.execute(
            "UPDATE mail_settings SET digest_sent_at = ? WHERE userid = ?", (at, userid)
        )
