"""Open seeks that pair themselves (docs/spec/server.md §11.2): the matching invariant on
random seek sets, and scenarios by mail over a simulated calendar: two seeks that match,
two that do not, a seek that lapses, robots that answer, the list by mail and on the web."""

import json

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pbm.cli import cli
from pbm.seeking import Seeker, compatible, find_group
from pbm.store import Store
from pbm.web import make_app
from tests.bymail import flat, fresh, send
from tests.conftest import STRESS_FACTOR, Harness
from tests.test_web import Response

ALICE, BOB, CAROL = (f"{u}@example.org" for u in ("alice", "bob", "carol"))
WINDOWS = [None, (1500, 1700), (1650, 2000), (0, 9999)]


# -- the matching invariant ---------------------------------------------------------------

seekers = st.lists(
    st.builds(
        Seeker,
        userid=st.sampled_from([f"u{i}" for i in range(8)]),
        terms=st.sampled_from(["a", "b"]),
        rating=st.integers(1400, 1900),
        window=st.sampled_from(WINDOWS),
    ),
    max_size=10,
    unique_by=lambda s: s.userid,  # one open seek per user and game
)


@given(seekers, st.integers(2, 4), st.data())
def test_a_group_is_distinct_players_each_in_every_others_window(found, size, data):
    first = data.draw(st.sampled_from(found)) if found and data.draw(st.booleans()) else None
    group = find_group(found, size, first)
    if group is None:
        if size == 2:
            # For two seats the search is complete: nobody it skipped could have paired.
            starts = [first] if first is not None else found
            assert not any(compatible(a, b) for a in starts for b in found)
        return
    assert len(group) == size
    assert len({s.userid for s in group}) == size, "never a player with themselves"
    assert all(compatible(a, b) for a in group for b in group if a is not b)
    assert first is None or group[0] is first
    if size == 2:
        # The oldest compatible seek is the partner.
        partner = next(s for s in found if compatible(group[0], s))
        assert group[1] is partner


def counts(home, game="knightpanic") -> dict:
    store = Store.open(home / "pbm.db")
    try:
        rows = store.users.all_challenge_settings(game)
        boards = [store.boards.seat_userids(b.id) for b in store.boards.of_game(game)]
        terms = {u: store.seeks.get(game, u) for u in (r.userid for r in rows)}
        return {r.userid: r.seeking for r in rows}, boards, terms
    finally:
        store.close()


@settings(
    max_examples=6 * STRESS_FACTOR,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    st.lists(
        st.tuples(st.integers(1, 3), st.sampled_from(["", "-size=6"]), st.sampled_from(WINDOWS)),
        min_size=2,
        max_size=6,
    )
)
def test_random_seek_sets_by_mail_pair_completely_and_lose_no_seek(tmp_path_factory, seeks):
    h = Harness(tmp_path_factory.mktemp("seeks") / "home")
    users = [f"p{i}" for i in range(len(seeks))]
    h.signup(*users)
    for userid, (count, option, window) in zip(users, seeks):
        rating = f" --rating={window[0]}-{window[1]}" if window else ""
        result = send(
            h, f"{userid}@example.org", f"knightpanic seek {userid} secret {count} {option}{rating}"
        )
        assert result.ok, h.last_error_text(result)
    left, boards, terms = counts(h.home)
    for players in boards:
        assert len(set(players)) == 2, "never a player with themselves"
    for userid, (count, _, _) in zip(users, seeks):
        seated = sum(userid in players for players in boards)
        assert left[userid] + seated == count, "every seek pairs once or is still open"
    still = [
        Seeker(u, repr((terms[u].options, terms[u].server_options)), 1600, window)
        for u, (_, _, window) in zip(users, seeks)
        if left[u] > 0
    ]
    assert find_group(still, 2) is None, "no two open seeks that match are left unpaired"


# -- by mail ------------------------------------------------------------------------------


@pytest.fixture
def players(harness, clock):
    clock("2026-05-01T09:00:00")
    harness.signup("alice", "bob", "carol")
    harness.new_mails()
    return harness


def test_two_matching_seeks_start_a_board_at_once(players):
    h = players
    result = send(h, ALICE, "knightpanic seek alice secret 2 -size=6 --time=3d+24h")
    assert result.ok, h.last_error_text(result)
    [answer] = fresh(h)[ALICE]
    assert answer["Subject"] == "Now seeking 2 KnightPanic challenges"
    body = flat(answer)
    assert "Options: -size=6" in body and "--time=3d+24h" in body
    assert "Opponents of any rating" in body and "Open until 2026-05-08 09:00 UTC" in body
    result = send(h, BOB, "knightpanic seek bob secret 1 -size=6 --time=3d+24h")
    assert result.ok, h.last_error_text(result)
    mails = fresh(h)
    for address in (ALICE, BOB):
        new = [m for m in mails[address] if str(m["Subject"]).startswith("KnightPanic Board 101")]
        assert len(new) == 1, address
        assert "A new KnightPanic board (101) has been started." in flat(new[0])
        assert "Paired by open seeks." in flat(new[0])
    [answer] = [m for m in mails[BOB] if str(m["Subject"]).startswith("Now seeking")]
    assert answer["Subject"] == "Now seeking 0 KnightPanic challenges"
    assert "Started at once: 101" in flat(answer)
    left, boards, _ = counts(h.home)
    assert sorted(boards[0]) == ["alice", "bob"] and left == {"alice": 1, "bob": 0}
    store = Store.open(h.home / "pbm.db")
    try:
        row = store.boards.get("knightpanic", 101)
        assert json.loads(row.options)["size"] == 6
        assert row.clock_initial == 3 * 86400 and row.clock_increment == 86400
    finally:
        store.close()


def test_two_seeks_that_do_not_match_wait_and_are_listed(players):
    h = players
    assert send(h, ALICE, "knightpanic seek alice secret 1 -size=6").ok
    assert send(h, BOB, "knightpanic seek bob secret 1 -size=5").ok
    assert send(h, CAROL, "knightpanic seek carol secret 1 -size=6 --rating=1700-1900").ok
    left, boards, _ = counts(h.home)
    assert boards == [] and left == {"alice": 1, "bob": 1, "carol": 1}
    listing = h.ok("knightpanic seeks", sender=None).printed[0]
    assert listing.subject == "Open KnightPanic seeks"
    lines = listing.body.splitlines()
    assert "Player  Rating  Seeks  Ratings    Until       Terms" in lines
    assert "alice     1600      1  any        2026-05-08  -size=6" in lines
    assert "carol     1600      1  1700-1900  2026-05-08  -size=6" in lines
    page = Response(make_app(h.config), "/knightpanic/seeks").body.decode()
    assert "<td>1700-1900</td>" in page and "/players/bob" in page
    # A seek that matches alice's, from a player carol's window leaves out, pairs with alice.
    assert send(h, "carol@example.org", "knightpanic seek carol secret 0").ok
    assert "KnightPanic seeks withdrawn" in [m["Subject"] for m in fresh(h)[CAROL]]
    assert send(h, CAROL, "knightpanic seek carol secret 1 -size=6 --rating=1500-1700").ok
    left, boards, _ = counts(h.home)
    assert [sorted(b) for b in boards] == [["alice", "carol"]]


def test_a_seek_lapses_after_its_days(players, clock):
    h = players
    assert send(h, ALICE, "knightpanic seek alice secret 2 --days=3").ok
    fresh(h)
    clock("2026-05-04T08:59:00")
    h.ok("cleanup", sender=None)
    assert fresh(h) == {}
    clock("2026-05-04T09:00:00")
    # Lapsed, it pairs with nobody even before cleanup has dropped it.
    assert send(h, BOB, "knightpanic seek bob secret 1").ok
    assert counts(h.home)[1] == []
    h.ok("cleanup", sender=None)
    [mail] = fresh(h)[ALICE]
    assert mail["Subject"] == "KnightPanic seek lapsed for alice"
    assert 'To seek again, send "knightpanic seek alice <password> <N>"' in flat(mail)
    left, _, terms = counts(h.home)
    assert left["alice"] == 0 and terms["alice"] is None and left["bob"] == 1


def test_seek_words_and_their_refusals(players):
    h = players
    assert send(h, ALICE, "knightpanic seek alice secret 2 -size=6 --rating=1400-1800").ok
    assert send(h, ALICE, "knightpanic seek alice secret").ok
    [status] = fresh(h)[ALICE][-1:]
    assert status["Subject"] == "KnightPanic seek status"
    assert "Opponents rated 1400 to 1800" in flat(status)
    assert "from 0 to 99" in h.refused("knightpanic seek alice secret 100")
    assert "size must be" in h.refused("knightpanic seek alice secret 1 -size=12")
    assert "Give the number of boards you seek" in h.refused(
        "knightpanic seek alice secret -size=6"
    )
    assert "--rating must be LOW-HIGH" in h.refused("knightpanic seek alice secret 1 --rating=9-1")
    assert send(h, BOB, "knightpanic reject bob secret").ok
    assert 'send "knightpanic accept bob <password>" first' in h.refused(
        "knightpanic seek bob secret 1"
    )
    assert "takes no --days option" in h.refused("knightpanic challenge alice bob --days=3")


def test_without_pairing_seek_is_the_standings_count(players):
    h = players
    h.configure("[server]\nseek_pairing = off\n")
    assert send(h, ALICE, "knightpanic seek alice secret 1").ok
    assert send(h, BOB, "knightpanic seek bob secret 1").ok
    left, boards, _ = counts(h.home)
    assert boards == [] and left == {"alice": 1, "bob": 1}
    assert "do not pair themselves" in h.refused("knightpanic seek bob secret 1 -size=6")


def test_a_seeker_at_their_limit_waits_for_cleanup(players, clock):
    h = players
    assert send(h, ALICE, "knightpanic limit alice secret 1").ok
    assert send(h, ALICE, "knightpanic challenge alice carol").ok
    assert send(h, ALICE, "knightpanic seek alice secret 1").ok
    assert send(h, BOB, "knightpanic seek bob secret 1").ok
    assert len(counts(h.home)[1]) == 1, "alice is at her limit"
    assert send(h, CAROL, "knightpanic resign 101 carol secret").ok  # a withdrawal frees it
    clock("2026-05-01T10:00:00")
    h.ok("cleanup", sender=None)
    left, boards, _ = counts(h.home)
    assert sorted(boards[-1]) == ["alice", "bob"] and left["alice"] == left["bob"] == 0


def robot(harness, name, hours):
    runner = CliRunner()
    home = ["--home", str(harness.home)]
    result = runner.invoke(cli, [*home, "robots", "add", name, "knightpanic", "mcts"])
    assert result.exit_code == 0, result.output
    result = runner.invoke(cli, [*home, "robots", "seeks", name, hours])
    assert result.exit_code == 0, result.output
    return runner.invoke(cli, [*home, "robots", "list"]).output


def test_a_robot_answers_seeks_at_once_or_after_a_wait(players, clock):
    h = players
    assert "robo: knightpanic mcts, 10s a move, answers seeks after 24 hours" in robot(
        h, "robo", "24"
    )
    assert send(h, ALICE, "knightpanic seek alice secret 1 --rating=1500-1700").ok
    assert counts(h.home)[1] == [], "the robot waits 24 hours for a human to match"
    clock("2026-05-02T08:59:00")
    h.ok("cleanup", sender=None)
    assert counts(h.home)[1] == []
    clock("2026-05-02T09:00:00")
    h.ok("cleanup", sender=None)
    assert sorted(counts(h.home)[1][0]) == ["alice", "robo"]
    robot(h, "quick", "0")
    assert send(h, BOB, "knightpanic seek bob secret 1 -size=6").ok
    assert sorted(counts(h.home)[1][-1]) == ["bob", "quick"], "the nearest rating answers first"
    # A window the robots' ratings are outside of keeps them away.
    assert send(h, CAROL, "knightpanic seek carol secret 1 --rating=1000-1100").ok
    clock("2026-05-09T08:00:00")
    h.ok("cleanup", sender=None)
    assert not any("carol" in b for b in counts(h.home)[1])
    error = CliRunner().invoke(cli, ["--home", str(h.home), "robots", "seeks", "alice", "0"])
    assert '"alice" is not a robot' in error.output
    assert "other: knightpanic mcts, 10s a move\n" in robot(h, "other", "off")


def test_a_count_above_one_pairs_several_times_in_one_transaction(players):
    h = players
    assert send(h, ALICE, "knightpanic seek alice secret 1").ok
    assert send(h, BOB, "knightpanic seek bob secret 1").ok
    assert send(h, CAROL, "knightpanic seek carol secret 3").ok
    left, boards, _ = counts(h.home)
    assert [sorted(b) for b in boards] == [["alice", "bob"]] and left["carol"] == 3
    fresh(h)
    assert send(h, ALICE, "knightpanic seek alice secret 2").ok
    [answer] = [m for m in fresh(h)[ALICE] if str(m["Subject"]).startswith("Now seeking")]
    assert "Started at once: 102 (" in flat(answer) and ", 103 (" in flat(answer)
    assert send(h, BOB, "knightpanic seek bob secret 2").ok
    left, boards, _ = counts(h.home)
    assert left == {"alice": 0, "bob": 1, "carol": 0} and len(boards) == 4
    assert sum("carol" in b for b in boards) == 3


@pytest.mark.parametrize(
    "word, says",
    [("seek", "Open seeks pair you with other players"), ("seeks", "Lists who seeks boards")],
)
def test_help_for_each_seek_command(harness, word, says):
    mail = harness.ok(f"help {word}", sender=None).printed[0]
    assert says in " ".join(mail.body.split())
