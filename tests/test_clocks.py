"""Correspondence clocks (docs/spec/server.md §9.5, §2.2): the option parsers, and whole
games by mail over a simulated calendar: a clock running out mid-game, a vacation that
saves a player, and a replay of a clocked game that gives the same times."""

import re
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pbm.boards import Board
from pbm.context import Context
from pbm.dispatch import open_server
from pbm.grammar import GrammarError, extract_options
from pbm.position import replay
from pbm.request import Request
from pbm.serveroptions import (
    CAP_MESSAGE,
    DAYS_MESSAGE,
    RATING_MESSAGE,
    TIME_MESSAGE,
    parse_cap,
    parse_rating,
    parse_seek_days,
    parse_time,
)
from pbm.store import VacationRecord
from pbm.timebank import ClockTerms, banks_after, banks_by_ply, running_seconds, show_left
from pbm.web import make_app
from tests.bymail import flat, fresh, send, text
from tests.test_web import Response

ALICE, BOB = "alice@example.org", "bob@example.org"
DAY, HOUR = 86400, 3600


def at(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S")


# -- the option parsers -------------------------------------------------------------------


@given(st.integers(1, 365), st.integers(0, 240))
def test_time_reads_days_and_hours(days, hours):
    assert parse_time(f"{days}d+{hours}h") == (days * DAY, hours * HOUR)
    assert parse_time(f"{days}D") == (days * DAY, 0)


@given(st.one_of(st.none(), st.text(max_size=12)))
def test_any_time_value_is_read_in_range_or_refused_with_the_syntax(value):
    try:
        initial, increment = parse_time(value)
    except ValueError as error:
        assert str(error) == TIME_MESSAGE
    else:
        assert DAY <= initial <= 365 * DAY and initial % DAY == 0
        assert 0 <= increment <= 240 * HOUR and increment % HOUR == 0


@given(st.integers(1, 365), st.one_of(st.none(), st.text(max_size=8), st.integers(0, 999)))
def test_the_cap_holds_at_least_the_initial_bank(days, value):
    raw = f"{value}d" if isinstance(value, int) else value
    try:
        cap = parse_cap(raw, days * DAY)
    except ValueError as error:
        assert str(error) == CAP_MESSAGE or (raw is None and days > 10)
    else:
        assert days * DAY <= cap <= 365 * DAY
        assert raw is not None or cap == 10 * DAY


@given(
    st.one_of(
        st.none(), st.text(max_size=12), st.tuples(st.integers(0, 12000), st.integers(0, 12000))
    )
)
def test_a_rating_window_is_two_ratings_the_lower_first(value):
    raw = f"{value[0]}-{value[1]}" if isinstance(value, tuple) else value
    try:
        low, high = parse_rating(raw)
    except ValueError as error:
        assert str(error) == RATING_MESSAGE
        assert not isinstance(value, tuple) or value[0] > value[1] or value[1] > 9999
    else:
        assert 0 <= low <= high <= 9999
        assert raw == f"{low}-{high}" or not isinstance(value, tuple)


@given(st.one_of(st.none(), st.text(max_size=4), st.integers(-5, 100).map(str)))
def test_seek_days_are_1_to_60(raw):
    try:
        days = parse_seek_days(raw)
    except ValueError as error:
        assert str(error) == DAYS_MESSAGE
    else:
        assert 1 <= days <= 60 and str(days) == raw.lstrip("0")


@given(
    st.lists(
        st.sampled_from(
            [
                "--time=3d+24h",
                "--time=2d",
                "--time=0d",
                "--time=400d",
                "--time",
                "--cap=5d",
                "--cap=20d",
                "--cap=x",
                "--forfeittime=30",
                "--nagtime=3",
                "--rating=1400-1800",
                "--rating=9-1",
                "--days=9",
                "--days=0",
                "--totaltime=5",
            ]
        ),
        max_size=5,
    )
)
def test_server_options_are_read_or_refused_with_a_grammar_error(tokens):
    """Whatever the combination, the grammar answers with options or with its own refusal."""
    try:
        _, _, options = extract_options(["knightpanic", "challenge", *tokens])
    except GrammarError as error:
        assert error.message
    else:
        if "clock_initial" in options:
            assert options["clock_initial"] <= options["clock_cap"]
            assert "forfeit_days" not in options


@pytest.mark.parametrize(
    "options, error",
    [
        ("--time=0d", TIME_MESSAGE),
        ("--time=3d+300h", TIME_MESSAGE),
        ("--time=5d --cap=3d", CAP_MESSAGE),
        ("--cap=5d", "--cap needs --time"),
        ("--time=12d", "--time of 12 days is more than the default cap of 10 days"),
        ("--time=3d --forfeittime=30", "--forfeittime does not apply with --time"),
        ("--rating=1400-1800", "The challenge command takes no --rating option"),
        ("--days=3", "The challenge command takes no --days option"),
    ],
)
def test_bad_clock_options_by_mail_say_how_to_write_them(harness, options, error):
    harness.signup("alice", "bob")
    result = send(harness, ALICE, f"knightpanic challenge alice bob {options}")
    assert not result.ok
    assert error in harness.last_error_text(result)


def test_banks_and_running_clocks():
    terms = ClockTerms(2 * DAY, 12 * HOUR, 3 * DAY)
    assert terms.describe() == "2 days + 12 hours a move, at most 3 days"
    assert ClockTerms(DAY, 0, 10 * DAY).describe() == "1 day, at most 10 days"
    assert show_left(3 * DAY + 4 * HOUR + 59) == "3 days 4 hours"
    assert show_left(3 * DAY) == "3 days" and show_left(HOUR + 120) == "1 hour 2 minutes"
    assert show_left(0) == "no time" and show_left(30) == "less than a minute"
    start = datetime(2026, 12, 20, tzinfo=UTC)
    # 25 days of vacation in January 2026 leave 5 of the 30 for the rest of the year: a trip
    # from 25 December to 14 January stops the clock 5 days in December (not the other 2)
    # and all 13 in January, the new year's allowance.
    before = VacationRecord(
        1, "bob", "2026-01-01T00:00:00+00:00", "2026-01-26T00:00:00+00:00", "user"
    )
    trip = VacationRecord(
        2, "bob", "2026-12-25T00:00:00+00:00", "2027-01-14T00:00:00+00:00", "user"
    )
    ran = running_seconds(start, start + timedelta(days=40), [before, trip], 30 * DAY)
    assert ran == (40 - 5 - 13) * DAY
    # A vacation still running stops the clock up to the time asked about.
    away = VacationRecord(3, "bob", "2026-12-21T00:00:00+00:00", None, None)
    assert running_seconds(start, start + timedelta(days=3), [away], 30 * DAY) == DAY


# -- whole games by mail --------------------------------------------------------------------


@pytest.fixture
def players(harness, clock):
    clock("2026-06-01T12:00:00")
    harness.signup("alice", "bob")
    harness.new_mails()
    return harness


def board(harness, number=101):
    with open_server(harness.config) as server:
        ctx = Context(server, Request(text="test"), None, {})
        found = Board(ctx, server.store.boards.get("knightpanic", number))
        return found, found.banks() if found.clock else None


def move_for(harness, number=101):
    """(userid on move, a legal move for them)."""
    found, _ = board(harness, number)
    seat = found.position.to_move()
    move = sorted(found.game.legal_moves(found.position.state, seat))[0]
    return found.position.holders[seat], move


def play(harness, clock, moment, number=101):
    clock(at(moment))
    userid, move = move_for(harness, number)
    result = send(
        harness, f"{userid}@example.org", f"knightpanic move {number} {userid} secret {move}"
    )
    assert result.ok, harness.last_error_text(result)
    return userid


def told_left(message) -> str:
    found = re.search(r"You have (.+?) left", " ".join(text(message).split()))
    return found.group(1) if found else None


def test_a_clock_runs_out_mid_game_and_everyone_hears(players, clock):
    h = players
    start = datetime(2026, 6, 1, 12, tzinfo=UTC)
    assert send(h, ALICE, "knightpanic challenge alice bob --time=2d+12h").ok
    mails = fresh(h)
    assert told_left(mails[ALICE][0]) == "2 days"
    assert "You have 2 days left, until 2026-06-03 12:00 UTC." in text(mails[ALICE][0])
    assert told_left(mails[BOB][0]) is None, "only the player on move is told"
    play(h, clock, start + timedelta(hours=30))  # alice: 48 - 30 + 12 = 30 hours left
    play(h, clock, start + timedelta(hours=40))  # bob: 48 - 10 + 12 = 50 hours left
    latest = fresh(h)[ALICE][-1]
    assert told_left(latest) == "1 day 6 hours"
    assert "alice (White):  1 day 6 hours" in text(latest)
    assert "bob (Black):    2 days 2 hours" in text(latest)
    assert "Deadline........ 2026-06-04 10:00 UTC (alice loses on time)" in text(latest)
    # Idle: no forfeit for idle days on a clocked board, a nag once less than a day is left.
    clock(at(start + timedelta(hours=45)))
    h.ok("cleanup", sender=None)
    assert fresh(h) == {}
    clock(at(start + timedelta(hours=60)))
    h.ok("cleanup", sender=None)
    [nag] = fresh(h)[ALICE]
    assert (
        "You have 10 hours left on your clock, until 2026-06-04 10:00 UTC. If you do not move "
        "by then, you lose on time." in " ".join(text(nag).split())
    )
    clock(at(start + timedelta(hours=70)))
    h.ok("cleanup", sender=None)
    mails = fresh(h)
    for address in (ALICE, BOB):
        [mail] = mails[address]
        body = text(mail)
        assert "alice forfeits: their clock ran out." in body
        assert "Game won by bob." in body
    found, banks = board(h)
    assert not found.active and found.plies[-1].kind == "forfeit"
    assert banks[0] == 0 - 0 and banks[1] == 50 * HOUR


def test_a_move_after_the_bank_ran_out_loses_on_time(players, clock):
    h = players
    start = datetime(2026, 6, 1, 12, tzinfo=UTC)
    assert send(h, ALICE, "knightpanic challenge alice bob --time=1d").ok
    play(h, clock, start + timedelta(hours=1))
    play(h, clock, start + timedelta(hours=2))
    clock(at(start + timedelta(hours=40)))
    userid, move = move_for(h)
    result = send(h, ALICE, f"knightpanic move 101 alice secret {move}")
    assert not result.ok and "You used too much time" in h.last_error_text(result)
    found, _ = board(h)
    assert not found.active and "alice forfeits: their clock ran out." in text(fresh(h)[BOB][-1])


def test_a_vacation_saves_a_player_within_the_allowance(players, clock):
    h = players
    start = datetime(2026, 6, 1, 12, tzinfo=UTC)
    assert send(h, ALICE, "knightpanic challenge alice bob --time=1d+12h").ok
    play(h, clock, start + timedelta(hours=2))  # alice: 24 - 2 + 12 = 34 hours
    clock(at(start + timedelta(hours=4)))
    assert send(h, BOB, "vacation bob secret on").ok  # bob's clock has run 2 hours
    fresh(h)
    clock(at(start + timedelta(days=10)))
    h.ok("cleanup", sender=None)
    found, banks = board(h)
    assert found.active, "a vacation stops the clock"
    assert banks[1] == 22 * HOUR
    shown = h.ok("knightpanic showas bob secret 101", sender=None).printed[0].body
    assert "You have 22 hours left; your clock is stopped while you are on vacation." in shown
    assert "Deadline........ none while bob is on vacation (the clock is stopped)" in shown
    clock(at(start + timedelta(days=10, hours=5)))
    assert send(h, BOB, "vacation bob secret off").ok
    clock(at(start + timedelta(days=10, hours=6)))
    _, banks = board(h)
    assert banks[1] == 21 * HOUR, "the clock runs again from the return"
    play(h, clock, start + timedelta(days=10, hours=6))
    found, banks = board(h)
    assert found.active and banks[1] == 21 * HOUR + 12 * HOUR


def test_a_vacation_past_the_allowance_runs_the_clock_again(players, clock):
    h = players
    h.configure("[timeouts]\nvacation_days_per_year = 2\n")
    start = datetime(2026, 6, 1, 12, tzinfo=UTC)
    assert send(h, ALICE, "knightpanic challenge alice bob --time=1d").ok
    for _ in range(3):
        play(h, clock, start)
    assert send(h, BOB, "vacation bob secret on").ok
    # Two days stop the clock; the third day runs it, and cleanup ends the vacation.
    clock(at(start + timedelta(days=2, hours=23)))
    _, banks = board(h)
    assert banks[1] == 1 * HOUR
    clock(at(start + timedelta(days=3, hours=1)))
    h.ok("cleanup", sender=None)
    found, _ = board(h)
    assert not found.active and found.plies[-1].kind == "forfeit"


def test_a_replay_of_a_clocked_game_gives_the_same_times(players, clock):
    """The banks mailed during the game, those derived from the stored log, those a replay
    of the log gives and those the web view shows per ply are all the same."""
    h = players
    start = datetime(2026, 6, 1, 12, tzinfo=UTC)
    assert send(h, ALICE, "knightpanic challenge alice bob --time=3d+6h --cap=4d").ok
    fresh(h)
    mailed = []
    moment = start
    for hours in (5, 30, 1, 40, 13, 7, 26, 2):
        moment += timedelta(hours=hours, minutes=17)
        mover = play(h, clock, moment)
        other = "bob" if mover == "alice" else "alice"
        mails = fresh(h)
        mover_line = [
            line
            for line in text(mails[f"{other}@example.org"][0]).splitlines()
            if line.startswith(f"{mover} (")
        ][-1]
        mailed.append(mover_line.split(":", 1)[1].strip())
    found, _ = board(h)
    terms = found.clock
    derived = [show_left(b) for b in banks_by_ply(terms, 2, found.plies)]
    assert derived == mailed
    # A replay of the log, ply by ply, gives the same banks again.
    for count in range(1, len(found.plies) + 1):
        position = replay(
            found.game, found.options, found.seat_userids, found.row.seed, found.plies, upto=count
        )
        mover = found.plies[count - 1].seat
        assert show_left(banks_after(terms, 2, position.plies)[mover]) == mailed[count - 1]
    assert max(banks_by_ply(terms, 2, found.plies)) <= 4 * DAY, "the cap holds"
    page = Response(make_app(h.config), "/knightpanic/101").body.decode()
    for left in mailed:
        assert f'<span class="left">{left} left</span>' in page
    assert "<th>Time left</th>" in page


def test_a_board_without_a_clock_keeps_its_mails_and_rules(players, clock):
    h = players
    assert send(h, ALICE, "knightpanic challenge alice bob").ok
    body = text(fresh(h)[ALICE][0])
    assert "You have" not in body and "Time left" not in body and "Clock" not in body
    clock("2026-06-08T12:00:00")
    h.ok("cleanup", sender=None)
    [nag] = fresh(h)[ALICE]
    assert "You have not moved in 7 days. If you do not move by 2026-06-22 12:00 UTC" in flat(nag)
    clock("2026-06-22T12:00:00")
    h.ok("cleanup", sender=None)
    mails = fresh(h)
    assert mails[ALICE][0]["Subject"] == "KnightPanic board 101 has been removed"


def test_help_explains_clocks(harness):
    mail = harness.ok("help clocks", sender=None).printed[0]
    assert mail.subject == "Help clocks"
    body = " ".join(mail.body.split())
    assert "--time=<days>d+<hours>h" in body and "A vacation" in body
    assert "help clocks" in " ".join(harness.ok("help", sender=None).printed[0].body.split())
