"""Ratings, standings and history (docs/spec/server.md §8)."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pbm.ratings import apply_result, rebuild, round_half_up, updated_rating
from pbm.store import Store
from tests.conftest import body_of


def test_round_half_up():
    assert [round_half_up(x) for x in (1500.5, 1499.49, -0.5, 2.5)] == [1501, 1499, 0, 3]


@pytest.mark.parametrize(
    "rating,games,score,opponent,opponent_games,expected",
    [
        (1600, 0, 1, 1600, 0, 1700),  # both new: performance 1800, averaged with the start
        (1600, 0, 0, 1600, 0, 1500),
        (1600, 5, 1, 1800, 25, 1686),  # provisional beats established: (1600*6 + 2200) / 7
        (1600, 5, 0.5, 1800, 25, 1629),  # (1600*6 + 1800) / 7 = 1628.57
        (1700, 30, 1, 1500, 25, 1708),  # established: 1700 + 32 * (1 - 0.7597)
        (1500, 25, 0, 1700, 30, 1492),
        (1700, 30, 1, 1500, 10, 1704),  # K scaled by 10/20 against a provisional opponent
        (1700, 30, 0.5, 1700, 40, 1700),
    ],
)
def test_elo_updates(rating, games, score, opponent, opponent_games, expected):
    assert updated_rating(rating, games, score, opponent, opponent_games) == expected


def win(harness, number, winner, loser):
    """A quick decided board: the loser resigns on turn after one move each."""
    harness.challenge(f"knightpanic challenge {winner} {loser}")
    harness.ok(f"knightpanic move {number} {winner} secret c1-e5")
    harness.ok(f"knightpanic move {number} {loser} secret g7-e3")
    harness.ok(f"knightpanic move {number} {winner} secret a1-c5")
    harness.ok(f"knightpanic resign {number} {loser} secret")


@pytest.fixture
def league(harness):
    harness.signup("alice", "bob", "carol", "dave")
    win(harness, 101, "alice", "bob")
    win(harness, 102, "alice", "bob")
    harness.challenge("knightpanic challenge carol alice")
    harness.ok("knightpanic move 103 carol secret c1-e5")
    harness.ok("knightpanic move 103 alice secret g7-e3")
    harness.ok("knightpanic propose 103 carol secret")
    harness.ok("knightpanic accept 103 alice secret")
    harness.challenge("knightpanic challenge dave alice")
    harness.ok("knightpanic resign 104 dave secret")  # declined: not rated
    harness.ok("knightpanic challenge alice alice", sender=None)
    harness.ok("knightpanic move 105 alice secret c1-e5")
    harness.ok("knightpanic move 105 alice secret a7-c3")  # one player: not rated
    harness.challenge("tally challenge alice bob -handicap=3")
    harness.ok("tally move 101 alice secret 2")
    harness.ok("tally move 101 bob secret 2")
    harness.ok("tally move 101 alice secret 2")  # 3+2+2+2 = 9 ... not yet
    harness.ok("tally move 101 bob secret 2")  # 11: bob wins a handicap game: not rated
    harness.new_mails()
    return harness


def test_rating_lines_in_end_of_game_mails(harness):
    harness.signup("alice", "bob")
    win(harness, 101, "alice", "bob")
    body = body_of(harness.mails("bob@example.org")[-1])
    assert "alice's rating went up from 1600 to 1700 (provisional)." in body
    assert "bob's rating went down from 1600 to 1500 (provisional)." in body


def test_unrated_games_say_so(league):
    text = league.ok("tally show 101", sender=None).printed[0].body
    assert "Game won by bob." in text and "This game was not rated." in text
    text = league.ok("knightpanic show 105", sender=None).printed[0].body
    assert "This game was not rated." in text


def test_standings_sections_and_columns(league):
    league.ok("knightpanic limit carol secret 3")
    league.ok("knightpanic seek carol secret 2")
    league.ok("knightpanic reject bob secret")
    text = league.ok("knightpanic standings", sender=None).printed[0].body
    lines = text.split("\n")
    assert lines[0] == "KnightPanic Standings"
    assert max(len(line) for line in lines) <= 76  # issue 16: no header wraps
    rating = {u: line.split()[2] for line in lines[4:7] for u in [line.split()[1]]}
    assert lines[2:20] == [
        "Provisionals",
        "Rank  Name   Rating  Won  Lost  Ties  Active/Limit  Seeking",
        f"   1  alice    {rating['alice']}    2     0     1  0/-",
        f"   2  carol    {rating['carol']}    0     0     1  0/3           2",
        f"   3  bob      {rating['bob']}    0     2     0  0/reject",
        "",
        "Inactive (provisional)",
        "Rank  Name  Rating  Won  Lost  Active/Limit  Seeking",
        "   1  dave    1600    0     0  0/-",
        "",
        "Established & Provisionals",
        "Rank  Flag  Name   Rating  Won  Lost  Ties  Active/Limit  Seeking",
        f"   1  P     alice    {rating['alice']}    2     0     1  0/-",
        f"   2  P     carol    {rating['carol']}    0     0     1  0/3           2",
        "   3  I     dave     1600    0     0     0  0/-",
        f"   4  P     bob      {rating['bob']}    0     2     0  0/reject",
        "",
        "Flag: E established, P provisional, I inactive.",
    ]
    ratings = [int(rating[u]) for u in ("alice", "carol", "bob")]
    assert ratings == sorted(ratings, reverse=True)


def test_a_standings_table_of_long_userids_fits_in_76_columns(harness):
    harness.signup("abcdefghijklmnop", "qrstuvwxyzabcdef")
    harness.challenge("tally challenge abcdefghijklmnop qrstuvwxyzabcdef")
    harness.ok("tally limit abcdefghijklmnop secret 10")
    harness.ok("tally seek abcdefghijklmnop secret 3")
    text = harness.ok("tally standings", sender=None).printed[0].body
    lines = text.split("\n")
    header = "Rank  Flag  Name              Rating  Won  Lost  Active/Limit  Seeking"
    assert header in lines and max(len(line) for line in lines) <= 76


def test_history_lists_rated_games(league):
    text = league.ok("knightpanic history", sender=None).printed[0].body
    lines = [line for line in text.split("\n")[2:] if line]
    assert len(lines) == 4
    assert lines[0] == "Finished (UTC)    Board  Result     Points  Players"
    assert lines[1].endswith("    101  alice won       1  alice bob")
    assert lines[3].endswith("    103  TIE             1  carol alice")
    assert lines[1][:4].isdigit() and len(lines[1].split("  ")[0]) == len("2026-01-01 12:00")
    only_carol = league.ok("knightpanic history carol", sender=None).printed[0].body
    assert [line for line in only_carol.split("\n")[2:] if line][1].endswith(
        "    103  TIE          1  carol alice"
    )


def test_rebuild_reproduces_the_ratings(league):
    store = Store.open(league.home / "pbm.db")
    before = store._rows("SELECT * FROM ratings ORDER BY game, userid")
    changes = store._rows("SELECT * FROM rating_changes ORDER BY result_id, userid")
    from click.testing import CliRunner

    from pbm.cli import cli

    result = CliRunner().invoke(cli, ["--home", str(league.home), "ratings-rebuild"])
    assert result.exit_code == 0 and "3 rated results replayed" in result.output
    assert store._rows("SELECT * FROM ratings ORDER BY game, userid") == before
    assert store._rows("SELECT * FROM rating_changes ORDER BY result_id, userid") == changes


@settings(max_examples=25, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.lists(st.sampled_from(["ann", "ben", "cat", "dan", "eve"]), min_size=2, max_size=3),
            st.sampled_from(["first", "second", "tie", "last"]),
        ),
        min_size=1,
        max_size=45,
    )
)
def test_rebuild_equals_incremental_ratings(tmp_path_factory, results):
    from pbm.cli import migrate_home
    from pbm.config import Config

    home = tmp_path_factory.mktemp("ratings")
    migrate_home(Config.load(home))
    store = Store.open(home / "pbm.db")
    with store.write():
        for userid in ["ann", "ben", "cat", "dan", "eve"]:
            store.users.create(userid, "x", [f"{userid}@x.org"], "2026-01-01T00:00:00Z")
        for number, (players, winner) in enumerate(results, start=101):
            board_id = store.boards.create(
                game="tally",
                number=number,
                options={},
                seed=1,
                nag_days=7,
                forfeit_days=21,
                total_days=0,
                created_at="2026-01-01T00:00:00Z",
                userids=players,
                rated=True,
            )
            if winner == "tie":
                scores = [0.5] * len(players)
            else:
                index = {"first": 0, "second": 1, "last": len(players) - 1}[winner]
                scores = [1.0 if i == index else 0.0 for i in range(len(players))]
            seats = list(zip(players, scores))
            result_id = store.ratings.add_result(
                game="tally",
                board_id=board_id,
                finished_at="2026-01-02T00:00:00Z",
                rated=True,
                points=1,
                reason="",
                scores=seats,
            )
            apply_result(store, result_id, "tally", seats)
        incremental = store._rows("SELECT * FROM ratings ORDER BY userid")
        changes = store._rows("SELECT * FROM rating_changes ORDER BY result_id, userid")
        rebuild(store, ["tally"])
        assert store._rows("SELECT * FROM ratings ORDER BY userid") == incremental
        assert store._rows("SELECT * FROM rating_changes ORDER BY result_id, userid") == changes
        for row in incremental:
            assert row["won"] + row["lost"] + row["tied"] == row["games"]
