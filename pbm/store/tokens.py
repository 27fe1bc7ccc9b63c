"""Reply tokens: what each was issued for, until it expires."""

from .records import ReplyTokenRecord
from .repository import Repository


class ReplyTokens(Repository):
    def add(
        self,
        token_id: str,
        game: str,
        number: int,
        userid: str,
        move_number: int,
        created_at: str,
        expires_at: str,
        message_id: str | None = None,
    ):
        """`message_id`: the mail that carries the token (docs/spec/server.md §11.3)."""
        self.conn.execute(
            "INSERT INTO reply_tokens (id, game, number, userid, move_number, created_at, "
            "expires_at, message_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (token_id, game, number, userid, move_number, created_at, expires_at, message_id),
        )

    def get(self, token_id: str) -> ReplyTokenRecord | None:
        return self._record(
            ReplyTokenRecord, "SELECT * FROM reply_tokens WHERE id = ?", (token_id,)
        )

    def by_message_id(self, message_ids) -> ReplyTokenRecord | None:
        """The token of the newest of the mails with these Message-IDs that carried one."""
        wanted = list(message_ids)
        if not wanted:
            return None
        marks = ", ".join("?" * len(wanted))
        return self._record(
            ReplyTokenRecord,
            f"SELECT * FROM reply_tokens WHERE message_id IN ({marks}) "
            "ORDER BY created_at DESC, move_number DESC LIMIT 1",
            wanted,
        )

    def delete_expired(self, at: str) -> int:
        return self.conn.execute("DELETE FROM reply_tokens WHERE expires_at <= ?", (at,)).rowcount
