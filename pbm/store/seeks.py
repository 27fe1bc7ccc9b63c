"""Open seeks (docs/spec/server.md §11.2): the terms of a user's seeking count in a game.
The count itself stays in challenge_settings, where the standings read it (docs/spec/server.md
§3.9)."""

import json

from .records import SeekRecord
from .repository import Repository

DECODE = {"options": json.loads, "server_options": json.loads}
SELECT = (
    "SELECT s.*, c.seeking AS seeking FROM seeks s JOIN challenge_settings c "
    "ON c.game = s.game AND c.userid = s.userid"
)


class Seeks(Repository):
    def put(
        self,
        *,
        game,
        userid,
        options,
        server_options,
        rating_low,
        rating_high,
        created_at,
        lapses_at,
    ):
        """The user's terms, replacing any earlier ones."""
        self.conn.execute(
            "INSERT OR REPLACE INTO seeks (game, userid, options, server_options, rating_low, "
            "rating_high, created_at, lapses_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                game,
                userid,
                json.dumps(options, sort_keys=True),
                json.dumps(server_options, sort_keys=True),
                rating_low,
                rating_high,
                created_at,
                lapses_at,
            ),
        )

    def drop(self, game: str, userid: str):
        self.conn.execute("DELETE FROM seeks WHERE game = ? AND userid = ?", (game, userid))

    def get(self, game: str, userid: str) -> SeekRecord | None:
        return self._record(
            SeekRecord, SELECT + " WHERE s.game = ? AND s.userid = ?", (game, userid), DECODE
        )

    def open(self, game: str, at: str) -> list[SeekRecord]:
        """The seeks of a game that may pair now, oldest first: a count left, not lapsed,
        the account active."""
        return self._records(
            SeekRecord,
            SELECT + " JOIN users u ON u.userid = s.userid WHERE s.game = ? AND c.seeking > 0 "
            "AND s.lapses_at > ? AND u.status = 'active' ORDER BY s.created_at, s.userid",
            (game, at),
            DECODE,
        )

    def lapsed(self, game: str, at: str) -> list[SeekRecord]:
        """The game's seeks whose time is up."""
        return self._records(
            SeekRecord,
            SELECT + " WHERE s.game = ? AND s.lapses_at <= ? ORDER BY s.userid",
            (game, at),
            DECODE,
        )
