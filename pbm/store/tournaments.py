"""Round-robin tournaments (docs/spec/server.md §11.9): the tournaments and their terms, who
joined, the boards of each division, and what each division's digests have reported. Results are
the boards' own (store.ratings): nothing here holds a score."""

import json

from .records import (
    TournamentBoardRecord,
    TournamentEntrantRecord,
    TournamentRecord,
    TournamentTag,
)
from .repository import Repository

DECODE = {"options": json.loads, "server_options": json.loads}
BOARDS = (
    "SELECT tb.*, b.number AS number, b.status AS status, b.finished_at AS finished_at "
    "FROM tournament_boards tb "
    "JOIN boards b ON b.id = tb.board_id"
)


class Tournaments(Repository):
    def create(
        self,
        *,
        name,
        game,
        options,
        server_options,
        largest,
        start_at,
        start_players,
        creator,
        created_at,
    ) -> int:
        cursor = self.conn.execute(
            "INSERT INTO tournaments (name, game, options, server_options, largest, start_at, "
            "start_players, creator, status, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'open', ?)",
            (
                name,
                game,
                json.dumps(options, sort_keys=True),
                json.dumps(server_options, sort_keys=True),
                largest,
                start_at,
                start_players,
                creator,
                created_at,
            ),
        )
        return cursor.lastrowid

    def get(self, name: str) -> TournamentRecord | None:
        return self._record(
            TournamentRecord, "SELECT * FROM tournaments WHERE name = ?", (name,), DECODE
        )

    def by_id(self, tournament_id: int) -> TournamentRecord | None:
        return self._record(
            TournamentRecord, "SELECT * FROM tournaments WHERE id = ?", (tournament_id,), DECODE
        )

    def names(self) -> list[str]:
        return self._column("SELECT name FROM tournaments ORDER BY name")

    def listed(self, statuses) -> list[TournamentRecord]:
        """The tournaments of these statuses, the newest first."""
        marks = ",".join("?" * len(statuses))
        return self._records(
            TournamentRecord,
            f"SELECT * FROM tournaments WHERE status IN ({marks}) ORDER BY created_at DESC, name",
            tuple(statuses),
            DECODE,
        )

    def count_open_created_by(self, userid: str) -> int:
        return self._value(
            "SELECT count(*) FROM tournaments WHERE creator = ? AND status = 'open'", (userid,)
        )

    def set_status(self, tournament_id: int, status: str, at: str):
        """Running from `at`, or over (finished, called off) at `at`."""
        column = "started_at" if status == "running" else "ended_at"
        self.conn.execute(
            f"UPDATE tournaments SET status = ?, {column} = ? WHERE id = ?",
            (status, at, tournament_id),
        )

    # -- entrants ------------------------------------------------------------------------

    def entrants(self, tournament_id: int) -> list[TournamentEntrantRecord]:
        """Who joined, in the order they joined."""
        return self._records(
            TournamentEntrantRecord,
            "SELECT * FROM tournament_entrants WHERE tournament_id = ? ORDER BY joined_at, userid",
            (tournament_id,),
        )

    def entrant(self, tournament_id: int, userid: str) -> TournamentEntrantRecord | None:
        return self._record(
            TournamentEntrantRecord,
            "SELECT * FROM tournament_entrants WHERE tournament_id = ? AND userid = ?",
            (tournament_id, userid),
        )

    def count_entrants(self, tournament_id: int) -> int:
        return self._value(
            "SELECT count(*) FROM tournament_entrants WHERE tournament_id = ?", (tournament_id,)
        )

    def add_entrant(self, tournament_id: int, userid: str, at: str):
        self.conn.execute(
            "INSERT INTO tournament_entrants (tournament_id, userid, joined_at, status) "
            "VALUES (?, ?, ?, 'playing')",
            (tournament_id, userid, at),
        )

    def remove_entrant(self, tournament_id: int, userid: str):
        self.conn.execute(
            "DELETE FROM tournament_entrants WHERE tournament_id = ? AND userid = ?",
            (tournament_id, userid),
        )

    def place(self, tournament_id: int, userid: str, division: int, rating: int):
        """The division a player plays in, and the rating that put them there."""
        self.conn.execute(
            "UPDATE tournament_entrants SET division = ?, rating = ? "
            "WHERE tournament_id = ? AND userid = ?",
            (division, rating, tournament_id, userid),
        )

    def set_left(self, tournament_id: int, userid: str, status: str, at: str):
        self.conn.execute(
            "UPDATE tournament_entrants SET status = ?, left_at = ? "
            "WHERE tournament_id = ? AND userid = ?",
            (status, at, tournament_id, userid),
        )

    # -- boards --------------------------------------------------------------------------

    def add_board(self, tournament_id: int, division: int, board_id: int, white: str, black: str):
        self.conn.execute(
            "INSERT INTO tournament_boards (board_id, tournament_id, division, white, black) "
            "VALUES (?, ?, ?, ?, ?)",
            (board_id, tournament_id, division, white, black),
        )

    def boards(self, tournament_id: int) -> list[TournamentBoardRecord]:
        """Every board of the tournament, by division and number."""
        return self._records(
            TournamentBoardRecord,
            BOARDS + " WHERE tb.tournament_id = ? ORDER BY tb.division, b.number",
            (tournament_id,),
        )

    def active_boards_of(self, tournament_id: int, userid: str) -> list[TournamentBoardRecord]:
        """The running boards of the tournament where the user plays."""
        return self._records(
            TournamentBoardRecord,
            BOARDS + " WHERE tb.tournament_id = ? AND b.status = 'active' "
            "AND ? IN (tb.white, tb.black) ORDER BY b.number",
            (tournament_id, userid),
        )

    def count_active_boards(self, tournament_id: int) -> int:
        return self._value(
            "SELECT count(*) FROM tournament_boards tb JOIN boards b ON b.id = tb.board_id "
            "WHERE tb.tournament_id = ? AND b.status = 'active'",
            (tournament_id,),
        )

    def results(self, tournament_id: int) -> dict[int, tuple[dict[str, float], str | None]]:
        """Board id -> (each player's score, why it ended) for the boards that have ended:
        their results (docs/spec/server.md §8.1), which the boards' logs gave."""
        found: dict[int, tuple[dict[str, float], str | None]] = {}
        for board_id, reason, userid, score in self.conn.execute(
            "SELECT tb.board_id, r.reason, rs.userid, rs.score FROM tournament_boards tb "
            "JOIN results r ON r.board_id = tb.board_id "
            "JOIN result_seats rs ON rs.result_id = r.id WHERE tb.tournament_id = ? "
            "ORDER BY r.id, rs.seat",
            (tournament_id,),
        ):
            found.setdefault(board_id, ({}, reason))[0][userid] = score
        return found

    def count_forfeits(self, tournament_id: int, userid: str) -> int:
        """The user's games of the tournament lost by a forfeit, read from the boards' logs."""
        return self._value(
            "SELECT count(*) FROM moves m JOIN tournament_boards tb ON tb.board_id = m.board_id "
            "WHERE tb.tournament_id = ? AND m.userid = ? AND m.kind = 'forfeit' "
            "AND m.undone_at IS NULL",
            (tournament_id, userid),
        )

    def tag(self, board_id: int) -> TournamentTag | None:
        """The tournament and division of a board, or None for a board of no tournament."""
        return self._record(
            TournamentTag,
            "SELECT t.id AS tournament_id, t.name AS name, tb.division AS division "
            "FROM tournament_boards tb JOIN tournaments t ON t.id = tb.tournament_id "
            "WHERE tb.board_id = ?",
            (board_id,),
        )

    # -- what cleanup does -----------------------------------------------------------------

    def to_clean(self, games=None) -> list[TournamentRecord]:
        """The tournaments cleanup looks at (docs/spec/server.md §9.2): the running ones, and
        the open ones with a start time."""
        records = self._records(
            TournamentRecord,
            "SELECT * FROM tournaments WHERE status = 'running' "
            "OR (status = 'open' AND start_at IS NOT NULL) ORDER BY id",
            (),
            DECODE,
        )
        return [r for r in records if not games or r.game in games]

    def add_division(self, tournament_id: int, division: int):
        self.conn.execute(
            "INSERT INTO tournament_divisions (tournament_id, division) VALUES (?, ?)",
            (tournament_id, division),
        )

    def digest_at(self, tournament_id: int, division: int) -> str | None:
        """When the division's last digest went out."""
        return self._value(
            "SELECT digest_at FROM tournament_divisions WHERE tournament_id = ? AND division = ?",
            (tournament_id, division),
        )

    def set_digest_at(self, tournament_id: int, division: int, at: str):
        self.conn.execute(
            "UPDATE tournament_divisions SET digest_at = ? WHERE tournament_id = ? AND division = ?",
            (at, tournament_id, division),
        )

    def mark_reported(self, board_ids, at: str):
        """These boards' ends have been mailed: no digest repeats them."""
        self.conn.executemany(
            "UPDATE tournament_boards SET reported_at = ? WHERE board_id = ?",
            [(at, board_id) for board_id in board_ids],
        )
