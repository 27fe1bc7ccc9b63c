"""Subscriptions to boards and games, and notifications."""

from .records import BoardRecord
from .repository import Repository


class Watching(Repository):
    def subscribers(self, board_id: int) -> list[str]:
        return self._column(
            "SELECT userid FROM subscriptions WHERE board_id = ? ORDER BY userid", (board_id,)
        )

    def subscribe(self, board_id: int, userid: str):
        self.conn.execute(
            "INSERT OR IGNORE INTO subscriptions (board_id, userid) VALUES (?, ?)",
            (board_id, userid),
        )

    def unsubscribe(self, board_id: int, userid: str) -> bool:
        return bool(
            self.conn.execute(
                "DELETE FROM subscriptions WHERE board_id = ? AND userid = ?", (board_id, userid)
            ).rowcount
        )

    def subscribed_boards(self, game: str, userid: str) -> list[BoardRecord]:
        return self._records(
            BoardRecord,
            "SELECT b.* FROM boards b JOIN subscriptions s ON s.board_id = b.id "
            "WHERE b.game = ? AND s.userid = ? ORDER BY b.number",
            (game, userid),
        )

    def subscribe_all_users(self, game: str) -> list[str]:
        return self._column(
            "SELECT userid FROM subscribe_all WHERE game = ? ORDER BY userid", (game,)
        )

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
        return self._column(
            "SELECT userid FROM notify_board WHERE board_id = ? ORDER BY userid", (board_id,)
        )

    def game_notifiers(self, game: str) -> list[str]:
        return self._column(
            "SELECT userid FROM notify_game WHERE game = ? ORDER BY userid", (game,)
        )

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
