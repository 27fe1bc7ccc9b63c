"""The cleanup run (docs/spec/server.md §9): nags, forfeits, auto-accepted votes, the
tournaments' starts, losses on time and digests (docs/spec/server.md §11.9), archiving,
vacations past their allowance, and housekeeping. Each board has its own transaction."""

import logging
from datetime import timedelta

from . import invitations, seeking, tournamentplay
from .boards import VOTE_NAMES, Board
from .bounces import TEMPORARY_WINDOW, unreachable
from .clock import DAY, parse_stamp, show_time, stamp
from .mailout import flush
from .replica import replicated
from .replies import reply_address
from .summary import next_lines, state_line
from .timebank import show_left
from .vacations import allowance_seconds, vacation_body, vacation_state

log = logging.getLogger("pbm.cleanup")
INBOX_KEEP = timedelta(days=30)
# An invitation that ended tells late answers what became of it, for as long as this.
INVITATIONS_KEEP = timedelta(days=30)
# A note of mail held back waits for the player's next mail; one that none reached is dropped.
HELD_MAIL_KEEP = timedelta(days=30)
DIGEST_EVERY = DAY - timedelta(minutes=30)  # a daily cron run a little early still sends


def run_cleanup(server, games=None, mode="full", dry_run=False) -> list[str]:
    """Run cleanup for the given game names (all by default); returns what was done."""
    games = games or list(server.games)
    report: list[str] = []
    for row in server.store.boards.active(games):
        _in_transaction(
            server,
            dry_run,
            lambda ctx, board_id=row.id: _clean_board(ctx, board_id, mode, report),
            report,
            f"board {row.game} {row.number}",
        )
    if mode == "full":
        _in_transaction(
            server,
            dry_run,
            lambda ctx: report.extend(invitations.lapse_due(ctx)),
            report,
            "invitations",
        )
        for name in games:
            _in_transaction(
                server,
                dry_run,
                lambda ctx, name=name: report.extend(seeking.cleanup(ctx, ctx.server.games[name])),
                report,
                f"seeks of {name}",
            )
        for record in server.store.tournaments.to_clean(games):
            _in_transaction(
                server,
                dry_run,
                lambda ctx, tournament_id=record.id: report.extend(
                    tournamentplay.clean(ctx, tournament_id)
                ),
                report,
                f"tournament {record.name}",
            )
        _in_transaction(
            server, dry_run, lambda ctx: _archive(ctx, games, report), report, "archiving"
        )
        _in_transaction(
            server, dry_run, lambda ctx: _end_used_up_vacations(ctx, report), report, "vacations"
        )
        _in_transaction(server, dry_run, lambda ctx: _digests(ctx, report), report, "digests")
        _in_transaction(server, dry_run, lambda ctx: _prune(ctx, report), report, "pruning")
    if not dry_run:
        # `pbm status` reports when cleanup last ran.
        _in_transaction(
            server,
            False,
            lambda ctx: ctx.store.limits.audit(
                stamp(ctx.now), "cleanup", detail={"mode": mode, "steps": len(report)}
            ),
            report,
            "recording the run",
        )
    if mode == "full" and not dry_run:
        if not replicated(server.config):
            # Litestream checkpoints a database it replicates: a TRUNCATE here would wait
            # on its read lock while holding off every writer (docs/reliability.md).
            server.store.checkpoint()
        flush(server.store, server.config)
    return report


def _in_transaction(server, dry_run, work, report, what):
    """One step in a transaction of its own; a step that fails is rolled back, logged and
    reported, and the run goes on (one broken board must not stop every later one)."""
    error = server.run_step(work, dry_run)
    if error is not None:
        log.error("cleanup: %s failed and was skipped", what, exc_info=error)
        report.append(f"{what}: failed and skipped ({type(error).__name__}: {error})")


def _clean_board(ctx, board_id, mode, report):
    # Read again inside the transaction: a move may have come in since the listing.
    row = ctx.store.boards.by_id(board_id)
    if row.status != "active":
        return
    board = Board(ctx, row)
    now = ctx.now
    nag_after = timedelta(days=row.nag_days)
    forfeit_after = timedelta(days=row.forfeit_days)
    seat = board.position.to_move()
    userid = board.position.holders[seat] if seat is not None else None
    if mode == "full" and seat is not None:
        why = "total time" if board.total_time_exceeded(seat) else "clock"
        if board.forfeit_if_out_of_time(seat):
            ctx.announce(board)
            report.append(f"{board.title_name}: {userid} forfeits ({why})")
            return
    vote = board.vote()
    if vote is not None:
        created = parse_stamp(vote.created_at)
        accepted = set(vote.accepted)
        nagged = []
        for s in range(board.position.seats):
            if s in accepted:
                continue
            userid = board.position.holders[s]
            state = vacation_state(ctx.store, userid, now)
            if state.on:
                continue
            start = max(created, state.returned_at or created)
            if mode == "full" and now - start >= forfeit_after:
                accepted.update(board.position.seats_of(userid))
                board.events.append(f"{userid} auto-accepts after {row.forfeit_days} days.")
                report.append(
                    f"{board.title_name}: {userid} auto-accepts the {VOTE_NAMES[vote.kind]}"
                )
            elif now - created >= nag_after and _may_nag(vote.last_nag_at, None, now):
                deadline = start + forfeit_after
                text = (
                    f"Reminder: you still have to accept or reject the {VOTE_NAMES[vote.kind]} on "
                    f"{board.title_name}. If you do not answer by {show_time(deadline)}, you will "
                    "accept it automatically."
                )
                _nag(ctx, board, userid, text, report)
                nagged.append(userid)
        if nagged:
            ctx.store.votes.set_nagged(board.id, stamp(now))
            report.append(f"{board.title_name}: vote nag to {' '.join(dict.fromkeys(nagged))}")
        if board.events:
            ctx.store.votes.set_accepted(board.id, accepted)
            vote = board.vote()
            if accepted >= set(range(board.position.seats)):
                board.execute_vote(vote)
            ctx.announce(board)
        return
    if seat is None:
        return
    userid = board.position.holders[seat]
    state = vacation_state(ctx.store, userid, now)
    if state.on:
        return
    last_move = parse_stamp(row.last_move_at)
    if board.clock is not None:
        _nag_clocked(ctx, board, seat, userid, report)
        return
    idle_since = max(last_move, state.returned_at or last_move)
    if mode == "full" and now - idle_since >= forfeit_after:
        board.leave(seat, "forfeit", f"{userid} forfeits: no move in {row.forfeit_days} days.")
        ctx.announce(board)
        report.append(f"{board.title_name}: {userid} forfeits (no move)")
    elif now - last_move >= nag_after and _may_nag(row.last_nag_at, row.last_move_at, now):
        text = (
            f"Reminder: it is your move on {board.title_name}. You have not moved in "
            f"{(now - last_move).days} days. If you do not move by "
            f"{show_time(idle_since + forfeit_after)}, you will forfeit."
        )
        _nag(ctx, board, userid, text, report)


def _nag_clocked(ctx, board, seat, userid, report):
    """A clocked board loses on time, not after idle days (docs/spec/server.md §9.5): its
    player on move is nagged after nag_days without a move, or when less than a day is
    left on their clock."""
    row = board.row
    idle = ctx.now - parse_stamp(row.last_move_at)
    left = board.clock_left(seat)
    if idle < timedelta(days=row.nag_days) and left >= DAY.total_seconds():
        return
    if not _may_nag(row.last_nag_at, row.last_move_at, ctx.now):
        return
    _, until = board.clock_deadline()
    text = (
        f"Reminder: it is your move on {board.title_name}. You have {show_left(left)} left on "
        f"your clock, until {show_time(until)}. If you do not move by then, you lose on time."
    )
    _nag(ctx, board, userid, text, report)


def _may_nag(last_nag_at, last_move_at, now) -> bool:
    """At most one nag per board in 24 hours (and one after each new ply)."""
    if last_nag_at is None:
        return True
    if last_move_at is not None and last_nag_at < last_move_at:
        return True
    return now - parse_stamp(last_nag_at) >= DAY


def _nag(ctx, board, userid, text, report):
    """The nag mail (docs/spec/server.md §5.8, §5.9, §5.10); none to a player who turned
    this board's nags off, or whom no address reaches. Either way the board counts as
    nagged now, so the next comes no sooner than a nag would."""
    ctx.store.boards.set_nagged(board.id, stamp(ctx.now))
    if ctx.store.delivery.nags_off(board.id, userid):
        report.append(f"{board.title_name}: no nag to {userid} (turned off)")
        return
    if unreachable(ctx.store, userid):
        report.append(f"{board.title_name}: no nag to {userid} (unreachable)")
        return
    report.append(f"{board.title_name}: nag to {userid}")
    title = f"Nag of {board.title_name}"
    summary, html = ctx.board_mail(
        board,
        userid,
        ctx.board_context(
            board, userid, title=title, full_moves=True, timing=True, next_steps=True
        ),
        intro=text,
    )
    body = ctx.render("mail/nag.txt", text=text, summary=summary)
    subject = ctx.thread_subject(board, userid, f"Nag: {board.title_name} {userid}")
    ctx.mail_user(userid, subject, body, "nag", board=board, html=html, stream="nag")


def _archive(ctx, games, report):
    before = stamp(ctx.now - timedelta(days=ctx.config.number("timeouts.archive_days")))
    for row in ctx.store.boards.to_archive(before, games):
        ctx.store.boards.archive(row.id, stamp(ctx.now))
        game = ctx.server.games.get(row.game)
        name = game.display_name if game else row.game
        report.append(f"{name} Board {row.number}: archived")


def _end_used_up_vacations(ctx, report):
    allowance = allowance_seconds(ctx.config)
    for userid in ctx.store.users.on_vacation():
        state = vacation_state(ctx.store, userid, ctx.now)
        if state.used_seconds < allowance:
            continue
        ctx.store.users.end_vacation(userid, stamp(ctx.now), "allowance")
        state = vacation_state(ctx.store, userid, ctx.now)
        note = f"Your vacation days for {ctx.now.year} are used up, so your vacation has ended."
        ctx.mail_user(
            userid,
            f"Vacation off for {userid}",
            vacation_body(ctx, userid, state, allowance, note=note),
            "settings",
        )
        report.append(f"vacation of {userid} ended: allowance used up")


def _digests(ctx, report):
    """docs/spec/server.md §11.4: once a day, to each user with the digest on, the boards
    where they are on move, each with its own reply address."""
    for userid in ctx.store.users.digest_due(stamp(ctx.now - DIGEST_EVERY)):
        entries = []
        for row in ctx.store.boards.active_of_user(userid):
            board = Board(ctx, row)
            if board.on_move_userid() != userid:
                continue
            token = ctx.issue_token(board, userid, ctx.now)
            entries.append(
                {
                    "subject": ctx.board_subject(board, userid),
                    "state": state_line(board, board.position, None),
                    "moves": board.position.plies_made,
                    "last_move_at": show_time(row.last_move_at),
                    "reply_to": reply_address(ctx.config, token),
                    "next": next_lines(board, userid),
                }
            )
        ctx.store.users.set_digest_sent(userid, stamp(ctx.now))
        if entries:
            body = ctx.render("mail/digest.txt", userid=userid, entries=entries)
            ctx.mail_user(userid, f"PBM digest for {userid}", body, "digest", stream="digest")
            report.append(f"digest to {userid}: {len(entries)} boards")


def _prune(ctx, report):
    ctx.store.tokens.delete_expired(stamp(ctx.now))
    pruned = ctx.store.limits.prune_inbox(stamp(ctx.now - INBOX_KEEP))
    if pruned:
        report.append(f"{pruned} old inbox keys pruned")
    ended = ctx.store.invitations.prune(stamp(ctx.now - INVITATIONS_KEEP))
    if ended:
        report.append(f"{ended} invitations ended long ago pruned")
    expired = ctx.store.users.prune_reset_codes(stamp(ctx.now))
    if expired:
        report.append(f"{expired} expired password reset codes pruned")
    old = ctx.store.delivery.prune_bounces(stamp(ctx.now - TEMPORARY_WINDOW))
    if old:
        report.append(f"{old} old bounce reports pruned")
    forgotten = ctx.store.limits.prune_held_mails(stamp(ctx.now - HELD_MAIL_KEEP))
    if forgotten:
        report.append(f"{forgotten} notes of mail held back over {HELD_MAIL_KEEP.days} days pruned")
    stale = ctx.store.limits.prune_rate_rows(stamp(ctx.now - 2 * DAY))
    if stale:
        report.append(f"{stale} stale rate-limit rows pruned")
