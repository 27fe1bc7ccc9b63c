"""Results, ratings and the standings."""

from .records import RatingChangeRecord, RatingRecord, ResultRecord, ResultSeatRecord
from .repository import Repository


class Ratings(Repository):
    def add_result(self, *, game, board_id, finished_at, rated, points, reason, scores) -> int:
        cursor = self.conn.execute(
            "INSERT INTO results (game, board_id, finished_at, rated, points, reason) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (game, board_id, finished_at, int(rated), points, reason),
        )
        result_id = cursor.lastrowid
        self.conn.executemany(
            "INSERT INTO result_seats (result_id, seat, userid, score) VALUES (?, ?, ?, ?)",
            [(result_id, seat, userid, score) for seat, (userid, score) in enumerate(scores)],
        )
        return result_id

    def board_result(self, board_id: int) -> ResultRecord | None:
        """The result of a finished board with its seats' scores, or None."""
        result = self._record(
            ResultRecord,
            "SELECT * FROM results WHERE board_id = ? ORDER BY id DESC LIMIT 1",
            (board_id,),
        )
        if result is None:
            return None
        seats = self._records(
            ResultSeatRecord,
            "SELECT seat, userid, score FROM result_seats WHERE result_id = ? ORDER BY seat",
            (result.id,),
        )
        return result._replace(seats=tuple(seats))

    def get(self, game: str, userid: str) -> RatingRecord | None:
        return self._record(
            RatingRecord, "SELECT * FROM ratings WHERE game = ? AND userid = ?", (game, userid)
        )

    def of_user(self, userid: str) -> list[RatingRecord]:
        return self._records(
            RatingRecord, "SELECT * FROM ratings WHERE userid = ? ORDER BY game", (userid,)
        )

    def of_game(self, game: str) -> list[RatingRecord]:
        return self._records(RatingRecord, "SELECT * FROM ratings WHERE game = ?", (game,))

    def save(self, game, userid, rating, games, won, lost, tied):
        self.conn.execute(
            "INSERT INTO ratings (game, userid, rating, games, won, lost, tied) "
            "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (game, userid) DO UPDATE SET "
            "rating = excluded.rating, games = excluded.games, won = excluded.won, "
            "lost = excluded.lost, tied = excluded.tied",
            (game, userid, rating, games, won, lost, tied),
        )

    def add_change(self, result_id, userid, before, after, provisional):
        self.conn.execute(
            "INSERT INTO rating_changes (result_id, userid, before, after, provisional) "
            "VALUES (?, ?, ?, ?, ?)",
            (result_id, userid, before, after, int(provisional)),
        )

    def changes(self, result_id: int) -> list[RatingChangeRecord]:
        return self._records(
            RatingChangeRecord,
            "SELECT * FROM rating_changes WHERE result_id = ? ORDER BY userid",
            (result_id,),
        )

    def clear(self, games):
        for game in games:
            self.conn.execute(
                "DELETE FROM rating_changes WHERE result_id IN "
                "(SELECT id FROM results WHERE game = ?)",
                (game,),
            )
            self.conn.execute("DELETE FROM ratings WHERE game = ?", (game,))

    def results(self, game: str, rated_only=False) -> list[ResultRecord]:
        """A game's results in order, each with its seats and its board's number."""
        sql = "SELECT r.*, b.number FROM results r JOIN boards b ON b.id = r.board_id WHERE r.game = ?"
        if rated_only:
            sql += " AND r.rated = 1"
        results = self._records(ResultRecord, sql + " ORDER BY r.id", (game,))
        by_result: dict[int, list[ResultSeatRecord]] = {}
        for result_id, seat, userid, score in self.conn.execute(
            "SELECT rs.result_id, rs.seat, rs.userid, rs.score FROM result_seats rs "
            "JOIN results r ON r.id = rs.result_id WHERE r.game = ? ORDER BY rs.result_id, rs.seat",
            (game,),
        ):
            by_result.setdefault(result_id, []).append(ResultSeatRecord(seat, userid, score))
        return [r._replace(seats=tuple(by_result.get(r.id, ()))) for r in results]

    def result_games(self) -> list[str]:
        return self._column("SELECT DISTINCT game FROM results ORDER BY game")

    def standings_userids(self, game: str) -> list[str]:
        """Users with a rated game, an active board or a setting in this game; never deleted."""
        return self._column(
            "SELECT userid FROM users WHERE status = 'active' AND userid IN ("
            " SELECT userid FROM ratings WHERE game = ? AND games > 0"
            " UNION SELECT s.userid FROM seats s JOIN boards b ON b.id = s.board_id"
            "   WHERE b.game = ? AND b.status = 'active'"
            " UNION SELECT userid FROM challenge_settings WHERE game = ?) ORDER BY userid",
            (game, game, game),
        )
