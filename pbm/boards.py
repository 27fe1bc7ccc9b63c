"""A board inside a command's transaction: load, play plies, automatic steps, finish."""

import json

from .config import parse_stamp, seconds_between, stamp
from .position import FORFEITED, PLAYING, RESIGNED, replay, scores

MAX_AUTOMATIC_ROUNDS = 1000


class InternalError(RuntimeError):
    """A broken invariant; the command is rolled back and the operator told."""


class Board:
    def __init__(self, ctx, row):
        self.ctx = ctx
        self.store = ctx.store
        self.row = row
        self.game = ctx.server.game_for_board(row["game"])
        self.options = json.loads(row["options"])
        self.seat_userids = self.store.seat_userids(row["id"])
        self.plies = self.store.moves(row["id"])
        snapshot = None
        if row["snapshot_state"] is not None:
            snapshot = (row["snapshot_ply"], json.loads(row["snapshot_state"]))
        self.position = replay(
            self.game, self.options, self.seat_userids, row["seed"], self.plies, snapshot=snapshot
        )
        self.events: list[str] = []
        self.auto_from: int | None = None  # first ply the automatic steps made in this run
        self.discarded_queue_note: str | None = None

    # -- facts ---------------------------------------------------------------------

    @property
    def id(self) -> int:
        return self.row["id"]

    @property
    def number(self) -> int:
        return self.row["number"]

    @property
    def active(self) -> bool:
        return self.row["status"] == "active"

    @property
    def title_name(self) -> str:
        return f"{self.game.display_name} Board {self.number}"

    def on_move_userid(self) -> str | None:
        seat = self.position.to_move()
        return None if seat is None else self.position.holders[seat]

    def perspective_of(self, userid: str | None) -> int | None:
        """The seat whose view a user gets: the one on move if theirs, else their first."""
        if userid is None:
            return None
        seats = self.position.seats_of(userid)
        if not seats:
            return None
        on_move = self.position.to_move()
        return on_move if on_move in seats else seats[0]

    def seat_status(self, userid: str) -> str | None:
        """playing if any seat of the user plays; else resigned/forfeited; None if no seat."""
        statuses = [self.position.statuses[s] for s in self.position.seats_of(userid)]
        if not statuses:
            return None
        return PLAYING if PLAYING in statuses else statuses[0]

    def audience(self) -> list[str]:
        """Seat holders still playing, then subscribers, each once."""
        players = [
            u for s, u in enumerate(self.position.holders) if self.position.statuses[s] == PLAYING
        ]
        seen, result = set(), []
        for userid in players + self.store.subscribers(self.id):
            if userid not in seen:
                seen.add(userid)
                result.append(userid)
        return result

    # -- changes -------------------------------------------------------------------

    def play(self, seat: int, kind: str, text: str, auto: bool = False) -> dict:
        """Append one ply to the log and the position."""
        moment = self.ctx.now
        charged = 0 if auto else seconds_between(self.row["last_move_at"], moment)
        ply = {
            "ply": self.position.move_number,
            "seat": seat,
            "userid": self.position.holders[seat],
            "kind": kind,
            "text": text,
            "auto": int(auto),
            "charged": charged,
            "created_at": stamp(moment),
        }
        self.store.append_move(
            self.id,
            ply=ply["ply"],
            seat=seat,
            userid=ply["userid"],
            kind=kind,
            text=text,
            auto=auto,
            charged=charged,
            at=ply["created_at"],
        )
        self.row["last_move_at"] = ply["created_at"]
        self.position.apply(ply)
        if auto and self.auto_from is None:
            self.auto_from = ply["ply"]
        return ply

    def set_comment(self, author: str, body: str):
        if body.strip():
            self.store.set_comment(self.id, author, body, stamp(self.ctx.now))
            self.row.update(comment_author=author, comment_text=body, comment_at=stamp(self.ctx.now))
        else:
            self.store.set_comment(self.id, None, None, None)
            self.row.update(comment_author=None, comment_text=None, comment_at=None)

    def run_automatic_steps(self):
        """Play what nobody needs to decide: passes for seats that left, forced moves."""
        for _ in range(MAX_AUTOMATIC_ROUNDS):
            seat = self.position.to_move()
            if seat is None:
                return
            if self.position.statuses[seat] in (RESIGNED, FORFEITED):
                self.play(seat, "pass", "pass", auto=True)
                continue
            forced = self.game.forced_move(self.position.state)
            if forced is None:
                return
            self.play(seat, "pass" if forced == "pass" else "move", forced, auto=True)
        raise InternalError(f"{self.title_name}: automatic steps did not settle")

    def resign(self, seat: int, kind: str = "resign"):
        """A resignation or forfeit ply; the user goes on watching as a subscriber."""
        userid = self.position.holders[seat]
        self.play(seat, kind, "Resign" if kind == "resign" else "Forfeit")
        if self.seat_status(userid) != PLAYING:
            self.store.subscribe(self.id, userid)

    def is_withdrawal(self, seat: int) -> bool:
        return self.position.plies_made < self.position.seats and not self.position.has_played(
            seat
        )

    def settle(self):
        """After a change: automatic steps, then the end of the game if it came."""
        self.run_automatic_steps()
        outcome = self.position.outcome()
        if outcome is not None and self.active:
            self.finish(outcome)
        self.save_snapshot()

    def finish(self, outcome):
        moment = stamp(self.ctx.now)
        self.store.set_board_status(self.id, "finished", finished_at=moment)
        self.row.update(status="finished", finished_at=moment)
        holders = self.position.holders
        rated = (
            bool(self.row["rated"])
            and len(set(holders)) >= 2
            and self.game.is_rated(self.options)
        )
        self.store.add_result(
            game=self.game.name,
            board_id=self.id,
            finished_at=moment,
            rated=rated,
            points=outcome.points,
            reason=outcome.reason,
            scores=list(zip(holders, scores(self.position, outcome))),
        )

    def save_snapshot(self):
        self.store.save_snapshot(self.id, self.position.plies_made, self.position.state)

    # -- results -------------------------------------------------------------------

    def result(self):
        return self.store.board_result(self.id) if not self.active else None

    def started_at(self):
        return parse_stamp(self.row["created_at"])
