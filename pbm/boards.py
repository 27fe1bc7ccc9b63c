"""A board inside a command's transaction and the rules of the board layer: load, play
plies, automatic steps, leaving (resignation, forfeit, withdrawal), total time, votes, finish.

The board records what happened (events, a removal) and leaves the mails to its caller."""

import json
from datetime import timedelta

from .clock import DAY, parse_stamp, seconds_between, stamp
from .game import MoveError, Outcome
from .grammar import DIGITS_RE
from .position import FORFEITED, PLAYING, RESIGNED, canonical_ply, replay, scores
from .ratings import apply_result
from .store import BoardRecord, PlyRecord, TournamentTag
from .timebank import ClockTerms, banks_after, running_seconds
from .vacations import allowance_seconds, vacation_state

MAX_AUTOMATIC_ROUNDS = 1000
VOTE_NAMES = {"draw": "draw proposal", "undo": "undo request"}


class InternalError(RuntimeError):
    """A broken invariant; the command is rolled back and the operator told."""


class Board:
    def __init__(self, ctx, row, seat_userids=None, plies=None):
        self.ctx = ctx
        self.store = ctx.store
        self.row = row
        self.game = ctx.server.game_for_board(row.game)
        self.options = json.loads(row.options)
        self.clock = ClockTerms.of_board(row)  # the correspondence clock, or None
        stored = row.id is not None
        self.seat_userids = self.store.boards.seat_userids(row.id) if stored else seat_userids
        kept = ctx.server.board_cache.position(row, self.seat_userids) if stored else None
        if kept is not None:
            self.position = kept
        else:
            plies = self.store.boards.plies(row.id) if stored else list(plies or [])
            snapshot = None
            if row.snapshot_state is not None:
                snapshot = (row.snapshot_ply, json.loads(row.snapshot_state))
            self.position = replay(
                self.game, self.options, self.seat_userids, row.seed, plies, snapshot=snapshot
            )
            if stored:
                ctx.server.board_cache.stage(row, self.seat_userids, self.position)
        self.plies = self.position.plies
        self.events: list[str] = []  # what happened in this run, for the board mails
        self.auto_from: int | None = None  # first ply the automatic steps made in this run
        self.finished_now = False
        # Set when a withdrawal left too few players: why, and who is told.
        self.removed_event: str | None = None
        self.removed_audience: list[str] = []
        # Comments this run made and a later one replaced (a queued move's comment after
        # the mover's): this run's mails still show them.
        self.earlier_comments: list[dict] = []
        self._commented = False
        self._tournament: TournamentTag | None = None
        self._tournament_read = False

    @classmethod
    def unsaved(cls, ctx, game, options, userids, number):
        """A board that lives only in this command: `preview new`."""
        moment = stamp(ctx.now)
        row = BoardRecord(
            id=None,
            game=game.name,
            number=number,
            status="active",
            options=json.dumps(options),
            seed=0,
            created_at=moment,
            last_move_at=moment,
            nag_days=0,
            forfeit_days=0,
            total_days=0,
            comment_author=None,
            comment_text=None,
            comment_at=None,
            archived_at=None,
            snapshot_state=None,
            snapshot_ply=None,
            rated=0,
            finished_at=None,
            last_nag_at=None,
        )
        return cls(ctx, row, seat_userids=userids)

    # -- facts ---------------------------------------------------------------------

    @property
    def id(self) -> int:
        return self.row.id

    @property
    def number(self) -> int:
        return self.row.number

    @property
    def active(self) -> bool:
        return self.row.status == "active"

    @property
    def title_name(self) -> str:
        return f"{self.game.display_name} Board {self.number}"

    @property
    def tournament(self) -> TournamentTag | None:
        """The tournament and division the board belongs to (docs/spec/server.md §11.9), or
        None; read once, when asked."""
        if not self._tournament_read:
            self._tournament = self.store.tournaments.tag(self.id) if self.id is not None else None
            self._tournament_read = True
        return self._tournament

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

    def playing_seats_of(self, userid: str) -> list[int]:
        return [s for s in self.position.seats_of(userid) if self.position.statuses[s] == PLAYING]

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
        return list(dict.fromkeys(players + self.store.watching.subscribers(self.id)))

    def vote(self):
        return self.store.votes.get(self.id)

    # -- plies -----------------------------------------------------------------------

    def play(self, seat: int, kind: str, text: str, auto: bool = False) -> PlyRecord:
        """Append one ply; any ply cancels a pending vote and every submission."""
        moment = self.ctx.now
        charged = 0 if auto else seconds_between(self.row.last_move_at, moment)
        clock_charged = None
        if self.clock is not None:
            # Only the seat on move has a clock running (a departure out of turn costs none).
            running = not auto and seat == self.position.to_move()
            clock_charged = self.clock_running(seat) if running else 0
        ply = PlyRecord(
            ply=self.position.move_number,
            seat=seat,
            userid=self.position.holders[seat],
            kind=kind,
            text=text,
            auto=int(auto),
            charged=charged,
            created_at=stamp(moment),
            clock_charged=clock_charged,
        )
        self.store.boards.append_ply(
            self.id,
            ply=ply.ply,
            seat=seat,
            userid=ply.userid,
            kind=kind,
            text=text,
            auto=auto,
            charged=charged,
            at=ply.created_at,
            clock_charged=clock_charged,
        )
        self.row = self.row._replace(last_move_at=ply.created_at)
        self.position.apply(ply)
        self.plies = self.position.plies
        if auto and self.auto_from is None:
            self.auto_from = ply.ply
        vote = self.vote()
        if vote is not None:
            self.store.votes.end(self.id)
            self.events.append(f"The pending {VOTE_NAMES[vote.kind]} has been cancelled.")
        self.store.votes.drop_submissions(self.id)
        return ply

    def play_text(self, seat: int, text: str, auto: bool = False) -> None:
        """Play a move text or `pass` for a seat; MoveError when it is not legal now."""
        kind, canonical = canonical_ply(self.game, self.position.state, seat, text)
        self.play(seat, kind, canonical, auto)

    def guard_error(self, text: str, guard: str | None) -> str | None:
        if guard is None:
            return None
        if not DIGITS_RE.fullmatch(guard):
            return f'Invalid move number "{guard}" specified'
        if int(guard) != self.position.move_number:
            return f"Move {text} received as move #{self.position.move_number}"
        return None

    def set_comment(self, author: str, body: str):
        at = stamp(self.ctx.now)
        if self._commented and self.row.comment_text:
            self.earlier_comments.append(
                {"author": self.row.comment_author, "text": self.row.comment_text}
            )
        self._commented = True
        if body.strip():
            self.store.boards.set_comment(self.id, author, body, at)
            self.row = self.row._replace(comment_author=author, comment_text=body, comment_at=at)
        else:
            self.store.boards.set_comment(self.id, None, None, None)
            self.row = self.row._replace(comment_author=None, comment_text=None, comment_at=None)

    def resign(self, seat: int, kind: str = "resign", auto: bool = False):
        """A resignation or forfeit ply; the user goes on watching as a subscriber."""
        userid = self.position.holders[seat]
        self.play(seat, kind, "Resign" if kind == "resign" else "Forfeit", auto)
        self.store.votes.set_pending_resignation(self.id, seat, False)
        if self.seat_status(userid) != PLAYING:
            self.store.watching.subscribe(self.id, userid)

    def is_withdrawal(self, seat: int) -> bool:
        """A departure in the first round from a seat that has not played; never on a
        tournament's board, whose players chose to play it when they joined (a departure is a
        lost game there, docs/spec/server.md §11.9)."""
        first_round = self.position.plies_made < self.position.seats
        return first_round and not self.position.has_played(seat) and self.tournament is None

    def queue_resignation(self, seat: int) -> bool:
        """Out of turn, resign is queued for the user's next turn. True when it already was."""
        pending = self.store.votes.queued(self.id, seat)
        if pending is not None and pending.resign:
            return True
        self.store.votes.set_pending_resignation(self.id, seat, True)
        return False

    # -- leaving a board -------------------------------------------------------------------

    def leave(self, seat: int, kind: str, event: str):
        """A resignation or forfeit: a withdrawal in the first round, else a ply."""
        if self.is_withdrawal(seat):
            self.withdraw(seat)
            return
        self.resign(seat, kind)
        self.events.append(event)
        self.settle()

    def withdraw(self, seat: int):
        """Declining to play (docs/spec/server.md §3.5.3): the seat goes, the log is set aside,
        nothing is rated. With too few players left the board is removed (removed_event says
        why)."""
        game = self.game
        userid = self.position.holders[seat]
        at = stamp(self.ctx.now)
        audience = self.audience()
        remaining = [u for s, u in enumerate(self.seat_userids) if s != seat]
        self.store.boards.undo_all_plies(self.id, at)
        self.store.votes.clear_queues(self.id)
        self.store.limits.audit(at, "withdrawal", game=game.name, board=self.number, userid=userid)
        if self.store.boards.count_active(game.name, userid, except_board=self.id) == 0:
            self.store.users.set_inactive_flag(game.name, userid, True)
        if len(remaining) < game.min_players:
            self.store.boards.set_status(self.id, "removed")
            self.removed_event = (
                f"{userid} has declined to play. Too few players are left, so the board has been "
                "removed."
            )
            self.removed_audience = list(dict.fromkeys(audience + [userid]))
            return
        self.store.boards.set_seat_userids(self.id, remaining)
        self.reload()
        self.events.append(f"{userid} has decided not to play. The game has been re-started.")
        self.settle()

    def total_time_exceeded(self, seat: int) -> bool:
        total_days = self.row.total_days
        if not total_days:
            return False
        running = (self.ctx.now - parse_stamp(self.row.last_move_at)).total_seconds()
        return self.position.time_used[seat] + running >= total_days * DAY.total_seconds()

    def forfeit_if_out_of_time(self, seat: int) -> bool:
        """With --totaltime, a seat past its allowance forfeits, and with --time one whose
        bank is empty (docs/spec/server.md §9.5); True if it did."""
        userid = self.position.holders[seat]
        if self.total_time_exceeded(seat):
            days = self.row.total_days
            event = f"{userid} forfeits: exceeded the total time limit of {days} days."
        elif self.clock is not None and self.clock_left(seat) <= 0:
            event = f"{userid} forfeits: their clock ran out."
        else:
            return False
        self.leave(seat, "forfeit", event)
        return True

    # -- the correspondence clock (docs/spec/server.md §9.5) --------------------------------

    def clock_running(self, seat: int) -> int:
        """Seconds the clock of the seat (on move) has run since the last ply, less its
        player's vacation within the allowance."""
        userid = self.position.holders[seat]
        return running_seconds(
            parse_stamp(self.row.last_move_at),
            self.ctx.now,
            self.store.users.vacations(userid),
            allowance_seconds(self.ctx.config),
        )

    def banks(self) -> list[int]:
        """Each seat's bank now, in seconds: the seat on move's less its running clock."""
        banks = banks_after(self.clock, self.position.seats, self.position.plies)
        seat = self.position.to_move() if self.active else None
        if seat is not None:
            banks[seat] -= self.clock_running(seat)
        return banks

    def clock_left(self, seat: int) -> int:
        return self.banks()[seat]

    def clock_deadline(self):
        """(seat on move, when its bank runs out): None for the time when its player is on
        vacation, which stops the clock; None for no seat on a finished board."""
        seat = self.position.to_move() if self.active else None
        if seat is None:
            return None
        if vacation_state(self.store, self.position.holders[seat], self.ctx.now).on:
            return seat, None
        return seat, self.ctx.now + timedelta(seconds=max(0, self.clock_left(seat)))

    # -- votes (docs/spec/server.md §3.6) ----------------------------------------------------

    def departed_seats(self) -> set[int]:
        """Resigned and forfeited seats accept every vote at once."""
        return {s for s, status in enumerate(self.position.statuses) if status != PLAYING}

    def last_decided_ply(self):
        decided = [p for p in self.position.plies if not p.auto]
        return decided[-1] if decided else None

    def pending_line(self, pending) -> str:
        waiting = " ".join(
            dict.fromkeys(
                self.position.holders[s]
                for s in range(self.position.seats)
                if s not in pending.accepted
            )
        )
        if pending.kind == "draw":
            start = f"{pending.proposer} has proposed a draw."
        else:
            start = f"{pending.proposer} has asked to undo the last move."
        return f"{start} The following players still need to accept or reject this: {waiting}"

    def execute_vote(self, pending):
        """Everyone said yes: a draw ends the game as a tie, an undo takes the last move back."""
        self.store.votes.end(self.id)
        if pending.kind == "draw":
            self.events.append("The players have agreed to a draw.")
            self.finish(Outcome(winners=()), reason="the players agreed to a draw")
            self.save_snapshot()
            return
        taken = self.last_decided_ply()
        self.store.boards.undo_plies_from(self.id, taken.ply, stamp(self.ctx.now))
        self.store.limits.audit(
            stamp(self.ctx.now),
            "undo",
            game=self.game.name,
            board=self.number,
            detail={"ply": taken.ply, "text": taken.text},
        )
        self.reload()
        self.save_snapshot()
        # A hidden move stays hidden from the others while the game goes on.
        shown = f" ({taken.text})" if self.game.visible_moves else ""
        self.events.append(f"UNDO successful: move {taken.ply}{shown} has been taken back.")

    # -- the automatic steps (docs/spec/server.md §3.5.4) -------------------------------

    def run_automatic_steps(self):
        """Play what nobody needs to decide now: passes for seats that left, pending
        resignations, queued moves, forced moves."""
        for _ in range(MAX_AUTOMATIC_ROUNDS):
            seat = self.position.to_move()
            if seat is None:
                return
            if self.position.statuses[seat] in (RESIGNED, FORFEITED):
                self.play(seat, "pass", "pass", auto=True)
                continue
            pending = self.store.votes.queued(self.id, seat)
            if pending is not None and pending.resign:
                userid = self.position.holders[seat]
                self.resign(seat, auto=True)
                self.events.append(f"{userid} has resigned.")
                continue
            if pending is not None and pending.move_text is not None:
                self.store.votes.clear_queued_move(self.id, seat)
                if self._play_queued(seat, pending):
                    continue
            forced = self.game.forced_move(self.position.state)
            if forced is None:
                return
            self.play(seat, "pass" if forced == "pass" else "move", forced, auto=True)
        raise InternalError(f"{self.title_name}: automatic steps did not settle")

    def _play_queued(self, seat: int, pending) -> bool:
        userid = self.position.holders[seat]
        text = pending.move_text
        error = self.guard_error(text, pending.guard)
        if error is None:
            try:
                self.play_text(seat, text, auto=True)
            except MoveError as refusal:
                error = str(refusal)
        if error is not None:
            self.events.append(f"{userid}'s queued move was illegal and has been discarded.")
            self.ctx.queued_move_failed(self, userid, text, error)
            return False
        if pending.comment:
            self.set_comment(userid, pending.comment)
        return True

    # -- the end -----------------------------------------------------------------------

    def settle(self):
        """After a change: automatic steps, then the end of the game if it came."""
        self.run_automatic_steps()
        outcome = self.position.outcome()
        if outcome is not None and self.active:
            self.finish(outcome)
        self.save_snapshot()

    def finish(self, outcome, reason: str | None = None):
        moment = stamp(self.ctx.now)
        self.store.boards.set_status(self.id, "finished", finished_at=moment)
        self.row = self.row._replace(status="finished", finished_at=moment)
        holders = self.position.holders
        rated = bool(self.row.rated) and len(set(holders)) >= 2 and self.game.is_rated(self.options)
        seats = list(zip(holders, scores(self.position, outcome)))
        result_id = self.store.ratings.add_result(
            game=self.game.name,
            board_id=self.id,
            finished_at=moment,
            rated=rated,
            points=outcome.points,
            reason=reason if reason is not None else outcome.reason,
            scores=seats,
        )
        if rated:
            apply_result(self.store, result_id, self.game.name, seats)
            for userid in set(holders):
                self.store.users.set_inactive_flag(self.game.name, userid, False)
        self.store.votes.clear_queues(self.id)
        self.finished_now = True

    def save_snapshot(self):
        self.store.boards.save_snapshot(self.id, self.position.plies_made, self.position.state)
        self.ctx.server.board_cache.stage(self.row, self.seat_userids, self.position)

    def reload(self):
        """Replay from the log after plies were set aside (undo, withdrawal)."""
        self.store.boards.drop_snapshot(self.id)
        fresh = Board(self.ctx, self.store.boards.by_id(self.id))
        self.row, self.seat_userids, self.plies, self.position = (
            fresh.row,
            fresh.seat_userids,
            fresh.plies,
            fresh.position,
        )

    def result(self):
        return self.store.ratings.board_result(self.id) if not self.active else None

    def notifiers(self) -> list[str]:
        if self.id is None:
            return []
        return list(
            dict.fromkeys(
                self.store.watching.board_notifiers(self.id)
                + self.store.watching.game_notifiers(self.game.name)
            )
        )


def boards_forfeited_on_departure(ctx, row, userid):
    """A deleted account forfeits every seat it still plays on the board, one at a time:
    a withdrawal renumbers the seats and sets the plies aside, so look again each time.
    Yields the board after each forfeit, for its mails."""
    while True:
        row = ctx.store.boards.by_id(row.id)
        if row.status != "active":
            return
        board = Board(ctx, row)
        seats = board.playing_seats_of(userid)
        if not seats:
            return
        board.leave(seats[0], "forfeit", f"{userid} has left the server and forfeits.")
        yield board
