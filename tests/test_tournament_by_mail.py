"""A whole round-robin tournament by mail (docs/spec/server.md §11.9), over a simulated
calendar: seven players join by mail and the seventh join starts it, in two divisions (4 and
3 players); they play by replies to the start mail's reply addresses, to board mails and by
commands; gus leaves after the start, dan loses two games on time and with them the rest, and
both divisions end in a tie on points that Sonneborn-Berger breaks. The final tables are
checked against tables computed by hand below, and against standings replayed from the
boards' move logs.

Tally (tests/toygame.py) with -target=3: players add 1 or 2, who reaches 3 wins; White wins
by 1, 1, 1 and Black by 2, 1.
"""

import itertools
import re
from email.message import EmailMessage

import pytest

from pbm.clock import stamp
from pbm.plugins import load_game
from pbm.position import replay, scores
from pbm.store import Store
from pbm.testing.mail import Harness
from pbm.tournaments import Game, standings
from pbm.web import make_app
from tests.bymail import flat, fresh, reply, send, text

PLAYERS = ("ann", "ben", "cat", "dan", "eve", "fay", "gus")
ADDRESS = {userid: f"{userid}@example.org" for userid in PLAYERS}
T0 = "2026-05-01T10:00:00"
_numbers = itertools.count(1)

# The final tables, by hand. Division 1 (ann, ben, cat, dan; boards 101-112, the pairs in
# join order, each first with the first player as White):
#   101 ann-ben 1-0   102 ben-ann 1-0   103 ann-cat draw   104 cat-ann draw
#   105 ann-dan 1-0 (dan out)           106 dan-ann draw   107 ben-cat 0-1
#   108 cat-ben draw  109 ben-dan 1-0 (time)   110 dan-ben 0-1 (time)
#   111 cat-dan 1-0 (dan out)           112 dan-cat 1-0
# Points: ann 1+0+.5+.5+1+.5 = 3.5; ben 0+1+0+.5+1+1 = 3.5; cat .5+.5+1+.5+1+0 = 3.5;
# dan 0+.5+0+0+0+1 = 1.5. Sonneborn-Berger (points scored against each times their points):
# cat: ann 1x3.5 + ben 1.5x3.5 + dan 1x1.5 = 10.25; ann: ben 1x3.5 + cat 1x3.5 + dan
# 1.5x1.5 = 9.25; ben: ann 1x3.5 + cat .5x3.5 + dan 2x1.5 = 8.25; dan: ann .5x3.5 + cat
# 1x3.5 = 5.25.
# Division 2 (eve, fay, gus; boards 113-118):
#   113 eve-fay 1-0   114 fay-eve draw   115 eve-gus 1-0 (gus left)   116 gus-eve 1-0
#   117 fay-gus 1-0 (gus left)           118 gus-fay 0-1 (gus left)
# Points: eve 2.5, fay 2.5, gus 1. Sonneborn-Berger: eve 1.5x2.5 + 1x1 = 4.75; fay .5x2.5 +
# 2x1 = 3.25; gus 1x2.5 = 2.5.
FINAL = {
    1: [
        ("1", "cat", "1600", "3.5", "10.25", "2", "6/6", ""),
        ("2", "ann", "1600", "3.5", "9.25", "2", "6/6", ""),
        ("3", "ben", "1600", "3.5", "8.25", "3", "6/6", ""),
        ("4", "dan", "1600", "1.5", "5.25", "1", "6/6", "out: two losses on time"),
    ],
    2: [
        ("1", "eve", "1600", "2.5", "4.75", "2", "4/4", ""),
        ("2", "fay", "1600", "2.5", "3.25", "2", "4/4", ""),
        ("3", "gus", "1600", "1", "2.5", "1", "4/4", "left"),
    ],
}
SCORES = {  # board -> (White's score, Black's score), from the table above
    101: (1, 0), 102: (1, 0), 103: (0.5, 0.5), 104: (0.5, 0.5), 105: (1, 0), 106: (0.5, 0.5),
    107: (0, 1), 108: (0.5, 0.5), 109: (1, 0), 110: (0, 1), 111: (1, 0), 112: (1, 0),
    113: (1, 0), 114: (0.5, 0.5), 115: (1, 0), 116: (1, 0), 117: (1, 0), 118: (0, 1),
}  # fmt: skip


def at(h, moment):
    h.moment = moment
    h.monkeypatch.setenv("PBM_NOW", moment)


def ok(h, userid, subject, body=""):
    result = send(h, ADDRESS[userid], subject, body)
    assert result.ok, h.last_error_text(result)
    return result


def move(h, number, userid, *texts):
    for text_ in texts:
        ok(h, userid, f"tally move {number} {userid} secret {text_}")


def draw(h, number, proposer, accepter):
    ok(h, proposer, f"tally propose {number} {proposer} secret")
    ok(h, accepter, f"tally accept {number} {accepter} secret")


def mail_to(h, address, userid, first_line):
    """A mail to a reply address written in a mail's body (the start mail's mailto)."""
    message = EmailMessage()
    message["From"] = ADDRESS[userid]
    message["To"] = address
    message["Subject"] = "Re: my tournament board"
    message["Message-ID"] = f"<mailto-{next(_numbers)}@client.example>"
    message.set_content(first_line + "\n")
    result = h.deliver(message.as_bytes(), envelope_recipients=[address]).result
    assert result.ok, h.last_error_text(result)


def cleanup(h):
    h.ok("cleanup", sender=None)


def table_rows(body: str, title: str) -> list[tuple]:
    """The standings rows under a title line of a tournament mail, split on runs of spaces."""
    lines = body.split("\n")
    start = lines.index(title) + 3  # the title, a blank line, the header
    rows = []
    for line in lines[start:]:
        if not line.strip():
            break
        cells = re.split(r"\s{2,}", line.strip())
        rows.append(tuple(cells + [""] * (8 - len(cells))))
    return rows


@pytest.fixture(scope="module")
def spring(tmp_path_factory):
    """The whole tournament, played once for every test of this module: the harness and
    the mails of interest."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        home = tmp_path_factory.mktemp("spring") / "home"
        monkeypatch.setenv("PBM_HOME", str(home))
        h = Harness(home)
        h.monkeypatch = monkeypatch
        mails = {}
        at(h, "2026-04-20T09:00:00")
        h.signup(*PLAYERS)
        created = h.run(
            "tournament create spring tally -target=3 --players=7 --largest=4 --time=3d+24h",
            sender=None,
        )
        assert created.ok, created.printed[0].body
        mails["created"] = created.printed[0].body
        fresh(h)
        for i, userid in enumerate(PLAYERS):
            at(h, f"2026-05-01T0{i + 1}:00:00" if i < 6 else T0)
            ok(h, userid, f"tournament join spring {userid} secret")
        mails["start"] = fresh(h)

        # The first day: most games are played at once, some by the start mail's own
        # reply addresses, some by replies to board mails, some by commands.
        at(h, "2026-05-01T11:00:00")
        to_ann = [m for m in mails["start"][ADDRESS["ann"]] if "has started" in m["Subject"]][0]
        address = re.search(r"Board 101: ann vs ben\n.*?mailto:(\S+)", text(to_ann), re.S)[1]
        mail_to(h, address, "ann", "1")
        ben_101 = [m for m in fresh(h)[ADDRESS["ben"]] if "Board 101" in m["Subject"]][-1]
        mails["board_101"] = ben_101
        assert reply(h, ben_101, ADDRESS["ben"], "1").ok
        move(h, 101, "ann", "1")  # ann wins 101
        move(h, 102, "ben", "1")
        move(h, 102, "ann", "1")
        move(h, 102, "ben", "1")  # ben wins 102
        move(h, 103, "ann", "1")
        draw(h, 103, "ann", "cat")
        move(h, 104, "cat", "1")
        draw(h, 104, "cat", "ann")
        move(h, 105, "ann", "1")
        move(h, 106, "dan", "1")
        draw(h, 106, "ann", "dan")
        move(h, 107, "ben", "2")
        move(h, 107, "cat", "1")  # cat wins 107 as Black
        move(h, 108, "cat", "1")
        draw(h, 108, "ben", "cat")
        move(h, 109, "ben", "1")  # dan will never answer here, nor move on 110
        move(h, 111, "cat", "1")
        move(h, 112, "dan", "1")
        move(h, 112, "cat", "1")
        move(h, 112, "dan", "1")  # dan wins 112
        move(h, 113, "eve", "1")
        move(h, 113, "fay", "1")
        move(h, 113, "eve", "1")  # eve wins 113
        move(h, 116, "gus", "1")
        move(h, 116, "eve", "1")
        move(h, 116, "gus", "1")  # gus wins 116
        to_fay = [m for m in mails["start"][ADDRESS["fay"]] if "has started" in m["Subject"]][0]
        address = re.search(r"Board 117: fay vs gus\n.*?mailto:(\S+)", text(to_fay), re.S)[1]
        mail_to(h, address, "fay", "1")
        at(h, "2026-05-01T12:00:00")
        move(h, 105, "dan", "1")
        move(h, 111, "dan", "1")
        fresh(h)

        # gus leaves: his three boards still being played are lost.
        at(h, "2026-05-01T22:00:00")
        mails["gus_left"] = ok(h, "gus", "tournament leave spring gus secret")
        mails["gus_boards"] = fresh(h)

        at(h, "2026-05-02T10:00:00")
        cleanup(h)
        mails["digest_1"] = fresh(h)
        at(h, "2026-05-02T11:00:00")
        move(h, 114, "fay", "1")
        draw(h, 114, "eve", "fay")
        fresh(h)
        at(h, "2026-05-02T12:00:00")
        cleanup(h)
        mails["digest_early"] = fresh(h)
        at(h, "2026-05-03T10:00:00")
        cleanup(h)
        mails["digest_2"] = fresh(h)
        mails["show_running"] = h.run("tournament show spring", sender=None).printed[0].body

        # dan's clocks run out on 109 and 110; with two losses on time he loses 105 and
        # 111 too, which were the last boards: the winners are announced.
        at(h, "2026-05-04T12:00:00")
        cleanup(h)
        mails["end"] = fresh(h)
        mails["show_end"] = h.run("tournament show spring", sender=None).printed[0].body
        yield h, mails


def test_the_seventh_join_starts_two_divisions_and_each_player_gets_one_mail(spring):
    h, mails = spring
    assert "It starts as soon as 7 players have joined." in mails["created"]
    start = mails["start"]
    assert sorted(start) == sorted(ADDRESS.values())
    for userid in PLAYERS:
        subjects = [m["Subject"] for m in start[ADDRESS[userid]]]
        assert subjects.count("Tournament spring has started: your boards") == 1, subjects
        assert not [s for s in subjects if s.startswith("New ")], "no new-board mail"
    [to_ann] = [m for m in start[ADDRESS["ann"]] if "has started" in m["Subject"]]
    body = flat(to_ann)
    assert "Tally, division 1 of 2." in body
    assert "all your 6 boards have started now" in body
    assert "Your division, by rating: ann (1600), ben (1600), cat (1600), dan (1600)." in body
    # Each board: where it is ann's move, its own reply address.
    for number, opponent in ((101, "ben"), (103, "cat"), (105, "dan")):
        section = text(to_ann).split(f"Tally Board {number}: ann vs {opponent}\n")[1]
        section = section.split("\n\n")[0]
        assert "You are Red." in section
        assert f"or send `tally move {number} ann <password> 1#1`." in section
        assert re.search(r"Reply to: mailto:pbm\+[a-z2-7]{32}@localhost", section)
    section = text(to_ann).split("Tally Board 102: ben vs ann\n")[1].split("\n\n")[0]
    assert "ben moves first; a mail comes when it is your move." in section
    assert "mailto:" not in section
    [to_gus] = [m for m in start[ADDRESS["gus"]] if "has started" in m["Subject"]]
    assert "division 2 of 2" in flat(to_gus) and "all your 4 boards" in flat(to_gus)


def test_every_board_mail_is_tagged_with_the_tournament(spring):
    h, mails = spring
    board_mail = text(mails["board_101"])
    assert board_mail.startswith("Summary of Tally Board 101\nTournament spring, division 1.\n")


def test_a_player_who_leaves_after_the_start_loses_the_games_not_yet_played(spring):
    h, mails = spring
    answer = mails["gus_left"].queued[-1][1].body
    assert "gus has left tournament spring." in " ".join(answer.split())
    assert "lost: 115, 117, 118" in " ".join(answer.split())
    boards = mails["gus_boards"]
    for number, winner in ((115, "eve"), (117, "fay"), (118, "fay")):
        [mail] = [m for m in boards[ADDRESS[winner]] if f"Board {number}" in m["Subject"]]
        assert "gus has left tournament spring and forfeits." in flat(mail)
        assert f"Game won by {winner}." in flat(mail)


def test_a_division_digest_goes_out_when_results_change_at_most_once_a_day(spring):
    h, mails = spring
    first = mails["digest_1"]
    for userid in PLAYERS:
        subjects = [m["Subject"] for m in first[ADDRESS[userid]]]
        division = 1 if userid in ("ann", "ben", "cat", "dan") else 2
        assert subjects == [f"Tournament spring: division {division} results"], subjects
    body = text(first[ADDRESS["eve"]][0])
    assert "New results in division 2 of tournament spring since the start:" in body
    assert "Board 113: eve - fay, eve won" in body
    assert "Board 115: eve - gus, eve won (gus forfeited)" in body
    assert "Board 114" not in body
    # fay and eve drew 114 an hour after it: no second digest that day ...
    assert not any(
        "results" in str(m["Subject"]) for ms in mails["digest_early"].values() for m in ms
    )
    # ... but the next day; division 1, unchanged, gets none.
    second = mails["digest_2"]
    assert sorted(second) == [ADDRESS["eve"], ADDRESS["fay"], ADDRESS["gus"]]
    body = text(second[ADDRESS["fay"]][0])
    assert "since 2026-05-02 10:00 UTC:" in body
    assert "Board 114: fay - eve, draw" in body
    assert "Board 113" not in body


def test_two_losses_on_time_lose_the_rest_and_the_last_board_announces_the_winners(spring):
    h, mails = spring
    end = mails["end"]
    to_dan = [m for m in end[ADDRESS["dan"]] if m["Subject"] == "Tournament spring: you are out"]
    assert len(to_dan) == 1
    assert "the boards you still played are lost (105, 111)" in flat(to_dan[0])
    # (ann was nagged on 105 first: less than a day was left on her clock)
    [lost] = [
        m
        for m in end[ADDRESS["ann"]]
        if "Board 105" in str(m["Subject"]) and "dan forfeits" in flat(m)
    ]
    assert "dan forfeits: having lost 2 games of tournament spring on time" in flat(lost)
    for userid in PLAYERS:
        [over] = [m for m in end[ADDRESS[userid]] if m["Subject"] == "Tournament spring is over"]
        body = text(over)
        assert "Division 1: cat" in body and "Division 2: eve" in body
        assert table_rows(body, "Final table of division 1 (4 players)") == FINAL[1]
        assert table_rows(body, "Final table of division 2 (3 players)") == FINAL[2]
    show = mails["show_end"]
    assert show.startswith("Tournament spring: finished.")
    assert table_rows(show, "Division 1 (4 players)") == FINAL[1]
    assert "Board  Red  Blue  Result" in show
    assert "  110  dan  ben   ben won (dan forfeited)" in show


def test_the_standings_replay_from_the_boards_logs(spring):
    """Each board's result, replayed from its move log (plus the board's own end: a draw
    by agreement leaves every seat playing), gives the standings the server shows; there is
    no table of standings to disagree with them."""
    h, mails = spring
    game = load_game("tally")
    store = Store.open(h.home / "pbm.db")
    try:
        tables = {name for (name,) in store.conn.execute("SELECT name FROM sqlite_master")}
        assert not [t for t in tables if "standing" in t]
        record = store.tournaments.get("spring")
        divisions = {}
        for row in store.tournaments.boards(record.id):
            board = store.boards.by_id(row.board_id)
            userids = store.boards.seat_userids(board.id)
            position = replay(
                game,
                __import__("json").loads(board.options),
                userids,
                board.seed,
                store.boards.plies(board.id),
            )
            outcome = position.outcome()
            assert board.status == "finished"
            if outcome is None:  # agreed: the log shows no end, every seat still plays
                seat_scores = [0.5, 0.5]
            else:
                seat_scores = scores(position, outcome)
            by_user = dict(zip(position.holders, seat_scores))
            white, black = by_user[row.white], by_user[row.black]
            assert (white, black) == SCORES[row.number], row.number
            divisions.setdefault(row.division, []).append(
                Game(row.number, row.white, row.black, white, black)
            )
        entrants = store.tournaments.entrants(record.id)
    finally:
        store.close()
    for number, games in divisions.items():
        players = [e.userid for e in entrants if e.division == number]
        table = standings(players, games)
        shown = [(s.userid, f"{s.points:g}", f"{s.sonneborn_berger:g}") for s in table]
        assert shown == [(row[1], row[3], row[4]) for row in FINAL[number]]


def test_the_start_and_the_end_are_stamped(spring):
    h, mails = spring
    store = Store.open(h.home / "pbm.db")
    try:
        record = store.tournaments.get("spring")
    finally:
        store.close()
    assert record.status == "finished"
    assert record.started_at == stamp(__import__("pbm.clock").clock.parse_stamp(T0 + "+00:00"))
    assert record.ended_at == "2026-05-04T12:00:00Z"


def test_the_web_view_shows_divisions_crosstables_linking_each_board_and_the_winners(spring):
    from tests.test_web import CSP, Response

    h, mails = spring
    app = make_app(h.config)
    assert '<a href="/tournaments/">Tournaments</a>' in Response(app, "/").body.decode()
    listing = Response(app, "/tournaments/")
    assert listing.status == 200
    assert listing.headers["Content-Security-Policy"] == CSP
    assert '<a href="/tournaments/spring">spring</a>' in listing.body.decode()
    page = Response(app, "/tournaments/spring")
    assert page.status == 200 and page.headers["Content-Security-Policy"] == CSP
    body = page.body.decode()
    assert "<form" not in body and "<script" not in body
    assert 'Division 1: <a href="/players/cat">cat</a>' in body
    assert 'Division 2: <a href="/players/eve">eve</a>' in body
    # Every board is linked from its two crosstable cells and from the schedule.
    for number in SCORES:
        assert body.count(f'href="/tally/{number}"') == 3, number
    cat_row = re.search(
        r"<tr><td class=\"number\">1</td><td>1\. <a href=\"/players/cat\">.*?</tr>", body
    )[0]
    marks = re.findall(r'<a href="/tally/\d+" title="[^"]*">([^<]*)</a>', cat_row)
    assert marks == ["½", "½", "½", "1", "1", "0"]  # vs ann, ben, dan: as Red, then as Blue
    assert "10.25" in cat_row
    board = Response(app, "/tally/105").body.decode()
    assert '<a href="/tournaments/spring">Tournament spring</a>, division 1.' in board
    assert Response(app, "/tournaments/nope").status == 404
    assert Response(app, "/tournaments/x/y").status == 404
