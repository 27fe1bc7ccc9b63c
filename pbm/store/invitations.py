"""Invitations (docs/spec/server.md §11.1): kept apart from the boards until they start,
with each seat's answer and its invitation token; and who takes challenges only as
invitations (docs/spec/server.md §3.9)."""

import json

from .records import InvitationRecord, InvitationSeatRecord
from .repository import Repository

DECODE = {"options": json.loads, "server_options": json.loads}


class Invitations(Repository):
    def create(
        self,
        *,
        game,
        number,
        inviter,
        options,
        server_options,
        comment_author,
        comment_text,
        created_at,
        lapses_at,
        seats,
    ) -> int:
        """`seats`: (userid, accepted, token id or None) in seat order."""
        cursor = self.conn.execute(
            "INSERT INTO invitations (game, number, inviter, options, server_options, "
            "comment_author, comment_text, created_at, lapses_at, status) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'open')",
            (
                game,
                number,
                inviter,
                json.dumps(options, sort_keys=True),
                json.dumps(server_options, sort_keys=True),
                comment_author,
                comment_text,
                created_at,
                lapses_at,
            ),
        )
        invitation_id = cursor.lastrowid
        self.conn.executemany(
            "INSERT INTO invitation_seats (invitation_id, seat, userid, accepted, token_id) "
            "VALUES (?, ?, ?, ?, ?)",
            [
                (invitation_id, seat, userid, int(accepted), token_id)
                for seat, (userid, accepted, token_id) in enumerate(seats)
            ],
        )
        return invitation_id

    def get(self, game: str, number: int) -> InvitationRecord | None:
        """The invitation that reserved a board number, whatever became of it."""
        return self._record(
            InvitationRecord,
            "SELECT * FROM invitations WHERE game = ? AND number = ?",
            (game, number),
            DECODE,
        )

    def seats(self, invitation_id: int) -> list[InvitationSeatRecord]:
        return self._records(
            InvitationSeatRecord,
            "SELECT * FROM invitation_seats WHERE invitation_id = ? ORDER BY seat",
            (invitation_id,),
        )

    def by_token(self, token_id: str):
        """(invitation, the seat whose token it is), or None."""
        seat = self._record(
            InvitationSeatRecord,
            "SELECT * FROM invitation_seats WHERE token_id = ?",
            (token_id,),
        )
        if seat is None:
            return None
        invitation = self._record(
            InvitationRecord,
            "SELECT * FROM invitations WHERE id = ?",
            (seat.invitation_id,),
            DECODE,
        )
        return invitation, seat

    def accept(self, invitation_id: int, userid: str):
        """Every seat of the user accepts: one answer per user."""
        self.conn.execute(
            "UPDATE invitation_seats SET accepted = 1 WHERE invitation_id = ? AND userid = ?",
            (invitation_id, userid),
        )

    def end(self, invitation_id: int, status: str, at: str):
        self.conn.execute(
            "UPDATE invitations SET status = ?, ended_at = ? WHERE id = ? AND status = 'open'",
            (status, at, invitation_id),
        )

    def open_of_game(self, game: str, userids=()) -> list[InvitationRecord]:
        """A game's open invitations, optionally only those with any of the userids on them."""
        sql = "SELECT * FROM invitations WHERE game = ? AND status = 'open'"
        params = [game]
        if userids:
            marks = ",".join("?" * len(userids))
            sql += (
                f" AND id IN (SELECT invitation_id FROM invitation_seats WHERE userid IN ({marks}))"
            )
            params.extend(userids)
        return self._records(InvitationRecord, sql + " ORDER BY number", params, DECODE)

    def lapsing(self, at: str) -> list[InvitationRecord]:
        """Open invitations whose time is up."""
        return self._records(
            InvitationRecord,
            "SELECT * FROM invitations WHERE status = 'open' AND lapses_at <= ? "
            "ORDER BY game, number",
            (at,),
            DECODE,
        )

    def prune(self, before: str) -> int:
        """Forget invitations that ended before a time: their tokens stop answering."""
        ended = "SELECT id FROM invitations WHERE status != 'open' AND ended_at < ?"
        self.conn.execute(
            f"DELETE FROM invitation_seats WHERE invitation_id IN ({ended})", (before,)
        )
        return self.conn.execute(
            "DELETE FROM invitations WHERE status != 'open' AND ended_at < ?", (before,)
        ).rowcount

    def wants_invitations(self, game: str, userid: str) -> bool:
        """The user takes challenges of the game only as invitations."""
        return bool(
            self._value(
                "SELECT invitations FROM challenge_settings WHERE game = ? AND userid = ?",
                (game, userid),
            )
        )

    def set_wants_invitations(self, game: str, userid: str, on: bool):
        self.conn.execute(
            "INSERT INTO challenge_settings (game, userid, invitations) VALUES (?, ?, ?) "
            "ON CONFLICT (game, userid) DO UPDATE SET invitations = excluded.invitations",
            (game, userid, int(on)),
        )
