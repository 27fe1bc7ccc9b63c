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
    ):
        self.conn.execute(
            "INSERT INTO reply_tokens (id, game, number, userid, move_number, created_at, "
            "expires_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (token_id, game, number, userid, move_number, created_at, expires_at),
        )

    def get(self, token_id: str) -> ReplyTokenRecord | None:
        return self._record(
            ReplyTokenRecord, "SELECT * FROM reply_tokens WHERE id = ?", (token_id,)
        )

    def delete_expired(self, at: str) -> int:
        return self.conn.execute("DELETE FROM reply_tokens WHERE expires_at <= ?", (at,)).rowcount
