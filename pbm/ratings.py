"""Elo ratings per game type, derived from the append-only results table
(docs/spec/server.md §8)."""

import math

from .store import RatingRecord

START_RATING = 1600
PROVISIONAL_GAMES = 20
K_FACTOR = 32


def round_half_up(value: float) -> int:
    return math.floor(value + 0.5)


def _current(store, game, userid) -> RatingRecord:
    return store.ratings.get(game, userid) or RatingRecord(game, userid, START_RATING, 0, 0, 0, 0)


def current_rating(store, game: str, userid: str) -> int:
    """A player's rating in a game, the starting one before their first rated result."""
    return _current(store, game, userid).rating


def updated_rating(
    rating: int, games: int, score: float, opponent_rating: float, opponent_games: float
) -> int:
    """One player's new rating after one result, from pre-game values."""
    opponent_provisional = opponent_games < PROVISIONAL_GAMES
    if games < PROVISIONAL_GAMES:
        if opponent_provisional:
            performance = (rating + opponent_rating) / 2 + 200 * (2 * score - 1)
        else:
            performance = opponent_rating + 400 * (2 * score - 1)
        return round_half_up((rating * (games + 1) + performance) / (games + 2))
    expected = 1 / (1 + 10 ** ((opponent_rating - rating) / 400))
    k = K_FACTOR * (opponent_games / PROVISIONAL_GAMES if opponent_provisional else 1)
    return round_half_up(rating + k * (score - expected))


def apply_result(store, result_id: int, game: str, seats) -> None:
    """Update ratings for one rated result; seats are (userid, score) in seat order."""
    scores: dict[str, list[float]] = {}
    for userid, score in seats:
        scores.setdefault(userid, []).append(score)
    if len(scores) < 2:
        return
    before = {userid: _current(store, game, userid) for userid in scores}
    for userid, own in scores.items():
        others = [before[u] for u in scores if u != userid]
        opponent_rating = sum(o.rating for o in others) / len(others)
        opponent_games = sum(o.games for o in others) / len(others)
        score = sum(own) / len(own)
        mine = before[userid]
        new = updated_rating(mine.rating, mine.games, score, opponent_rating, opponent_games)
        games = mine.games + 1
        store.ratings.save(
            game,
            userid,
            new,
            games,
            mine.won + (score == 1),
            mine.lost + (score == 0),
            mine.tied + (0 < score < 1),
        )
        store.ratings.add_change(result_id, userid, mine.rating, new, games < PROVISIONAL_GAMES)


def rebuild(store, games) -> int:
    """Clear the derived tables and replay every rated result in order; results replayed."""
    store.ratings.clear(games)
    count = 0
    for game in games:
        for result in store.ratings.results(game, rated_only=True):
            apply_result(store, result.id, game, [(s.userid, s.score) for s in result.seats])
            count += 1
    return count


def rating_lines(store, result) -> list[str]:
    """The lines of an end-of-game mail that tell each player their new rating."""
    if not result.rated:
        return ["This game was not rated."]
    lines = []
    changes = {c.userid: c for c in store.ratings.changes(result.id)}
    for userid in dict.fromkeys(s.userid for s in result.seats):
        change = changes.get(userid)
        if change is None:
            continue
        before, after = change.before, change.after
        mark = " (provisional)" if change.provisional else ""
        if after > before:
            lines.append(f"{userid}'s rating went up from {before} to {after}{mark}.")
        elif after < before:
            lines.append(f"{userid}'s rating went down from {before} to {after}{mark}.")
        else:
            lines.append(f"{userid}'s rating stays at {before}{mark}.")
    return lines or ["This game was not rated."]
