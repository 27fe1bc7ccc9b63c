"""The rules of a round-robin tournament as pure functions (docs/spec/server.md §11.9),
tried on random inputs: the split into divisions, the pairings, and the standings with
their tie-breaks."""

import itertools
from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from pbm.serveroptions import MAX_ENTRANTS, MAX_LARGEST, MIN_DIVISION
from pbm.tournaments import (
    Game,
    crosstable,
    division_sizes,
    pairings,
    split,
    standings,
    winners,
)
from tests.conftest import STRESS_FACTOR

EXAMPLES = 200 * STRESS_FACTOR


@settings(max_examples=EXAMPLES)
@given(st.integers(0, MAX_ENTRANTS), st.integers(MIN_DIVISION, MAX_LARGEST))
def test_divisions_differ_by_at_most_one_and_none_is_too_big_or_too_small(count, largest):
    sizes = division_sizes(count, largest)
    if sizes is None:
        # Called off: too few players, or no split into divisions of 3 to `largest` players
        # with sizes differing by at most one exists at all.
        assert count < MIN_DIVISION or not any(
            all(MIN_DIVISION <= size <= largest for size in (count // k, -(-count // k)))
            for k in range(1, count + 1)
        )
        return
    assert sum(sizes) == count
    assert max(sizes) - min(sizes) <= 1
    assert all(MIN_DIVISION <= size <= largest for size in sizes)
    assert sizes == sorted(sizes, reverse=True), "the strongest division first"
    # As few divisions as the largest size allows: one fewer would not fit.
    assert len(sizes) == 1 or count > largest * (len(sizes) - 1)


def test_eleven_players_with_a_largest_of_ten_make_six_and_five():
    assert division_sizes(11, 10) == [6, 5]
    assert division_sizes(7, 4) == [4, 3]
    assert division_sizes(2, 10) is None
    assert division_sizes(5, 4) is None  # 3 + 2 is no split, 5 passes the largest


@given(st.lists(st.text("abcdefgh", min_size=2, max_size=6), unique=True), st.integers(3, 8))
def test_the_split_keeps_every_player_once_in_rating_order(players, largest):
    divisions = split(players, largest)
    if divisions is None:
        assert division_sizes(len(players), largest) is None
        return
    assert [p for division in divisions for p in division] == players


@settings(max_examples=EXAMPLES)
@given(st.lists(st.integers(0, 10_000), min_size=2, max_size=MAX_LARGEST, unique=True))
def test_every_pair_plays_exactly_twice_once_with_each_colour(ids):
    players = [f"p{i}" for i in ids]
    boards = pairings(players)
    assert len(boards) == len(players) * (len(players) - 1)
    assert all(white != black for white, black in boards)
    assert Counter(boards) == {pair: 1 for pair in itertools.permutations(players, 2)}
    # So each player has as many first moves as second ones.
    whites = Counter(white for white, _ in boards)
    blacks = Counter(black for _, black in boards)
    assert whites == blacks == {p: len(players) - 1 for p in players}


RESULT = st.sampled_from([None, (1.0, 0.0), (0.0, 1.0), (0.5, 0.5)])


@settings(max_examples=EXAMPLES)
@given(st.integers(3, 8), st.data())
def test_standings_add_up_and_rank_by_points_then_sonneborn_berger_then_wins(size, data):
    players = [f"p{i}" for i in range(size)]
    games = []
    for number, (white, black) in enumerate(pairings(players), start=101):
        result = data.draw(RESULT)
        games.append(Game(number, white, black, *(result or (None, None))))
    table = standings(players, games)
    ended = [g for g in games if g.ended]
    assert sorted(s.userid for s in table) == sorted(players)
    assert sum(s.points for s in table) == len(ended)
    assert all(s.games == 2 * (size - 1) for s in table)
    points = {s.userid: s.points for s in table}
    for s in table:
        mine = [g for g in ended if s.userid in (g.white, g.black)]
        assert s.played == len(mine)
        assert s.won == sum(g.score_of(s.userid) == 1 for g in mine)
        assert s.sonneborn_berger == sum(
            g.score_of(s.userid) * points[g.opponent_of(s.userid)] for g in mine
        )
    keys = [(s.points, s.sonneborn_berger, s.won) for s in table]
    assert keys == sorted(keys, reverse=True)
    for s, key in zip(table, keys):
        assert s.rank == 1 + sum(other > key for other in keys)
    assert winners(table) == [s.userid for s in table if s.rank == 1]


def test_a_tie_on_points_goes_to_sonneborn_berger_then_to_games_won():
    # a beats b twice and loses twice to c; b beats c twice: all on 2 points, each with a
    # Sonneborn-Berger of 2 x 2 = 4 and 2 games won: they share the first place.
    games = [
        Game(1, "a", "b", 1, 0),
        Game(2, "b", "a", 0, 1),
        Game(3, "a", "c", 0, 1),
        Game(4, "c", "a", 1, 0),
        Game(5, "b", "c", 1, 0),
        Game(6, "c", "b", 0, 1),
    ]
    table = standings(["a", "b", "c"], games)
    assert [(s.userid, s.points, s.sonneborn_berger, s.rank) for s in table] == [
        ("a", 2, 4, 1),
        ("b", 2, 4, 1),
        ("c", 2, 4, 1),
    ]
    # e and f tie on points; e scored hers against f, the stronger: Sonneborn-Berger.
    games = [
        Game(1, "e", "f", 1, 0),
        Game(2, "f", "e", 0.5, 0.5),
        Game(3, "e", "g", 1, 0),
        Game(4, "g", "e", 1, 0),
        Game(5, "f", "g", 1, 0),
        Game(6, "g", "f", 0, 1),
    ]
    table = standings(["e", "f", "g"], games)
    assert [(s.userid, s.points, s.sonneborn_berger, s.rank) for s in table] == [
        ("e", 2.5, 1.5 * 2.5 + 1 * 1, 1),
        ("f", 2.5, 0.5 * 2.5 + 2 * 1, 2),
        ("g", 1, 1 * 2.5, 3),
    ]
    # Equal points and Sonneborn-Berger: games won break it (a win and a loss beat two
    # draws against the same players).
    games = [
        Game(1, "a", "x", 1, 0),
        Game(2, "x", "a", 1, 0),
        Game(3, "b", "x", 0.5, 0.5),
        Game(4, "x", "b", 0.5, 0.5),
    ]
    table = standings(["a", "b", "x"], games)
    by_user = {s.userid: s for s in table}
    assert by_user["a"].points == by_user["b"].points
    assert by_user["a"].sonneborn_berger == by_user["b"].sonneborn_berger
    assert by_user["a"].rank < by_user["b"].rank


def test_the_crosstable_puts_each_players_game_as_white_first():
    games = [Game(1, "a", "b", 1, 0), Game(2, "b", "a", None, None)]
    cells = crosstable(["a", "b"], games)
    assert cells[0][1] == [games[0], games[1]]
    assert cells[1][0] == [games[1], games[0]]
    assert cells[0][0] == cells[1][1] == []
