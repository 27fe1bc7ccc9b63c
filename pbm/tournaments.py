"""Round-robin tournaments as pure functions (docs/spec/server.md §11.9): the split into
divisions, the pairings of a division, and its standings with their tie-breaks. Nothing here
reads the database or sends mail, so each rule can be tried on random inputs; the standings
are always derived from the boards' results, never stored."""

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from .serveroptions import MIN_DIVISION


def division_sizes(count: int, largest: int) -> list[int] | None:
    """The sizes of the divisions of `count` players, strongest first: as few divisions as
    `largest` allows, their sizes differing by at most one (11 players, largest 10: 6 and
    5). None when there is no such split with every division of at least MIN_DIVISION
    players: more divisions would only be smaller, fewer would pass `largest`."""
    if count < MIN_DIVISION:
        return None
    divisions = -(-count // largest)
    small, extra = divmod(count, divisions)
    if small < MIN_DIVISION:
        return None
    return [small + 1] * extra + [small] * (divisions - extra)


def split(players: Sequence[str], largest: int) -> list[list[str]] | None:
    """The players, strongest first, cut into divisions of division_sizes (or None)."""
    sizes = division_sizes(len(players), largest)
    if sizes is None:
        return None
    divisions, start = [], 0
    for size in sizes:
        divisions.append(list(players[start : start + size]))
        start += size
    return divisions


def pairings(players: Sequence[str]) -> list[tuple[str, str]]:
    """(White, Black) of every board of a division: each pair plays twice, once with each
    colour."""
    boards = []
    for i, first in enumerate(players):
        for second in players[i + 1 :]:
            boards += [(first, second), (second, first)]
    return boards


@dataclass(frozen=True)
class Game:
    """One board of a division as the standings see it: its seats as paired, and once it has
    ended each player's score (1 a win, 1/2 a draw, 0 a loss)."""

    number: int
    white: str
    black: str
    white_score: float | None = None
    black_score: float | None = None

    @property
    def ended(self) -> bool:
        return self.white_score is not None

    def score_of(self, userid: str) -> float | None:
        return self.white_score if userid == self.white else self.black_score

    def opponent_of(self, userid: str) -> str:
        return self.black if userid == self.white else self.white


@dataclass(frozen=True)
class Standing:
    userid: str
    points: float
    sonneborn_berger: float
    won: int
    played: int  # games ended
    games: int  # games in all
    rank: int  # shared by players equal on points and both tie-breaks


def standings(players: Iterable[str], games: Iterable[Game]) -> list[Standing]:
    """The division's table: points (1 a win, 1/2 a draw), then Sonneborn-Berger (the sum,
    over the games, of the points scored in each times the opponent's points), then games
    won. Players equal on all three share a rank and stand in userid order."""
    games = list(games)
    points = {userid: 0.0 for userid in players}
    won = dict.fromkeys(points, 0)
    played = dict.fromkeys(points, 0)
    total = dict.fromkeys(points, 0)
    for game in games:
        for userid in (game.white, game.black):
            total[userid] += 1
            score = game.score_of(userid)
            if score is not None:
                points[userid] += score
                played[userid] += 1
                won[userid] += score == 1
    berger = dict.fromkeys(points, 0.0)
    for game in games:
        for userid in (game.white, game.black) if game.ended else ():
            berger[userid] += (game.score_of(userid) or 0.0) * points[game.opponent_of(userid)]

    def key(userid: str) -> tuple[float, float, int]:
        return (points[userid], berger[userid], won[userid])

    order = sorted(points, key=lambda u: (tuple(-k for k in key(u)), u))
    table = []
    for userid in order:
        ahead = sum(1 for other in points if key(other) > key(userid))
        table.append(
            Standing(
                userid,
                points[userid],
                berger[userid],
                won[userid],
                played[userid],
                total[userid],
                ahead + 1,
            )
        )
    return table


def winners(table: Sequence[Standing]) -> list[str]:
    """Who ranks first in a division's final table (more than one only when all three
    measures tie)."""
    return [s.userid for s in table if s.rank == 1]


def crosstable(order: Sequence[str], games: Iterable[Game]) -> list[list[list[Game]]]:
    """For players in `order`, cell [i][j] holds the games of order[i] against order[j],
    the one where order[i] is White first."""
    index = {userid: i for i, userid in enumerate(order)}
    cells: list[list[list[Game]]] = [[[] for _ in order] for _ in order]
    for game in games:
        white, black = index[game.white], index[game.black]
        cells[white][black].insert(0, game)
        cells[black][white].append(game)
    return cells


def show_points(value: float) -> str:
    """4, 4.5, 12.25: points and Sonneborn-Berger without needless decimals."""
    return f"{value:g}"


def result_mark(game: Game, userid: str) -> str:
    """What a player scored in one game, as a crosstable cell shows it: 1, = (a draw), 0,
    or . while it is being played."""
    score = game.score_of(userid)
    if score is None:
        return "."
    return {1.0: "1", 0.5: "="}.get(score, "0")
