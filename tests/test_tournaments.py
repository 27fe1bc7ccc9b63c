"""Tournament commands (docs/spec/server.md §11.9) by mail and on the command line: creating
(by the operator, and by a player where pbm.ini allows), joining and leaving before the
start, the start at a date with divisions sorted by rating, calling off, robots the operator
enters, and what `list`, `show` and `help` say."""

import pytest
from click.testing import CliRunner

from pbm.cli import cli
from pbm.store import Store
from tests.bymail import flat, fresh, send, text

ADDRESS = {u: f"{u}@example.org" for u in ("ann", "ben", "cat", "dan", "eve", "fay", "gus")}
NOW = "2026-05-01T10:00:00"


@pytest.fixture
def players(harness, clock):
    clock(NOW)
    harness.signup(*ADDRESS)
    harness.new_mails()
    return harness


def operator(h, words):
    result = h.run(words, sender=None)
    return result, "\n".join(m.body for m in result.printed)


def ok(h, userid, subject):
    result = send(h, ADDRESS[userid], subject)
    assert result.ok, h.last_error_text(result)
    return result


def refused(h, userid, subject):
    result = send(h, ADDRESS[userid], subject)
    assert not result.ok, f"{subject!r} was carried out"
    return " ".join(h.last_error_text(result).split())


def store_of(h):
    return Store.open(h.home / "pbm.db")


def tournament(h, name):
    store = store_of(h)
    try:
        record = store.tournaments.get(name)
        return record, [e.userid for e in store.tournaments.entrants(record.id)]
    finally:
        store.close()


def test_the_operator_creates_one_on_the_command_line(players):
    runner = CliRunner()
    home = str(players.home)
    result = runner.invoke(
        cli,
        ["--home", home, "tournament", "create", "Spring", "tally", "-target=3", "--players=4"],
    )
    assert result.exit_code == 0, result.output
    assert "Tournament spring is open for entries." in result.output
    assert "Options: -target=3" in result.output
    assert "Divisions of at most 10 players, sorted by rating." in result.output
    assert "It starts as soon as 4 players have joined." in result.output
    help_text = runner.invoke(cli, ["--home", home, "tournament", "create", "--help"]).output
    assert "--largest=N" in help_text and "--start=YYYY-MM-DD" in help_text
    # The other words after `pbm tournament` are the grammar's, as the operator.
    listed = runner.invoke(cli, ["--home", home, "tournament", "list"])
    assert listed.exit_code == 0
    assert "spring  tally  open for entries        0" in listed.output
    shown = runner.invoke(cli, ["--home", home, "tournament", "show", "spring"])
    assert "Tournament spring: open for entries." in shown.output
    assert "Nobody yet." in shown.output
    unknown = runner.invoke(cli, ["--home", home, "tournament", "show", "sprig"])
    assert unknown.exit_code == 1
    assert 'No tournament "sprig". Did you mean "spring"?' in unknown.output


def test_a_player_creates_one_by_mail_only_where_pbm_ini_allows(players):
    h = players
    error = refused(h, "ann", "tournament create spring tally ann secret --players=3")
    assert "On this server tournaments are created by the operator" in error
    fresh(h)
    h.configure("[server]\nplayer_tournaments = on\n")
    ok(h, "ann", "tournament create spring tally ann secret --players=3 -target=3")
    [mail] = fresh(h)[ADDRESS["ann"]]
    assert mail["Subject"] == "Tournament spring created"
    assert "You have joined it." in flat(mail)
    assert "Created by ann." in flat(mail)
    record, entrants = tournament(h, "spring")
    assert record.creator == "ann" and entrants == ["ann"]
    error = refused(h, "ann", "tournament create autumn tally ann secret --players=3")
    assert "You have made a tournament that is still open for entries" in error
    # Without a password it is the operator's form: a player gets the syntax.
    error = refused(h, "ben", "tournament create autumn tally --players=3")
    assert 'Syntax is "tournament create name game [userid password]' in error


def test_every_problem_of_a_creation_is_listed_at_once(players):
    h = players
    result, text_ = operator(h, "tournament create spring tally -target=x --start=2026-04-01")
    assert not result.ok
    assert result.printed[0].subject == "Invalid tournament"
    assert "Invalid Tally parameter" in text_
    assert "--start must be later than now (2026-05-01 10:00 UTC)" in text_
    result, text_ = operator(h, "tournament create x1 tally --players=5 --largest=4")
    assert "5 players cannot be split into divisions of 3 to 4 players" in text_
    result, text_ = operator(h, "tournament create 9lives tally")
    assert "Tournament names are 2 to 16 characters" in text_
    assert "Say when it starts: --start=YYYY-MM-DD" in text_
    result, text_ = operator(h, "tournament create spring talley --players=3")
    assert 'Unknown game "talley". Did you mean "tally"?' in text_
    assert operator(h, "tournament create spring tally --players=3")[0].ok
    result, text_ = operator(h, "tournament create spring tally --players=3")
    assert 'Tournament "spring" already exists' in text_
    # The grammar checks the tournament's own options, and gives them to no other command.
    for words, message in (
        ("tournament create x1 tally --largest=2", "--largest must be between 3 and 20"),
        ("tournament create x1 tally --players=101", "--players must be between 3 and 100"),
        ("tournament create x1 tally --start=2026-13-01", "--start must be a date"),
        ("tally seek ann secret 1 --largest=4", "The seek command takes no --largest option"),
        ("tournament join spring ann secret -target=3", "The tournament command takes no"),
    ):
        assert message in operator(h, words)[1], words


def test_joining_and_leaving_before_the_start(players):
    h = players
    assert operator(h, "tournament create spring tally --players=5")[0].ok
    ok(h, "ann", "tournament join spring ann secret")
    [mail] = fresh(h)[ADDRESS["ann"]]
    assert mail["Subject"] == "Tournament spring: ann joined"
    assert "ann has joined tournament spring; 1 player has joined so far." in flat(mail)
    assert 'send "tournament leave spring ann <password>"' in flat(mail)
    assert "already joined" in refused(h, "ann", "tournament join spring ann secret")
    assert "Invalid password" in refused(h, "ben", "tournament join spring ben wrong")
    ok(h, "ben", "tournament join Spring ben secret")
    ok(h, "ann", "tournament leave spring ann secret")
    assert "ann has left tournament spring, before its start." in flat(fresh(h)[ADDRESS["ann"]][-1])
    assert "ann is not in tournament spring" in refused(
        h, "ann", "tournament leave spring ann secret"
    )
    assert tournament(h, "spring")[1] == ["ben"]
    assert 'No tournament "sprung". Did you mean "spring"?' in refused(
        h, "ann", "tournament join sprung ann secret"
    )


def play_rated_wins(h, winner, loser, count):
    """Rated Tally boards that `winner` wins at once (-target=1), for ratings to differ."""
    for _ in range(count):
        result = h.run(f"tally challenge {winner} {loser} -target=1", sender=None)
        number = int(result.queued[0][1].subject.split()[2].rstrip(":"))
        ok(h, winner, f"tally move {number} {winner} secret 1")


def test_at_its_date_cleanup_starts_it_in_divisions_sorted_by_rating(players, clock):
    h = players
    play_rated_wins(h, "gus", "ann", 3)  # gus rises, ann falls
    play_rated_wins(h, "fay", "ben", 1)
    assert operator(h, "tournament create spring tally --start=2026-05-02 --largest=4 --time=5d")[
        0
    ].ok
    for userid in ("ann", "ben", "cat", "dan", "eve", "fay"):
        ok(h, userid, f"tournament join spring {userid} secret")
    fresh(h)
    clock("2026-05-01T23:00:00")
    h.ok("cleanup", sender=None)
    assert tournament(h, "spring")[0].status == "open", "not before its time"
    ok(h, "gus", "tournament join spring gus secret")
    clock("2026-05-02T00:30:00")
    fresh(h)
    h.ok("cleanup", sender=None)
    record, _ = tournament(h, "spring")
    assert record.status == "running" and record.started_at == "2026-05-02T00:30:00Z"
    store = store_of(h)
    try:
        placed = {e.userid: (e.division, e.rating) for e in store.tournaments.entrants(record.id)}
        boards = store.tournaments.boards(record.id)
    finally:
        store.close()
    ratings = {u: r for u, (_, r) in placed.items()}
    assert ratings["gus"] > ratings["fay"] > 1600 > ratings["ben"] > ratings["ann"]
    # Strongest first; equal ratings (cat, dan, eve) in the order they joined.
    assert {u: d for u, (d, _) in placed.items()} == {
        "gus": 1,
        "fay": 1,
        "cat": 1,
        "dan": 1,
        "eve": 2,
        "ben": 2,
        "ann": 2,
    }
    assert [(b.division, b.white, b.black) for b in boards[:2]] == [
        (1, "gus", "fay"),
        (1, "fay", "gus"),
    ]
    assert len(boards) == 12 + 6
    mails = fresh(h)
    for userid in ADDRESS:
        [mail] = mails[ADDRESS[userid]]
        assert mail["Subject"] == "Tournament spring has started: your boards"
    assert "division 2 of 2" in flat(mails[ADDRESS["ann"]][0])
    # The selector `tournament` picks the boards of tournaments (docs/spec/server.md §3.3.1).
    listed = operator(h, "tally games ann tournament")[1]
    assert [line.split()[0] for line in listed.split("\n") if line[:5].strip().isdigit()] == [
        "119",
        "120",
        "121",
        "122",
    ]
    assert "  101  " in operator(h, "tally games ann")[1]


def test_an_unsplittable_or_too_small_field_is_called_off_and_everyone_told(players, clock):
    h = players
    assert operator(h, "tournament create tiny tally --start=2026-05-02")[0].ok
    assert operator(h, "tournament create odd tally --start=2026-05-02 --largest=4")[0].ok
    for userid in ("ann", "ben"):
        ok(h, userid, f"tournament join tiny {userid} secret")
    for userid in ("ann", "ben", "cat", "dan", "eve"):
        ok(h, userid, f"tournament join odd {userid} secret")
    fresh(h)
    clock("2026-05-02T06:00:00")
    h.ok("cleanup", sender=None)
    mails = fresh(h)
    for userid in ("ann", "ben"):
        [mail] = [m for m in mails[ADDRESS[userid]] if "tiny" in m["Subject"]]
        assert mail["Subject"] == "Tournament tiny called off"
        assert "2 players joined, and a division needs at least 3" in flat(mail)
    for userid in ("ann", "ben", "cat", "dan", "eve"):
        [mail] = [m for m in mails[ADDRESS[userid]] if "odd" in m["Subject"]]
        assert (
            "its 5 players cannot be split into divisions of 3 to 4 players whose sizes "
            "differ by at most one" in flat(mail)
        )
    assert tournament(h, "tiny")[0].status == "called_off"
    assert "Tournament odd is over: it was called off" in refused(
        h, "fay", "tournament join odd fay secret"
    )
    store = store_of(h)
    try:
        assert store.boards.all() == [], "no board started"
    finally:
        store.close()


def test_an_entrant_whose_account_was_deleted_is_left_out_at_the_start(players, clock):
    """docs/spec/server.md §11.9: players whose accounts were deleted meanwhile are left
    out of the divisions."""
    h = players
    assert operator(h, "tournament create gone tally --start=2026-05-02")[0].ok
    for userid in ("ann", "ben", "cat", "dan"):
        ok(h, userid, f"tournament join gone {userid} secret")
    ok(h, "dan", "signoff dan secret")
    clock("2026-05-02T06:00:00")
    h.ok("cleanup", sender=None)
    record, entrants = tournament(h, "gone")
    assert record.status == "running"
    assert sorted(entrants) == ["ann", "ben", "cat"]
    store = store_of(h)
    try:
        seated = {u for row in store.boards.all() for u in store.boards.seat_userids(row.id)}
    finally:
        store.close()
    assert seated == {"ann", "ben", "cat"}


def test_the_operator_enters_robots_and_players_cannot(players, tmp_path):
    h = players
    runner = CliRunner()
    home = str(h.home)
    for userid, game in (("robo", "knightpanic"), ("loxbot", "lox")):
        assert (
            runner.invoke(cli, ["--home", home, "robots", "add", userid, game, "mcts"]).exit_code
            == 0
        )
    assert operator(h, "tournament create spring knightpanic --players=3")[0].ok
    error = refused(h, "ann", "tournament join spring robo")
    assert 'Syntax is "tournament join name userid password"' in error
    result = runner.invoke(cli, ["--home", home, "tournament", "join", "spring", "loxbot"])
    assert "loxbot plays lox, not knightpanic" in result.output
    result = runner.invoke(cli, ["--home", home, "tournament", "join", "spring", "ann"])
    assert '"ann" is not a robot: players join themselves, with their password' in result.output
    result = runner.invoke(cli, ["--home", home, "tournament", "join", "spring", "robo"])
    assert result.exit_code == 0, result.output
    assert "robo has joined tournament spring" in " ".join(result.output.split())
    ok(h, "ann", "tournament join spring ann secret")
    ok(h, "ben", "tournament join spring ben secret")
    record, entrants = tournament(h, "spring")
    assert record.status == "running" and sorted(entrants) == ["ann", "ben", "robo"]
    mails = fresh(h)
    assert all("robo" not in address for address in mails)


def test_on_a_tournaments_board_a_first_move_departure_is_a_lost_game(players):
    """A withdrawal (docs/spec/server.md §3.5.3) never removes a tournament's board: its
    players chose it when they joined, so a resignation before any move is a lost game."""
    h = players
    assert operator(h, "tournament create spring tally --players=3 -target=3")[0].ok
    for userid in ("ann", "ben", "cat"):
        ok(h, userid, f"tournament join spring {userid} secret")
    fresh(h)
    ok(h, "ann", "tally resign 101 ann secret")
    mails = fresh(h)
    [to_ben] = mails[ADDRESS["ben"]]
    assert "ann has resigned." in flat(to_ben) and "Game won by ben." in flat(to_ben)
    assert "Tournament spring, division 1." in text(to_ben)
    store = store_of(h)
    try:
        assert store.boards.get("tally", 101).status == "finished"
    finally:
        store.close()
    shown = operator(h, "tournament show spring")[1]
    assert "  101  ann  ben   ben won (ann resigned)" in shown


def test_list_and_show_and_help(players):
    h = players
    assert operator(h, "tournament create spring tally --players=3")[0].ok
    assert operator(h, "tournament create summer lox --start=2026-06-01 --time=3d+24h")[0].ok
    result = send(h, ADDRESS["eve"], "tournament list")
    [mail] = fresh(h)[ADDRESS["eve"]]
    assert mail["Subject"] == "Tournaments"
    body = text(mail)
    assert "summer  lox    open for entries        0             2026-06-01 00:00 UTC" in body
    assert "spring  tally  open for entries        0             at 3 players" in body
    result = send(h, ADDRESS["eve"], "tournament show summer")
    assert result.ok
    body = flat(fresh(h)[ADDRESS["eve"]][0])
    assert "Clock: 3 days + 24 hours a move, at most 10 days" in body
    assert "It starts on 2026-06-01 00:00 UTC." in body
    send(h, ADDRESS["eve"], "help tournament")
    body = flat(fresh(h)[ADDRESS["eve"]][0])
    assert "tournament join name userid password" in body
    assert "Sonneborn-Berger" in body
