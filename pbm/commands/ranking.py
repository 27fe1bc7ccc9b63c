"""Standings and history (docs/spec/server.md §8.3, §8.4)."""

from ..clock import show_time
from ..grammar import command
from ..ratings import PROVISIONAL_GAMES, START_RATING
from ..store import ChallengeSettingsRecord, RatingRecord
from ..summary import text_table

SECTIONS = (
    ("Established", lambda p: not p["provisional"] and not p["inactive"]),
    ("Provisionals", lambda p: p["provisional"] and not p["inactive"]),
    ("Inactive (established)", lambda p: not p["provisional"] and p["inactive"]),
    ("Inactive (provisional)", lambda p: p["provisional"] and p["inactive"]),
    ("Established & Provisionals", lambda p: True),
)


def _players(store, game):
    ratings = {r.userid: r for r in store.ratings.of_game(game.name)}
    settings = {s.userid: s for s in store.users.all_challenge_settings(game.name)}
    players = []
    for userid in store.ratings.standings_userids(game.name):
        rating = ratings.get(userid) or RatingRecord(game.name, userid, START_RATING, 0, 0, 0, 0)
        setting = settings.get(userid) or ChallengeSettingsRecord(game.name, userid, None, 0, 0)
        active = str(store.boards.count_active(game.name, userid))
        if setting.max_active == 0:
            active += "/reject"
        elif setting.max_active is not None:
            active += f"/{setting.max_active}"
        else:
            active += "/-"
        players.append(
            {
                "userid": userid,
                **{k: getattr(rating, k) for k in ("rating", "games", "won", "lost", "tied")},
                "provisional": rating.games < PROVISIONAL_GAMES,
                "inactive": bool(setting.inactive),
                "active": active,
                "seeking": setting.seeking or "",
            }
        )
    players.sort(key=lambda p: (-p["rating"], -p["games"], p["userid"]))
    return players


def _columns(players, flagged: bool):
    """(header, rows, positions of the number columns) of one standings table."""
    ties = any(p["tied"] for p in players)
    header = [
        "Rank",
        *(["Flag"] if flagged else []),
        "Name",
        "Rating",
        "Won",
        "Lost",
        *(["Ties"] if ties else []),
        "Active/Limit",
        "Seeking",
    ]
    rows = []
    for rank, p in enumerate(players, start=1):
        flag = "I" if p["inactive"] else "P" if p["provisional"] else "E"
        rows.append(
            [
                rank,
                *([flag] if flagged else []),
                p["userid"],
                p["rating"],
                p["won"],
                p["lost"],
                *([p["tied"]] if ties else []),
                p["active"],
                p["seeking"],
            ]
        )
    numbers = {
        i
        for i, name in enumerate(header)
        if name in ("Rank", "Rating", "Won", "Lost", "Ties", "Seeking")
    }
    return header, rows, numbers


def standings_tables(store, game) -> list[tuple[str, list, list, set]]:
    """(title, header, rows, number columns) of each standings section with players: the
    mail's tables and the web view's (docs/spec/server.md §8.3, §11.8)."""
    players = _players(store, game)
    tables = []
    for title, belongs in SECTIONS:
        chosen = [p for p in players if belongs(p)]
        if chosen:
            tables.append((title, *_columns(chosen, flagged=title.startswith("Established &"))))
    return tables


@command("standings", "game", "{game} standings", aliases=("ratings",), max_args=0)
def standings(ctx):
    """Mails the game's rating list: established players, provisionals, inactive players."""
    game = ctx.game
    sections = [
        (title, text_table(header, rows, right=numbers))
        for title, header, rows, numbers in standings_tables(ctx.store, game)
    ]
    body = ctx.render("mail/standings.txt", game=game, sections=sections)
    ctx.reply(f"{game.display_name} Standings", body, kind="list")


@command("history", "game", "{game} history [userid...]")
def history(ctx):
    """Mails one line per rated game: date, board, winner, points and players."""
    game = ctx.game
    wanted = {u.lower() for u in ctx.args}
    for userid in wanted:
        ctx.require_user(userid)
    rows = []
    for result in ctx.store.ratings.results(game.name, rated_only=True):
        userids = [s.userid for s in result.seats]
        if wanted and not wanted & set(userids):
            continue
        winners = [s.userid for s in result.seats if s.score == 1]
        outcome = "&".join(dict.fromkeys(winners)) + " won" if winners else "TIE"
        rows.append(
            [
                show_time(result.finished_at).removesuffix(" UTC"),
                result.number,
                outcome,
                result.points,
                " ".join(userids),
            ]
        )
    header = ["Finished (UTC)", "Board", "Result", "Points", "Players"]
    lines = text_table(header, rows, right={1, 3}) if rows else []
    body = ctx.render("mail/history.txt", game=game, lines=lines)
    ctx.reply(f"Historical List of {game.display_name} games", body, kind="list")
