"""What each page of the web view shows, read from the store and the replayed move log
(docs/spec/server.md §11.8). A spectator's view: no addresses, nothing of a player's
own (queued moves, submissions), hidden information only after the game's end."""

from dataclasses import dataclass, field
from datetime import datetime

from ..boardrecord import record_json, record_text
from ..boards import Board
from ..clock import show_duration, show_time
from ..commands.ranking import standings_tables
from ..pictures import board_svg
from ..position import PLAYING, replay, seats_after
from ..seeking import seek_rows
from ..summary import options_line, shown_text, state_line, timing_lines
from ..timebank import banks_by_ply, show_left

PAGE_SIZE = 50
LISTING_TITLES = {
    "active": "Active boards",
    "finished": "Finished boards",
    "archived": "Archived boards",
}


class PageError(Exception):
    """A request the page cannot answer: (HTTP status, what to tell the reader)."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass
class Reading:
    """What a Board and the summaries read: the server (games, templates, timeouts), the
    store and the time now."""

    server: object
    store: object
    now: datetime
    drawn: dict = field(default_factory=dict)  # boards drawn for this request (summary.py)

    @property
    def config(self):
        return self.server.config


def picture(game, state, last_move=None) -> str | None:
    """The board as a spectator sees it, as inline SVG; None for a game without a drawing."""
    return board_svg(game, state, None, last_move)


def index(reading) -> dict:
    """Every game with its running, finished and archived boards counted."""
    counts = reading.store.boards.listing_counts()
    empty = {"active": 0, "finished": 0, "archived": 0}
    games = [reading.server.games[name] for name in reading.server.games]
    return {
        "title": "Games",
        "games": [
            {"name": g.name, "display_name": g.display_name, **counts.get(g.name, empty)}
            for g in games
        ],
    }


def _paging(page: int, total: int, url: str) -> dict:
    last = max(1, -(-total // PAGE_SIZE))
    return {
        "page": page,
        "last": last,
        "total": total,
        "previous": f"{url}?page={page - 1}" if page > 1 else None,
        "next": f"{url}?page={page + 1}" if page < last else None,
    }


def board_line(reading, row) -> dict:
    """One row of a board table. A finished board's state line is its stored result, so
    its position needs no replay of the game (an archived board has no snapshot)."""
    store = reading.store
    game = reading.server.game_for_board(row.game)
    result = store.ratings.board_result(row.id) if row.status != "active" else None
    if result is None:
        position = Board(reading, row).position
    else:
        userids = store.boards.seat_userids(row.id)
        position = seats_after(game, None, userids, store.boards.plies(row.id))
    return {
        "game": game.display_name,
        "url": f"/{game.name}/{row.number}",
        "number": row.number,
        "players": list(position.holders),
        "state": state_line(row, position, result),
        "moves": position.plies_made,
        "last_move": show_time(row.last_move_at),
        "archived": row.archived_at is not None,
    }


def boards(reading, game, listing: str, page: int) -> dict:
    store = reading.store
    total = store.boards.count_listed(game.name, listing)
    rows = store.boards.listed(game.name, listing, (page - 1) * PAGE_SIZE, PAGE_SIZE)
    url = f"/{game.name}/" + ("" if listing == "active" else listing)
    return {
        "title": f"{game.display_name}: {LISTING_TITLES[listing]}",
        "game": game,
        "boards": [board_line(reading, row) for row in rows],
        "paging": _paging(page, total, url),
    }


def standings(reading, game) -> dict:
    return {
        "title": f"{game.display_name} Standings",
        "game": game,
        "tables": standings_tables(reading.store, game),
    }


def seeks(reading, game) -> dict:
    """The open seeks of a game (docs/spec/server.md §11.2)."""
    return {
        "title": f"{game.display_name}: Open seeks",
        "game": game,
        "seeks": seek_rows(reading, game),
    }


def player(reading, userid: str, page: int) -> dict:
    store = reading.store
    user = store.users.get(userid)
    if user is None:
        raise PageError(404, "There is no such player here.")
    games = reading.server.games
    ratings = [
        {
            "game": games[r.game].display_name,
            "game_name": r.game,
            **{k: getattr(r, k) for k in ("rating", "games", "won", "lost", "tied")},
        }
        for r in store.ratings.of_user(userid)
        if r.game in games
    ]
    lists = []
    for listing, title in (("active", "Active boards"), ("ended", "Finished boards")):
        total = store.boards.count_listed_of_user(userid, listing)
        rows = store.boards.listed_of_user(userid, listing, (page - 1) * PAGE_SIZE, PAGE_SIZE)
        rows = [row for row in rows if row.game in games]
        lists.append(
            {
                "title": title,
                "boards": [board_line(reading, row) for row in rows],
                "paging": _paging(page, total, f"/players/{userid}"),
            }
        )
    return {
        "title": f"Player {userid}",
        "userid": userid,
        "deleted": user.status != "active",
        "ratings": ratings,
        "lists": lists,
    }


def load_board(reading, game, number: int) -> Board:
    row = reading.store.boards.get(game.name, number)
    if row is None or row.status not in ("active", "finished"):
        raise PageError(404, f"{game.display_name} board {number} not found.")
    return Board(reading, row)


def board(reading, board, ply: int | None) -> dict:
    """The board page: after `ply` plies (all by default)."""
    game, row = board.game, board.row
    current = board.position
    made = current.plies_made
    if ply is not None and ply > made:
        raise PageError(
            400, f"Board {board.number} has {made} plies: ask for ?ply=0 up to ?ply={made}."
        )
    shown = made if ply is None else ply
    position = current
    if shown != made:
        position = replay(
            game, board.options, board.seat_userids, row.seed, board.plies, upto=shown
        )
    finished = not board.active
    result = board.result()
    drawing = picture(game, position.state, _last_move(game, position, finished))
    store = reading.store
    banks = board.banks() if board.clock is not None else None
    players = []
    for seat, userid in enumerate(current.holders):
        rating = store.ratings.get(game.name, userid)
        players.append(
            {
                "side": game.player_names[seat],
                "symbol": game.seat_symbols[seat] if game.seat_symbols else "",
                "userid": userid,
                "status": seat_status(current.statuses[seat], result, seat),
                "rating": rating.rating if rating is not None else None,
                "time_used": show_duration(current.time_used[seat]),
                "time_left": show_left(banks[seat]) if banks is not None else None,
            }
        )
    # The mover's bank after each ply, derived from the log (docs/spec/server.md §9.5).
    left = banks_by_ply(board.clock, current.seats, current.plies) if board.clock else None
    url = f"/{game.name}/{board.number}"
    moves = [
        {
            "number": p.ply,
            "side": game.player_names[p.seat],
            "userid": p.userid,
            "text": shown_text(game, p, None, finished, None),
            "url": f"{url}?ply={p.ply}",
            "shown": p.ply == shown,
            "left": f"{show_left(left[i])} left" if left is not None else "",
        }
        for i, p in enumerate(current.plies)
    ]
    comment = None
    if row.comment_text:
        comment = {"author": row.comment_author, "text": row.comment_text}
    return {
        "title": board.title_name,
        "game": game,
        "board": board,
        "url": url,
        "options_line": options_line(game, board.options, current.seats),
        "state_line": state_line(board, current, result),
        "reason": result.reason if result is not None else None,
        "rating_lines": reading.server.rating_lines(board, result) if result else [],
        "players": players,
        "clocked": banks is not None,
        "timing": timing_lines(board, current, reading.now, reading.server.timeout_defaults()),
        "shown": shown,
        "made": made,
        "start_url": f"{url}?ply=0",
        "previous_url": f"{url}?ply={shown - 1}" if shown > 0 else None,
        "next_url": f"{url}?ply={shown + 1}" if shown < made else None,
        "picture": drawing,
        "winning_cells": " ".join(game.winning_cells(position.state)),
        "text_board": game.render_board(position.state, None) if drawing is None else "",
        "moves": moves,
        "comment": comment,
        "has_picture": drawing is not None,
    }


def seat_status(status: str, result, seat: int) -> str:
    """A seat's line in the players' table: how the game went for it once it is over
    (won, lost, drew; `lost (resigned)`), else whether it still plays."""
    if result is None:
        return status
    scores = {s.seat: s.score for s in result.seats}
    if not any(score == 1 for score in scores.values()):
        outcome = "drew"
    else:
        outcome = "won" if scores.get(seat) == 1 else "lost"
    return outcome if status == PLAYING else f"{outcome} ({status})"


def _last_move(game, position, finished) -> str | None:
    """The last ply's move text for the picture to mark, unless it is hidden."""
    last = position.plies[-1] if position.plies else None
    if last is None or last.kind != "move" or (not game.visible_moves and not finished):
        return None
    return last.text


def board_file(reading, board, kind: str) -> str | None:
    """The board's record as `.json` or `.txt` (what `export` mails), or its picture."""
    if kind == "json":
        return record_json(board)
    if kind == "txt":
        return record_text(reading, board)
    position = board.position
    return picture(board.game, position.state, _last_move(board.game, position, not board.active))
