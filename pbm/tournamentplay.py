"""Round-robin tournaments by mail (docs/spec/server.md §11.9): making one, joining and
leaving it, its start (divisions by rating, every board of every division at once through
starting.start_board, one mail per player listing their boards), the rule that a player who
loses two games on time loses the rest, the daily digest of a division's results, and the
end, when the winners are announced. The rules of divisions, pairings and standings are
pbm/tournaments.py's; what the mails show is pbm/tournamentviews.py's."""

from datetime import timedelta

from .boards import Board
from .clock import DAY, parse_stamp, show_time, stamp
from .game import OptionError
from .grammar import with_suggestion
from .ratings import current_rating
from .replies import reply_address
from .serveroptions import DEFAULT_LARGEST, MAX_ENTRANTS, MIN_DIVISION, TOURNAMENT_ONLY
from .starting import start_board
from .summary import next_lines
from .tournaments import division_sizes, pairings, split
from .tournamentviews import (
    NAME_RE,
    NAME_RULE,
    division_sections,
    division_views,
    result_text,
    start_line,
    terms_lines,
    web_url,
)

# A division's digest goes out at most once a day; a daily cron run a little early still
# sends it, as the players' digests (docs/spec/server.md §11.4).
DIGEST_EVERY = DAY - timedelta(minutes=30)
TIME_LOSSES = 2  # games lost on time that take a player out of a tournament


def load(ctx, word: str):
    """The tournament a command names; refused with the names that come close."""
    name = word.lower()
    record = ctx.store.tournaments.get(name) if NAME_RE.fullmatch(name) else None
    if record is None:
        ctx.abort(
            with_suggestion(f'No tournament "{word}"', name, ctx.store.tournaments.names())
            + '\n\nSend "tournament list" for the tournaments here.'
        )
    return record


def _mail(ctx, userid, record, subject, headline, sections=(), kind="tournament"):
    """A mail about a tournament to one user; every mail about it to one user is one thread
    in a mail client that reads References."""
    body = ctx.render(
        "mail/tournament.txt",
        headline=headline,
        sections=list(sections),
        web_url=web_url(ctx.config, record),
    )
    root = f"<tournament.{record.name}.{userid}@{ctx.config.server_domain}>"
    ctx.mail_user(userid, subject, body, kind, headers={"References": root})


def _reply(ctx, record, subject, headline, sections=()):
    body = ctx.render(
        "mail/tournament.txt",
        headline=headline,
        sections=list(sections),
        web_url=web_url(ctx.config, record),
    )
    ctx.reply(subject, body, kind="tournament")


# -- creating and joining ------------------------------------------------------------------


def create(ctx, name: str, game, params: dict, server_options: dict, creator: str | None):
    """A new tournament open for entries (docs/spec/server.md §11.9); its creator, a player,
    joins it. Every problem is listed in one refusal."""
    name = name.lower()
    problems = []
    if not NAME_RE.fullmatch(name):
        problems.append(NAME_RULE)
    elif ctx.store.tournaments.get(name) is not None:
        problems.append(f'Tournament "{name}" already exists; choose another name')
    if not game.min_players <= 2 <= game.max_players:
        problems.append(
            f"{game.display_name} has no two-player boards: tournaments are for two-player games"
        )
    options = None
    try:
        options = game.parse_options(params, 2)
    except OptionError as error:
        problems.append(str(error))
    start_at = server_options.get("start_at")
    start_players = server_options.get("start_players")
    if start_at is None and start_players is None:
        problems.append(
            "Say when it starts: --start=YYYY-MM-DD (or YYYY-MM-DDTHH:MM, UTC), --players=N, "
            "or both (whichever comes first)"
        )
    if start_at is not None and parse_stamp(start_at) <= ctx.now:
        problems.append(f"--start must be later than now ({show_time(ctx.now)})")
    largest = server_options.get("largest", DEFAULT_LARGEST)
    if start_players is not None and division_sizes(start_players, largest) is None:
        problems.append(
            f"{start_players} players cannot be split into divisions of {MIN_DIVISION} to "
            f"{largest} players whose sizes differ by at most one: change --players or "
            "--largest"
        )
    if creator is not None and ctx.store.tournaments.count_open_created_by(creator):
        problems.append("You have made a tournament that is still open for entries: one at a time")
    if problems:
        ctx.answer_error("\n".join(problems), subject="Invalid tournament")
        return
    board_options = {k: v for k, v in server_options.items() if k not in TOURNAMENT_ONLY.values()}
    ctx.store.tournaments.create(
        name=name,
        game=game.name,
        options=options,
        server_options=board_options,
        largest=largest,
        start_at=start_at,
        start_players=start_players,
        creator=creator,
        created_at=stamp(ctx.now),
    )
    record = ctx.store.tournaments.get(name)
    if creator is not None:
        ctx.store.tournaments.add_entrant(record.id, creator, stamp(ctx.now))
    joined = "You have joined it. " if creator else ""
    _reply(
        ctx,
        record,
        f"Tournament {name} created",
        f"Tournament {name} is open for entries. {joined}Players join it by sending\n"
        f'"tournament join {name} <userid> <password>".',
        [{"title": "Terms", "lines": terms_lines(ctx, game, record)}],
    )


def _refuse_unless_open(ctx, record):
    if record.status == "running":
        ctx.abort(
            f"Tournament {record.name} started on {show_time(record.started_at)}: nobody can "
            "join it now"
        )
    if record.status != "open":
        ctx.abort(f"Tournament {record.name} is over: it {_over(record)}")


def _over(record) -> str:
    if record.status == "called_off":
        return f"was called off on {show_time(record.ended_at)}"
    return f"ended on {show_time(record.ended_at)}"


def join(ctx, record, userid: str):
    """`tournament join`: one more player; the last one the tournament waits for starts it
    in the same transaction. A player is seated once, however many joins race: each runs
    in a write transaction of its own and sees the others' rows."""
    _refuse_unless_open(ctx, record)
    if ctx.store.tournaments.entrant(record.id, userid) is not None:
        ctx.abort(f"{userid} has already joined tournament {record.name}")
    count = ctx.store.tournaments.count_entrants(record.id)
    if count >= MAX_ENTRANTS:
        ctx.abort(f"Tournament {record.name} is full: {MAX_ENTRANTS} players have joined")
    ctx.store.tournaments.add_entrant(record.id, userid, stamp(ctx.now))
    count += 1
    starting = record.start_players is not None and count >= record.start_players
    game = ctx.server.game_for_board(record.game)
    if starting:
        when = "With you the tournament is complete: it starts now, and a mail lists your boards."
    else:
        when = start_line(record)
    _reply(
        ctx,
        record,
        f"Tournament {record.name}: {userid} joined",
        f"{userid} has joined tournament {record.name}; {_players(count)} so far.\n{when}\n"
        f'To leave it before it starts, send "tournament leave {record.name} {userid} '
        '<password>".',
        [{"title": "Terms", "lines": terms_lines(ctx, game, record)}],
    )
    if starting:
        start(ctx, record)


def _players(count: int) -> str:
    return f"{count} {'player has' if count == 1 else 'players have'} joined"


def leave(ctx, record, userid: str):
    """`tournament leave`: before the start the player is simply no longer in it; after it,
    every board they still play is lost (docs/spec/server.md §11.9)."""
    entrant = ctx.store.tournaments.entrant(record.id, userid)
    if record.status in ("finished", "called_off"):
        ctx.abort(f"Tournament {record.name} is over: it {_over(record)}")
    if entrant is None:
        ctx.abort(f"{userid} is not in tournament {record.name}")
    if record.status == "open":
        ctx.store.tournaments.remove_entrant(record.id, userid)
        _reply(
            ctx,
            record,
            f"Tournament {record.name}: {userid} left",
            f"{userid} has left tournament {record.name}, before its start.",
        )
        return
    if entrant.status != "playing":
        ctx.abort(f"{userid} is out of tournament {record.name} since {show_time(entrant.left_at)}")
    lost = forfeit_all(
        ctx, record, userid, "left", f"{userid} has left tournament {record.name} and forfeits."
    )
    boards = ", ".join(str(board.number) for board in lost) or "none"
    _reply(
        ctx,
        record,
        f"Tournament {record.name}: {userid} left",
        f"{userid} has left tournament {record.name}. The boards still being played are "
        f"lost: {boards}. The games already played keep their results.",
    )


def forfeit_all(ctx, record, userid: str, status: str, event: str) -> list:
    """The player is out of the tournament: each board of it they still play is lost by a
    forfeit (a departure's ply, never a withdrawal on a tournament's board), with the board
    mails of any forfeit. Returns the boards."""
    ctx.store.tournaments.set_left(record.id, userid, status, stamp(ctx.now))
    lost = []
    for entry in ctx.store.tournaments.active_boards_of(record.id, userid):
        board = Board(ctx, ctx.store.boards.by_id(entry.board_id))
        seats = board.playing_seats_of(userid)
        if not board.active or not seats:
            continue
        board.leave(seats[0], "forfeit", event)
        ctx.announce(board)
        lost.append(board)
    return lost


# -- the start ---------------------------------------------------------------------------


def start(ctx, record) -> list[str]:
    """Divisions by rating, then every board of every division at once, and one mail to
    each player with all their boards; or, with too few players, the tournament is called
    off and everyone told. Returns what was done, for cleanup's report."""
    game = ctx.server.game_for_board(record.game)
    entrants = []
    for entrant in ctx.store.tournaments.entrants(record.id):
        if ctx.store.users.is_active(entrant.userid):
            entrants.append(entrant)
        else:  # deleted since joining: left out (docs/spec/server.md §11.9)
            ctx.store.tournaments.remove_entrant(record.id, entrant.userid)
    ratings = {e.userid: current_rating(ctx.store, game.name, e.userid) for e in entrants}
    order = sorted(entrants, key=lambda e: (-ratings[e.userid], e.joined_at, e.userid))
    players = [e.userid for e in order]
    divisions = split(players, record.largest)
    if divisions is None:
        call_off(ctx, record, players)
        return [f"tournament {record.name}: called off ({len(players)} players)"]
    boards: dict[str, list] = {userid: [] for userid in players}
    for number, members in enumerate(divisions, start=1):
        ctx.store.tournaments.add_division(record.id, number)
        for userid in members:
            ctx.store.tournaments.place(record.id, userid, number, ratings[userid])
        for white, black in pairings(members):
            board = start_board(
                ctx, game, [white, black], record.options, record.server_options, announce=False
            )
            ctx.store.tournaments.add_board(record.id, number, board.id, white, black)
            boards[white].append(board)
            boards[black].append(board)
    ctx.store.tournaments.set_status(record.id, "running", stamp(ctx.now))
    record = ctx.store.tournaments.by_id(record.id)
    for number, members in enumerate(divisions, start=1):
        for userid in members:
            _start_mail(ctx, record, game, number, len(divisions), members, ratings, userid, boards)
    started = sum(len(b) for b in boards.values()) // 2
    return [f"tournament {record.name}: started, {len(divisions)} divisions, {started} boards"]


def _start_mail(ctx, record, game, number, count, members, ratings, userid, boards):
    """The one mail a player gets at the start: their division, and each of their boards
    with what to do; where it is their move, the board's own reply address."""
    entries = []
    for board in boards[userid]:
        on_move = board.on_move_userid()
        reply_to = None
        if on_move == userid:
            token = ctx.server.issue_token(board, userid, ctx.now)
            reply_to = reply_address(ctx.config, token)
        entries.append(
            {
                "subject": f"{board.title_name}: {' vs '.join(board.seat_userids)}",
                "next": next_lines(board, userid),
                "first": on_move if on_move not in (None, userid) else None,
                "reply_to": reply_to,
            }
        )
    body = ctx.render(
        "mail/tournament_start.txt",
        record=record,
        game=game,
        userid=userid,
        division=number,
        divisions=count,
        members=[f"{u} ({ratings[u]})" for u in members],
        entries=entries,
        web_url=web_url(ctx.config, record),
    )
    root = f"<tournament.{record.name}.{userid}@{ctx.config.server_domain}>"
    ctx.mail_user(
        userid,
        f"Tournament {record.name} has started: your boards",
        body,
        "tournament",
        headers={"References": root},
    )


def call_off(ctx, record, players):
    count = len(players)
    if count < MIN_DIVISION:
        why = (
            f"{count} {'player' if count == 1 else 'players'} joined, and a division needs at "
            f"least {MIN_DIVISION}"
        )
    else:
        why = (
            f"its {count} players cannot be split into divisions of {MIN_DIVISION} to "
            f"{record.largest} players whose sizes differ by at most one"
        )
    ctx.store.tournaments.set_status(record.id, "called_off", stamp(ctx.now))
    record = ctx.store.tournaments.by_id(record.id)
    for userid in players:
        _mail(
            ctx,
            userid,
            record,
            f"Tournament {record.name} called off",
            f"Tournament {record.name} has been called off: {why}. No board was started.",
        )


# -- play: losses on time, digests, the end ---------------------------------------------------


def clean(ctx, tournament_id: int) -> list[str]:
    """Cleanup's work on one tournament (docs/spec/server.md §9.2): the start when its time
    has come; on a running one, the players out after two losses on time, then the digests
    of the divisions whose results changed."""
    record = ctx.store.tournaments.by_id(tournament_id)
    if record.status == "open" and record.start_at and record.start_at <= stamp(ctx.now):
        return start(ctx, record)
    if record.status != "running":
        return []
    report = _time_losses(ctx, record)
    record = ctx.store.tournaments.by_id(tournament_id)
    if record.status == "running":
        report += _digests(ctx, record)
    return report


def _time_losses(ctx, record) -> list[str]:
    report = []
    for entrant in ctx.store.tournaments.entrants(record.id):
        userid = entrant.userid
        if entrant.status != "playing" or not ctx.store.tournaments.active_boards_of(
            record.id, userid
        ):
            continue
        if ctx.store.tournaments.count_forfeits(record.id, userid) < TIME_LOSSES:
            continue
        lost = forfeit_all(
            ctx,
            record,
            userid,
            "timed_out",
            f"{userid} forfeits: having lost {TIME_LOSSES} games of tournament {record.name} "
            "on time, they lose the ones not yet played.",
        )
        boards = ", ".join(str(board.number) for board in lost)
        _mail(
            ctx,
            userid,
            record,
            f"Tournament {record.name}: you are out",
            f"You have lost {TIME_LOSSES} games of tournament {record.name} on time, so you "
            f"are out of it: the boards you still played are lost ({boards}). The games "
            "already played keep their results.",
        )
        report.append(f"tournament {record.name}: {userid} out after {TIME_LOSSES} time losses")
    return report


def _digests(ctx, record) -> list[str]:
    """To every player of a division whose results changed since its last digest, one mail
    with the new results and the table; at most one a day."""
    report = []
    game = ctx.server.game_for_board(record.game)
    for view in division_views(ctx.store, record):
        new = [row for row in view.boards if row.status == "finished" and row.reported_at is None]
        if not new:
            continue
        last = ctx.store.tournaments.digest_at(record.id, view.number)
        if last is not None and ctx.now - parse_stamp(last) < DIGEST_EVERY:
            continue
        by_number = {g.number: g for g in view.games}
        results = [
            f"Board {row.number}: {row.white} - {row.black}, "
            + result_text(by_number[row.number], view.reasons[row.number])
            for row in sorted(new, key=lambda r: (r.finished_at or "", r.number))
        ]
        since = f"since {show_time(last)}" if last else "since the start"
        for userid in view.order:
            if ctx.store.users.is_active(userid):
                _mail(
                    ctx,
                    userid,
                    record,
                    f"Tournament {record.name}: division {view.number} results",
                    f"New results in division {view.number} of tournament {record.name} {since}:",
                    [{"title": "", "lines": results}] + division_sections(view, game)[:1],
                )
        ctx.store.tournaments.mark_reported([row.board_id for row in new], stamp(ctx.now))
        ctx.store.tournaments.set_digest_at(record.id, view.number, stamp(ctx.now))
        report.append(f"tournament {record.name}: digest of division {view.number}")
    return report


def board_ended(ctx, board):
    """A board of a tournament has ended (its mails are written): when it was the last, the
    tournament is over and every player is told the winners."""
    record = ctx.store.tournaments.by_id(board.tournament.tournament_id)
    if record.status != "running" or ctx.store.tournaments.count_active_boards(record.id):
        return
    ctx.store.tournaments.set_status(record.id, "finished", stamp(ctx.now))
    record = ctx.store.tournaments.by_id(record.id)
    views = division_views(ctx.store, record)
    ctx.store.tournaments.mark_reported(
        [row.board_id for view in views for row in view.boards if row.reported_at is None],
        stamp(ctx.now),
    )
    lines = [
        f"Division {view.number}: {' and '.join(view.winners())}"
        + (" (shared)" if len(view.winners()) > 1 else "")
        for view in views
    ]
    sections = [{"title": "Winners", "lines": lines}]
    game = ctx.server.game_for_board(record.game)
    for view in views:
        section = division_sections(view, game)[0]
        sections.append(dict(section, title=f"Final table of {section['title'].lower()}"))
    headline = (
        f"Tournament {record.name} is over: every board of it has been played. "
        "Congratulations to the winners!"
    )
    for view in views:
        for userid in view.order:
            if ctx.store.users.is_active(userid):
                _mail(ctx, userid, record, f"Tournament {record.name} is over", headline, sections)
