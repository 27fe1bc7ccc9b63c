"""The parts of a board mail (docs/spec/server.md §5.4 to §5.6), built for one recipient."""

from datetime import timedelta

from .boardcache import view_of
from .bounces import reachability_lines
from .clock import parse_stamp, show_duration, show_time
from .game import format_option
from .timebank import show_left
from .vacations import vacation_state

MAIL_WIDTH = 76


def options_line(game, options: dict, players: int) -> str:
    defaults = game.parse_options({}, players)
    shown = []
    for name, value in options.items():
        if defaults.get(name) == value:
            continue
        if value is True:
            shown.append(f"-{name}")
        elif value is False:
            shown.append(f"-no_{name}")
        else:
            shown.append(format_option(name, str(value)))
    return "Options: " + " ".join(shown) if shown else ""


def _join_names(names) -> str:
    names = list(names)
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def state_line(board, position, result) -> str:
    if result is not None:
        winners = [s.userid for s in result.seats if s.score == 1]
        if not winners:
            return "Game was a tie."
        points = f" by {result.points} points" if result.points > 1 else ""
        return f"Game won by {_join_names(dict.fromkeys(winners))}{points}."
    seat = position.to_move()
    if seat is None:
        return _outcome_line(position, position.outcome())
    userid = position.holders[seat]
    if position.plies_made == 0:
        return f"Please start the game {userid}."
    return f"It is {userid}'s turn."


def _outcome_line(position, outcome) -> str:
    """The state line of a position that no stored result describes: a preview's."""
    if outcome is None:
        return "The game is over."
    if not outcome.winners:
        return "Game was a tie."
    winners = dict.fromkeys(position.holders[s] for s in outcome.winners)
    points = f" by {outcome.points} points" if outcome.points > 1 else ""
    return f"Game won by {_join_names(winners)}{points}."


def _previewed_reason(position, finished) -> str:
    if finished or position.to_move() is not None:
        return ""
    outcome = position.outcome()
    return (outcome.reason if outcome else "") or ""


SHOWN_KINDS = {"pass": "pass", "swap": "swap"}  # plies shown by their kind, not their text


def shown_text(game, ply, perspective, finished, auto_from) -> str:
    if ply.kind == "move" and not game.visible_moves and not finished:
        if ply.seat != perspective:
            return "..."
    text = SHOWN_KINDS.get(ply.kind, ply.text)
    if auto_from is not None and ply.ply >= auto_from and ply.auto:
        text += " (Auto)"
    return text


def move_lines(game, position, perspective, *, rows=None, auto_from=None, finished=False):
    """The move list: one column per seat, or one line per ply when that is too wide."""
    plies = position.plies
    if not plies:
        return []
    seats = position.seats
    names = game.player_names[:seats]
    texts = [shown_text(game, p, perspective, finished, auto_from) for p in plies]
    width = max(
        13,
        max(map(len, texts)) + 5,
        max(len(n) for n in list(names) + position.holders) + 3,
    )
    # Columns hold ply (r-1)*seats + k under seat k's current holder; after a swap or an
    # extra ply (a resignation) they would stand under the wrong name, so use lines.
    aligned = all(
        p.seat == (p.ply - 1) % seats and p.userid == position.holders[p.seat] for p in plies
    )
    if game.move_layout == "lines" or seats * width > MAIL_WIDTH or not aligned:
        lines = [f"{p.ply:>4} {names[p.seat]} ({p.userid}): {t}" for p, t in zip(plies, texts)]
        return _last(lines, rows * seats, 1) if rows else lines
    header = [
        "".join(("   " + n).ljust(width) for n in names).rstrip(),
        "".join(("   " + u).ljust(width) for u in position.holders).rstrip(),
    ]
    body = []
    for start in range(0, len(plies), seats):
        cells = [
            f"{p.ply:>4} {t}".ljust(width)
            for p, t in zip(plies[start : start + seats], texts[start : start + seats])
        ]
        body.append("".join(cells).rstrip())
    if rows:
        body = _last(body, rows, seats)
    return header + body


def _last(lines: list[str], count: int, plies_a_line: int) -> list[str]:
    """The last count lines of a move list, after a line saying how many moves went
    before them (docs/spec/server.md §5.5), so that none seem lost."""
    if len(lines) <= count:
        return lines
    earlier = (len(lines) - count) * plies_a_line
    return [f"{'...':>4} {earlier} earlier move{'s' if earlier != 1 else ''}"] + lines[-count:]


def timing_lines(board, position, moment, defaults) -> list[str]:
    row = board.row
    finished = row.status != "active"
    lines = [
        f"Game started.... {show_time(row.created_at)}",
        f"Last move made.. {show_time(row.last_move_at)}",
    ]
    if finished:
        lines.append(f"Game ended...... {show_time(row.finished_at)}")
    else:
        lines.append(f"It is now....... {show_time(moment)}")
        seat = position.to_move()
        if seat is not None and board.clock is not None:
            lines.append(_clock_deadline_line(board))
        elif seat is not None:
            deadline = parse_stamp(row.last_move_at) + timedelta(days=row.forfeit_days)
            lines.append(
                f"Deadline........ {show_time(deadline)} "
                f"({position.holders[seat]} forfeits if no move)"
            )
    if row.nag_days != defaults["nag_days"]:
        lines.append(f"Nag time........ {row.nag_days} days")
    if row.forfeit_days != defaults["forfeit_days"]:
        lines.append(f"Forfeit time.... {row.forfeit_days} days")
    if row.total_days:
        lines.append(f"Total time...... {row.total_days} days")
    if board.clock is not None:
        lines.append(f"Clock........... {board.clock.describe()}")
    lines.append("Time used by players:")
    labels = [
        f"{position.holders[s]} ({board.game.player_names[s]}):" for s in range(position.seats)
    ]
    column = max(len(label) for label in labels + ["Total:"]) + 2
    for seat, label in enumerate(labels):
        lines.append(label.ljust(column) + show_duration(position.time_used[seat]))
    lines.append("Total:".ljust(column) + show_duration(sum(position.time_used)))
    if board.clock is not None:
        lines.append("Time left:")
        for label, left in zip(labels, board.banks()):
            lines.append(label.ljust(column) + show_left(left))
    return lines


def _clock_deadline_line(board) -> str:
    seat, until = board.clock_deadline()
    userid = board.position.holders[seat]
    if until is None:
        return f"Deadline........ none while {userid} is on vacation (the clock is stopped)"
    return f"Deadline........ {show_time(until)} ({userid} loses on time)"


def clock_line(board, seat) -> str:
    """What the player on move of a clocked board is told (docs/spec/server.md §9.5)."""
    _, until = board.clock_deadline()
    left = show_left(board.clock_left(seat))
    if until is None:
        return f"You have {left} left; your clock is stopped while you are on vacation."
    return f"You have {left} left, until {show_time(until)}."


def needs_timing(board, defaults) -> bool:
    row = board.row
    return (
        row.status != "active"
        or row.nag_days != defaults["nag_days"]
        or row.forfeit_days != defaults["forfeit_days"]
        or bool(row.total_days)
        or board.clock is not None
    )


def personal_lines(board, viewer) -> list[str]:
    """What only this recipient is told: the time left on their clock when they are on move,
    their queued move and queued resignation."""
    lines = []
    on_move = board.position.to_move()
    if (
        board.clock is not None
        and on_move is not None
        and board.position.holders[on_move] == viewer
    ):
        lines.append(clock_line(board, on_move))
    for seat in board.position.seats_of(viewer) if viewer else []:
        pending = board.store.votes.queued(board.id, seat)
        if pending is None:
            continue
        if pending.move_text is not None:
            guard = f"#{pending.guard}" if pending.guard else ""
            lines.append(f"You have the following move queued: {pending.move_text}{guard}")
        if pending.resign:
            lines.append("Your resignation is queued and takes effect on your next turn.")
    return lines


EXAMPLE_SCAN = 50  # legal moves looked at for an example, however many a game has


def example_move(game, position, seat) -> str | None:
    """A legal move to show as the example of a reply: the first in sorted order of some."""
    moves = []
    for move in game.legal_moves(position.state, seat):
        moves.append(move)
        if len(moves) >= EXAMPLE_SCAN:
            break
    return min(moves) if moves else game.forced_move(position.state)


def _side(game, seat) -> str:
    """A seat's colour with its symbol on the board when the game declares one: "Black (x)"."""
    name = game.player_names[seat]
    return f"{name} ({game.seat_symbols[seat]})" if game.seat_symbols else name


def next_lines(board, viewer) -> list[str]:
    """What a player is asked to do next (docs/spec/server.md §11.3): their side, and when
    it is theirs to act the reply that does it and the full command to fall back on (with
    the password as a placeholder: it is never shown)."""
    if viewer is None or not board.active:
        return []
    seats = board.playing_seats_of(viewer)
    if not seats:
        return []
    game, position = board.game, board.position
    sides = _join_names([_side(game, s) for s in seats])
    lines = [f"You are {sides}."]
    command = f"{game.name} move {board.number} {viewer} <password>"
    pending = board.vote()
    if pending is not None and not set(seats) <= set(pending.accepted):
        what = "draw" if pending.kind == "draw" else "undo"
        lines.append(f"Reply `accept` or `reject` to the {what},")
        lines.append(f"or send `{command} accept` (or reject).")
        return lines
    on_move = position.to_move()
    if on_move in seats:
        example = example_move(game, position, on_move) or "pass"
        guard = f"#{position.move_number}"
        lines.append(f"Reply with your move, e.g. `{example}`,")
        lines.append(f"or send `{command} {example}{guard}`.")
    return lines


def board_context(
    ctx,
    board,
    viewer,
    *,
    title,
    events=(),
    full_moves=False,
    timing=False,
    position=None,
    extra_lines=(),
    perspective_of_viewer=True,
    view=None,
    clocks=True,
    auto_from=None,
    next_steps=False,
    watch=None,
    shared=None,
):
    """Everything templates/mail/board.txt shows, for one recipient (None: a spectator).
    A preview has no clocks: its position is no board's, and `preview new` has no board;
    `next_steps` for a mail the recipient can answer by a reply. `watch`: the board's
    watch_lines when the caller has them already (they are the same for every reader).
    `shared`: a dict the caller keeps while it asks again with only another viewer: what
    is the same for every reader is made once and kept there."""
    position = position or board.position
    if not perspective_of_viewer:
        perspective = None
    elif position is board.position:
        perspective = board.perspective_of(viewer)
    else:
        seats = position.seats_of(viewer) if viewer else []
        perspective = seats[0] if seats else None
    finished = board.row.status != "active" and position is board.position
    result = board.result() if finished else None
    if auto_from is None and position is board.position:
        auto_from = board.auto_from
    defaults = ctx.server.timeout_defaults()
    comments = list(board.earlier_comments) if position is board.position else []
    if board.row.comment_text:
        comments.append({"author": board.row.comment_author, "text": board.row.comment_text})
    rows = None if (full_moves or finished) else board.game.move_rows
    shared = {} if shared is None else shared

    def once(name, make):
        if name not in shared:
            shared[name] = make()
        return shared[name]

    return {
        "title": title,
        "tournament_line": tournament_line(board),
        "options_line": once(
            "options", lambda: options_line(board.game, board.options, position.seats)
        ),
        "events": list(events),
        "state_line": once("state", lambda: state_line(board, position, result)),
        "reason": (result.reason if result else None) or _previewed_reason(position, finished),
        "personal_lines": list(extra_lines)
        + (personal_lines(board, viewer) if board.active and position is board.position else []),
        "next_lines": next_lines(board, viewer)
        if next_steps and position is board.position
        else [],
        "rating_lines": once(
            "ratings", lambda: ctx.server.rating_lines(board, result) if result else []
        ),
        "move_lines": once(
            # the list shows a hidden move to its mover only (shown_text)
            ("moves", None if board.game.visible_moves else perspective),
            lambda: move_lines(
                board.game,
                position,
                perspective,
                rows=rows,
                auto_from=auto_from,
                finished=finished,
            ),
        ),
        "board": _board_text(ctx, board.game, position.state, perspective, view or {}),
        "watch_lines": watch
        if watch is not None
        else once("watch", lambda: watch_lines(ctx, board)),
        "comments": comments,
        "timing": once(
            "timing",
            lambda: (
                timing_lines(board, position, ctx.now, defaults)
                if clocks and (timing or needs_timing(board, defaults))
                else []
            ),
        ),
        "web_url": web_url(ctx.config, board),
        # For the HTML part's picture (htmlmail.py); the text template does not show them.
        "position": position,
        "perspective": perspective,
    }


def tournament_line(board) -> str:
    """The tag of a tournament's board in its every mail (docs/spec/server.md §11.9)."""
    tag = board.tournament
    return f"Tournament {tag.name}, division {tag.division}." if tag is not None else ""


def _board_text(ctx, game, state, perspective, view: dict) -> str:
    """The plugin's text board, rendered once per state, perspective and view however many
    recipients and commands of a server share them (boardcache.Drawings)."""
    key = ("text", game.name, id(state), view_of(game, perspective), repr(sorted(view.items())))
    if key not in ctx.drawn:
        ctx.drawn[key] = (state, game.render_board(state, perspective, **view))
    return ctx.drawn[key][1]


def web_url(config, board) -> str:
    """The board's page in the web view (docs/spec/server.md §11.5), when `web.base_url` is
    set; "" otherwise, and for a board that is not stored (`preview new`)."""
    base = config.get("web.base_url").rstrip("/")
    if not base or board.id is None:
        return ""
    return f"{base}/{board.game.name}/{board.number}"


def watch_lines(ctx, board) -> list[str]:
    if board.id is None:
        return []
    lines = []
    subscribers = board.store.watching.subscribers(board.id)
    if not board.active:
        # A player who resigned watched the rest of the game; once it is over she is one
        # of its players, not a subscriber of her own board.
        subscribers = [u for u in subscribers if u not in board.position.holders]
    if subscribers:
        lines.append(f"Subscribers: {' '.join(subscribers)}")
    notifiers = board.notifiers()
    if notifiers:
        lines.append(f"Notifiers: {' '.join(notifiers)}")
    if board.active:
        for userid in dict.fromkeys(board.position.holders):
            state = vacation_state(board.store, userid, ctx.now)
            if state.on:
                lines.append(f"On vacation: {userid} (since {show_time(state.since)})")
        lines += reachability_lines(board.store, board.position.holders)
    return lines


def text_table(header, rows, right=(), gap="  ") -> list[str]:
    """Columns as wide as their widest cell, numbers (the columns in `right`) flush right;
    the last column's words go on under it when a line would pass MAIL_WIDTH."""
    widths = [max(len(str(cells[i])) for cells in [header, *rows]) for i in range(len(header))]

    def line(cells):
        shown = [
            str(c).rjust(w) if i in right else str(c).ljust(w)
            for i, (c, w) in enumerate(zip(cells[:-1], widths))
        ]
        lead = gap.join(shown) + gap if shown else ""
        out, current = [], lead
        for word in str(cells[-1]).split() or [""]:
            if len(current) + len(word) > MAIL_WIDTH and current.strip() and current != lead:
                out.append(current.rstrip())
                current = " " * len(lead)
            current += word + " "
        out.append(current.rstrip())
        return out

    return [text for cells in [header, *rows] for text in line(cells)]


def board_table(game, boards) -> list[str]:
    """The `games` table (docs/spec/server.md §5.6): one line per board."""
    seats = max((len(b.position.holders) for b in boards), default=2)
    names = list(game.player_names[:seats])
    widths = [
        max(
            [10, len(names[s])]
            + [len(b.position.holders[s]) for b in boards if s < b.position.seats]
        )
        for s in range(seats)
    ]
    rows = [(b, _table_status(b)) for b in boards]
    header = "Board  Move  " + "  ".join(n.ljust(w) for n, w in zip(names, widths)) + "  Status"
    lines = []
    for b, status in rows:
        cells = "  ".join(
            (b.position.holders[s] if s < b.position.seats else "").ljust(w)
            for s, w in enumerate(widths)
        )
        lines.append(f"{b.number:>5}  {b.position.plies_made:>4}  {cells}  {status}".rstrip())
    if max([len(header)] + [len(line) for line in lines]) <= MAIL_WIDTH:
        return [header.rstrip()] + lines
    header = "Board  Move  Players"
    lines = []
    for b, status in rows:
        words = b.position.holders[:-1] + [b.position.holders[-1] + " ", status]
        line = f"{b.number:>5}  {b.position.plies_made:>4}  "
        for word in words:
            if len(line) + len(word) + 1 > MAIL_WIDTH and line.strip():
                lines.append(line.rstrip())
                line = " " * 12
            line += word + " "
        lines.append(line.rstrip())
    return [header] + lines


def _table_status(board) -> str:
    archived = " (archived)" if board.row.archived_at else ""
    if board.active:
        seat = board.position.to_move()
        userid = board.position.holders[seat] if seat is not None else "?"
        if board.position.plies_made == 0:
            return f"{userid} to start{archived}"
        return f"{userid}'s turn{archived}"
    result = board.result()
    winners = [s.userid for s in result.seats if s.score == 1] if result else []
    if not winners:
        return f"game was a tie{archived}"
    points = f" {result.points} points" if result.points > 1 else ""
    return f"{' '.join(dict.fromkeys(winners))} Won{points}{archived}"
