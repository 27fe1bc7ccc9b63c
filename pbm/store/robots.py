"""Robot accounts (docs/spec/server.md §11.7): which users the server moves for, with what
robot and budget, and the running boards where they hold a seat."""

from .records import BoardRecord, RobotRecord
from .repository import Repository


class Robots(Repository):
    def add(self, userid: str, game: str, robot: str, seconds: float, at: str):
        self.conn.execute(
            "INSERT INTO robots (userid, game, robot, seconds, created_at) VALUES (?, ?, ?, ?, ?)",
            (userid, game, robot, seconds, at),
        )

    def get(self, userid: str) -> RobotRecord | None:
        return self._record(RobotRecord, "SELECT * FROM robots WHERE userid = ?", (userid,))

    def all(self) -> list[RobotRecord]:
        return self._records(RobotRecord, "SELECT * FROM robots ORDER BY userid")

    def set_seek_after(self, userid: str, hours: float | None):
        """Have the robot answer the open seeks of its game that waited this many hours
        (docs/spec/server.md §11.2); None: none."""
        self.conn.execute(
            "UPDATE robots SET seek_after_hours = ? WHERE userid = ?", (hours, userid)
        )

    def seek_answerers(self, game: str) -> list[RobotRecord]:
        """The robots of a game that answer seeks, with active accounts."""
        return self._records(
            RobotRecord,
            "SELECT r.* FROM robots r JOIN users u ON u.userid = r.userid WHERE r.game = ? "
            "AND r.seek_after_hours IS NOT NULL AND u.status = 'active' ORDER BY r.userid",
            (game,),
        )

    def remove(self, userid: str):
        self.conn.execute("DELETE FROM robots WHERE userid = ?", (userid,))

    def any(self) -> bool:
        return self._value("SELECT 1 FROM robots LIMIT 1") is not None

    def is_robot(self, userid: str) -> bool:
        return self._value("SELECT 1 FROM robots WHERE userid = ?", (userid,)) is not None

    def boards(self) -> list[tuple[RobotRecord, BoardRecord]]:
        """Every running board of a robot's game where a robot holds a seat, once per robot:
        the boards where a robot may be on move or asked to vote."""
        pairs = self.conn.execute(
            "SELECT DISTINCT robots.userid, boards.id FROM robots "
            "JOIN seats ON seats.userid = robots.userid "
            "JOIN boards ON boards.id = seats.board_id "
            "WHERE boards.status = 'active' AND boards.game = robots.game "
            "ORDER BY boards.last_move_at, boards.id"
        ).fetchall()
        found = []
        for userid, board_id in pairs:
            board = self._record(BoardRecord, "SELECT * FROM boards WHERE id = ?", (board_id,))
            found.append((self.get(userid), board))
        return found
