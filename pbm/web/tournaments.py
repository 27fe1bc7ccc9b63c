"""The tournaments' pages of the web view (docs/spec/server.md §11.8, §11.9): the list, and
one tournament with its divisions' standings, crosstables (each result a link to its board)
and boards. Read only, derived from the boards' results as the mails are."""

from ..store import TournamentRecord
from ..tournaments import crosstable, result_mark, show_points
from ..tournamentviews import (
    NAME_RE,
    STATUS_WORDS,
    DivisionView,
    division_views,
    listing_rows,
    result_text,
    terms_lines,
)
from .pages import PageError

LISTED = ("open", "running", "finished", "called_off")


def index(reading) -> dict:
    records = reading.store.tournaments.listed(LISTED)
    rows = listing_rows(reading.store, records)
    return {
        "title": "Tournaments",
        "tournaments": [
            {
                "url": f"/tournaments/{row[0]}",
                "name": row[0],
                "game": _display_name(reading, record),
                "status": row[2],
                "players": row[3],
                "divisions": row[4],
                "start": row[5],
            }
            for record, row in zip(records, rows)
        ],
    }


def _display_name(reading, record: TournamentRecord) -> str:
    games = reading.server.games
    return games[record.game].display_name if record.game in games else record.game


def tournament(reading, name: str) -> dict:
    record = reading.store.tournaments.get(name) if NAME_RE.fullmatch(name) else None
    if record is None:
        raise PageError(404, "There is no such tournament here.")
    game = reading.server.game_for_board(record.game)
    views = division_views(reading.store, record)
    entrants = reading.store.tournaments.entrants(record.id) if not views else []
    return {
        "title": f"Tournament {record.name}",
        "record": record,
        "game": game,
        "status": STATUS_WORDS[record.status],
        "terms": terms_lines(reading, game, record),
        "entrants": [e.userid for e in entrants],
        "winners": [{"division": view.number, "userids": view.winners()} for view in views]
        if record.status == "finished"
        else [],
        "divisions": [_division(game, view) for view in views],
        "sides": game.player_names[:2],
    }


def _division(game, view: DivisionView) -> dict:
    order = view.order
    cells = crosstable(order, view.games)
    table = []
    for i, standing in enumerate(view.table):
        userid = standing.userid
        table.append(
            {
                "number": i + 1,
                "rank": standing.rank,
                "userid": userid,
                "rating": view.entrants[userid].rating,
                "points": show_points(standing.points),
                "sonneborn_berger": show_points(standing.sonneborn_berger),
                "won": standing.won,
                "played": f"{standing.played}/{standing.games}",
                "note": view.note(userid),
                "cells": [
                    [
                        {
                            "url": f"/{game.name}/{g.number}",
                            "mark": result_mark(g, userid).replace("=", "½"),
                            "title": f"Board {g.number}: {g.white} vs {g.black}",
                        }
                        for g in cells[i][j]
                    ]
                    if i != j
                    else None
                    for j in range(len(order))
                ],
            }
        )
    boards = [
        {
            "url": f"/{game.name}/{g.number}",
            "number": g.number,
            "white": g.white,
            "black": g.black,
            "result": result_text(g, view.reasons[g.number]),
        }
        for g in view.games
    ]
    return {"number": view.number, "table": table, "boards": boards}
