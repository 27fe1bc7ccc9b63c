"""The read-only web view (docs/spec/server.md §11.8): the WSGI application called with real
environs on boards of every game played through the dispatcher, and `pbm web` (waitress)
served from a process of its own."""

import io
import json
import random
import re
import signal
import sqlite3
import subprocess
import sys
import urllib.error
import urllib.request
from datetime import UTC, datetime, timedelta
from html.parser import HTMLParser
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from markupsafe import escape

from pbm import hookimpl
from pbm.cli import cli
from pbm.plugins import load_game, pm
from pbm.position import replay
from pbm.store import Store
from pbm.web import make_app
from pbm.web.pages import picture
from tests.conftest import STRESS_FACTOR, Harness
from tests.toygame import Tally

PBM = Path(sys.executable).parent / "pbm"
PASSWORD = "pw-Xy9q2"
START = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)
# Each game with the options its boards are challenged with.
GAMES = {
    "knightpanic": "",
    "knightvision": "-size=9",
    "lox": "-size=9",
    "uknight": "-size=5",
    "knightline": "",
    "tally": "",
}
HOSTILE = '<script>alert("x")</script><img src=x onerror=alert(1)>'
CSP = "default-src 'none'; style-src 'self'; img-src 'self' data:"


def environ(path: str, method: str = "GET") -> dict:
    path, _, query = path.partition("?")
    return {
        "REQUEST_METHOD": method,
        "SCRIPT_NAME": "",
        "PATH_INFO": path,
        "QUERY_STRING": query,
        "SERVER_NAME": "127.0.0.1",
        "SERVER_PORT": "8080",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "wsgi.version": (1, 0),
        "wsgi.url_scheme": "http",
        "wsgi.input": io.BytesIO(),
        "wsgi.errors": sys.stderr,
        "wsgi.multithread": True,
        "wsgi.multiprocess": False,
        "wsgi.run_once": False,
    }


class Response:
    def __init__(self, app, path, method="GET"):
        captured = {}

        def start_response(status, headers):
            captured["status"], captured["headers"] = status, headers

        self.body = b"".join(app(environ(path, method), start_response))
        self.status = int(captured["status"].split()[0])
        self.headers = dict(captured["headers"])
        assert len(captured["headers"]) == len(self.headers), "no header twice"

    @property
    def text(self) -> str:
        return self.body.decode("utf-8")


def get(app, path, method="GET") -> Response:
    response = Response(app, path, method)
    assert response.headers["Content-Security-Policy"] == CSP
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert response.headers["Referrer-Policy"] == "no-referrer"
    if method == "GET":
        assert int(response.headers["Content-Length"]) == len(response.body)
    if method != "HEAD" and response.headers["Content-Type"].startswith("text/html"):
        check_html_page(response.text)
    return response


def check_html_page(text: str):
    """What every page has: a title, one h1, the way back to the list of games; and what
    none has under the CSP: scripts, inline styles, forms."""
    assert re.search(r"<title>[^<]+</title>", text)
    assert text.count("<h1>") == 1
    assert '<a href="/">' in text
    assert '<link rel="stylesheet" href="/static/pbm.css">' in text
    lowered = text.lower()
    for banned in ("<script", "style=", "<form", "<style", "javascript:", " on"):
        if banned == " on":
            assert not re.search(r"<[^>]+\son[a-z]+\s*=", lowered), "event handler attribute"
        else:
            assert banned not in lowered, banned


# Every element our pages and inline pictures are made of; anything else was sent to us.
OUR_TAGS = {
    *"html head meta title link body nav main div h1 h2 p a ul ol li pre".split(),
    *"table thead tbody tr th td svg rect polygon circle line text".split(),
}


def tags_of(text: str) -> set[str]:
    names = set()

    class TagNames(HTMLParser):
        def handle_starttag(self, tag, attrs):
            names.add(tag)

    TagNames().feed(text)
    return names


def state_of(harness, game, number):
    store = Store.open_read_only(harness.config.db_path)
    try:
        row = store.boards.get(game.name, number)
        userids = store.boards.seat_userids(row.id)
        plies = store.boards.plies(row.id)
        return row, userids, plies
    finally:
        store.close()


def play(harness, name, number, plies, rng, comment=""):
    """`plies` legal moves on a board through the dispatcher, each player in turn; the last
    one with a comment."""
    game = load_game(name)
    for ply in range(plies):
        row, userids, log = state_of(harness, game, number)
        position = replay(game, json.loads(row.options), userids, row.seed, log)
        seat = position.to_move()
        if seat is None:
            return
        moves = sorted(game.legal_moves(position.state, seat)) or ["pass"]
        move = rng.choice(moves)
        body = comment if ply == plies - 1 else ""
        harness.ok(f"{name} move {number} {userids[seat]} {PASSWORD} {move}", body=body)


def at_day(monkeypatch, day):
    monkeypatch.setenv("PBM_NOW", (START + timedelta(days=day)).isoformat())


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """Every game with three boards: 101 finished on day 0 and archived on day 15, 102
    finished by a resignation, 103 running with a comment carrying markup."""
    monkeypatch = pytest.MonkeyPatch()
    home = tmp_path_factory.mktemp("web") / "home"
    monkeypatch.setenv("PBM_HOME", str(home))
    at_day(monkeypatch, 0)
    harness = Harness(home)
    harness.signup("alice", "bob", password=PASSWORD)
    rng = random.Random(7)
    numbers = {}
    for name, options in GAMES.items():
        numbers[name] = []
        for board in range(3):
            result = harness.challenge(f"{name} challenge alice bob {options}".strip())
            number = 101 + board
            numbers[name].append(number)
            assert result.ok
        play(harness, name, 101, 2, rng)
        harness.ok(f"{name} resign 101 alice {PASSWORD}")
    at_day(monkeypatch, 14)
    for name in GAMES:
        play(harness, name, 102, 3, rng)
        harness.ok(f"{name} resign 102 bob {PASSWORD}")
        play(harness, name, 103, 3, rng, comment=HOSTILE)
    at_day(monkeypatch, 15)
    result = CliRunner().invoke(cli, ["--home", str(home), "cleanup"])
    assert result.exit_code == 0, result.output
    assert "archived" in result.output
    harness.app = make_app(harness.config)
    yield harness
    monkeypatch.undo()


def test_the_list_of_games(site):
    page = get(site.app, "/")
    assert page.status == 200
    for name in GAMES:
        game = load_game(name)
        assert f'<a href="/{name}/">{game.display_name}</a>' in page.text
    # Each game's boards counted in every list, not the running ones only: 103 runs, 102 has
    # ended, 101 is archived; each count links to its list.
    assert (
        '<td>knightpanic</td><td class="number"><a href="/knightpanic/">1</a></td>'
        '<td class="number"><a href="/knightpanic/finished">1</a></td>'
        '<td class="number"><a href="/knightpanic/archived">1</a></td>'
    ) in page.text


@pytest.mark.parametrize("name", list(GAMES))
def test_board_lists_of_every_game(site, name):
    active = get(site.app, f"/{name}/")
    assert active.status == 200
    assert f'href="/{name}/103"' in active.text and f'href="/{name}/102"' not in active.text
    assert f'href="/{name}/finished"' in active.text
    assert f'href="/{name}/archived"' in active.text
    assert f'href="/{name}/standings"' in active.text
    finished = get(site.app, f"/{name}/finished")
    assert f'href="/{name}/102"' in finished.text and f'href="/{name}/101"' not in finished.text
    assert "Game won by alice." in finished.text
    archived = get(site.app, f"/{name}/archived")
    assert f'href="/{name}/101"' in archived.text and "(archived)" in archived.text
    assert "Game won by bob." in archived.text
    standings = get(site.app, f"/{name}/standings")
    assert standings.status == 200
    assert '<a href="/players/alice">alice</a>' in standings.text
    assert "Established &amp; Provisionals" in standings.text


@pytest.mark.parametrize("name", list(GAMES))
def test_board_pages_of_every_game(site, name):
    game = load_game(name)
    for number in (101, 102, 103):
        row, userids, plies = state_of(site, game, number)
        page = get(site.app, f"/{name}/{number}")
        assert page.status == 200
        assert f"<h1>{game.display_name} Board {number}</h1>" in page.text
        for userid in userids:
            assert f'<a href="/players/{userid}">{userid}</a>' in page.text
        assert "Time used by players:" in page.text and "Last move made.." in page.text
        for ply in plies:
            assert f'href="/{name}/{number}?ply={ply.ply}"' in page.text
        for suffix in ("txt", "json"):
            assert f'href="/{name}/{number}.{suffix}"' in page.text
        svg = get(site.app, f"/{name}/{number}.svg")
        drawing = picture(
            game, replay(game, json.loads(row.options), userids, row.seed, plies).state
        )
        if drawing is None:
            assert svg.status == 404 and f'href="/{name}/{number}.svg"' not in page.text
        else:
            assert svg.status == 200 and svg.headers["Content-Type"] == "image/svg+xml"
    running = get(site.app, f"/{name}/103").text
    assert "It is " in running and "Deadline........" in running
    assert "(bob forfeits if no move)" in running or "(alice forfeits if no move)" in running
    assert "<td>playing</td>" in running
    # A finished board says who won and lost, not that both are playing (issue 27).
    ended = get(site.app, f"/{name}/102").text
    assert "<td>playing</td>" not in ended
    assert re.search(r">alice</a></td><td[^>]*>[^<]*</td><td>won</td>", ended)
    assert re.search(r">bob</a></td><td[^>]*>[^<]*</td><td>lost \(resigned\)</td>", ended)


def test_a_board_won_by_a_chain_shows_the_chain(harness, monkeypatch):
    """The winning cells (Game.winning_cells) under the picture, outlined in it."""
    monkeypatch.setenv("PBM_NOW", START.isoformat())
    harness.signup("alice", "bob", password=PASSWORD)
    harness.challenge("lox challenge alice bob -size=9")
    play(harness, "lox", 101, 400, random.Random(3))
    game = load_game("lox")
    row, userids, plies = state_of(harness, game, 101)
    assert row.status == "finished"
    state = replay(game, json.loads(row.options), userids, row.seed, plies).state
    cells = game.winning_cells(state)
    assert cells
    app = make_app(harness.config)
    page = get(app, "/lox/101").text
    assert f"Won by the cells {' '.join(cells)}, outlined in green." in page
    assert page.count('stroke="#009e73"') == len(cells)
    assert re.search(r"<td>(won|lost)</td>", page) and "<td>playing</td>" not in page
    before = get(app, f"/lox/101?ply={len(plies) - 1}").text
    assert "Won by the cells" not in before and 'stroke="#009e73"' not in before


@pytest.mark.parametrize("name", list(GAMES))
def test_stepping_through_the_plies_equals_replaying_them(site, name):
    game = load_game(name)
    row, userids, plies = state_of(site, game, 103)
    options = json.loads(row.options)
    for n in range(len(plies) + 1):
        page = get(site.app, f"/{name}/103?ply={n}")
        assert page.status == 200
        state = replay(game, options, userids, row.seed, plies, upto=n).state
        last = plies[n - 1] if n else None
        drawing = picture(game, state, last.text if last and last.kind == "move" else None)
        if drawing is None:
            expected = f'<pre class="board">{escape(game.render_board(state, None))}</pre>'
            assert expected in page.text, n
        else:
            # The same elements; their order follows the state's keys, which the snapshot
            # cache stores sorted.
            shown = re.search(r'<div class="picture">(<svg.*?</svg>)</div>', page.text, re.S)
            assert sorted(shown.group(1).splitlines()) == sorted(drawing.splitlines()), n
        if n < len(plies):
            assert f"after ply {n} of {len(plies)}" in page.text
        if n:
            assert f'<li value="{n}" class="shown">' in page.text


def test_the_json_record(site):
    for name in GAMES:
        game = load_game(name)
        row, userids, plies = state_of(site, game, 102)
        response = get(site.app, f"/{name}/102.json")
        assert response.headers["Content-Type"] == "application/json; charset=utf-8"
        record = json.loads(response.body)
        assert record["game"] == name and record["board"] == 102
        assert record["status"] == "finished" and record["archived"] is False
        assert record["seats"] == userids == ["alice", "bob"]
        assert record["options"] == json.loads(row.options)
        assert record["seed"] == row.seed
        assert record["result"]["scores"] == [
            {"seat": 0, "userid": "alice", "score": 1.0},
            {"seat": 1, "userid": "bob", "score": 0.0},
        ]
        live = [p for p in record["plies"] if not p["undone"]]
        assert [(p["number"], p["seat"], p["kind"]) for p in live] == [
            (p.ply, p.seat, p.kind) for p in plies
        ]
        assert [p["text"] for p in live if p["kind"] == "move"] == [
            p.text for p in plies if p.kind == "move"
        ]
        assert live[-1]["kind"] == "resign" and live[-1]["userid"] == "bob"
        assert all(p["time"].startswith("2026-03-") for p in live)
        assert {p["automatic"] for p in live} <= {True, False}


def test_the_text_record_is_the_full_summary(site):
    page = get(site.app, "/knightpanic/101.txt")
    assert page.headers["Content-Type"] == "text/plain; charset=utf-8"
    assert page.text.startswith("Summary of KnightPanic Board 101\n")
    assert "Game won by bob." in page.text and "Game ended......" in page.text
    shown = site.ok("knightpanic show 101", sender=None).printed[0].body
    assert page.text.strip() == shown.strip()


def test_markup_from_comments_and_queries_is_escaped(site):
    for name in GAMES:
        page = get(site.app, f"/{name}/103").text
        assert str(escape(HOSTILE)) in page, "the comment is shown, escaped"
        assert "<script>" not in page and "<img" not in page
    reflected = get(site.app, "/knightpanic/103?ply=<script>x</script>")
    assert reflected.status == 400 and "&lt;script&gt;" in reflected.text
    assert "<script" not in reflected.text
    assert get(site.app, "/players/%3Cscript%3E").status == 404


def test_nothing_private_appears(site):
    store = Store.open_read_only(site.config.db_path)
    try:
        hashes = [h for (h,) in store.conn.execute("SELECT password_hash FROM users")]
        tokens = [t for (t,) in store.conn.execute("SELECT id FROM reply_tokens")]
    finally:
        store.close()
    assert hashes and tokens
    paths = ["/", "/players/alice", "/players/bob"]
    for name in GAMES:
        paths += [f"/{name}/", f"/{name}/finished", f"/{name}/archived", f"/{name}/standings"]
        for number in (101, 102, 103):
            paths += [f"/{name}/{number}", f"/{name}/{number}.json", f"/{name}/{number}.txt"]
    for path in paths:
        text = get(site.app, path).text
        for private in ["@example.org", "pbm+", PASSWORD, "argon2", *hashes, *tokens]:
            assert private not in text, (path, private)


def test_a_players_page(site):
    page = get(site.app, "/players/alice")
    assert page.status == 200 and "<h1>Player alice</h1>" in page.text
    assert "<h2>Ratings</h2>" in page.text and 'href="/knightpanic/standings"' in page.text
    assert "<h2>Active boards</h2>" in page.text and "<h2>Finished boards</h2>" in page.text
    for name in GAMES:
        for number in (101, 102, 103):
            assert f'href="/{name}/{number}"' in page.text


def test_errors_are_small_pages(site):
    app = site.app
    for path in (
        "/nosuchgame/",
        "/Knightpanic/",
        "/knightpanic/999",
        "/knightpanic/101.xml",
        "/knightpanic/101/moves",
        "/knightpanic/standings/x",
        "/players/nobody",
        "/players/",
        "/static/other.css",
        "/knightpanic/1010000000000",
    ):
        response = get(app, path)
        assert response.status == 404, path
        assert "<h1>404 Not Found</h1>" in response.text
    for method in ("POST", "PUT", "DELETE", "OPTIONS"):
        response = get(app, "/knightpanic/101", method)
        assert response.status == 405 and response.headers["Allow"] == "GET, HEAD"
        assert "read-only" in response.text
    row, userids, plies = state_of(site, load_game("knightpanic"), 103)
    assert get(app, "/knightpanic/103?ply=").status == 200  # an empty value is no value
    for query in (
        "103?ply=-1",
        "103?ply=x",
        f"103?ply={len(plies) + 1}",
        "?page=0",
        "finished?page=two",
        "archived?page=-1",
    ):
        response = get(app, f"/knightpanic/{query}")
        assert response.status == 400, query
        assert "<h1>400 Bad Request</h1>" in response.text
    too_far = get(app, f"/knightpanic/103?ply={len(plies) + 1}")
    assert f"?ply=0 up to ?ply={len(plies)}" in too_far.text


SEGMENTS = st.one_of(
    st.sampled_from(["", "knightpanic", "tally", "players", "alice", "static", "103", "finished"]),
    st.sampled_from(["103.json", "103.txt", "103.svg", "standings", "archived", "pbm.css"]),
    st.text(max_size=12),
    st.just("<b>x</b>"),
)
QUERIES = st.one_of(
    st.just(""),
    st.builds(
        lambda name, value: f"{name}={value}",
        st.sampled_from(["ply", "page", "x"]),
        st.one_of(st.integers(-3, 10**12).map(str), st.text(max_size=12), st.just("<i>")),
    ),
    st.text(max_size=20),
)


@settings(
    max_examples=300 * STRESS_FACTOR,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(st.lists(SEGMENTS, min_size=1, max_size=4), QUERIES)
@example(segments=["<b>x</b>"], query="<")
@example(segments=["knightpanic", "<i>"], query="ply=<b>x</b>")
def test_any_path_and_query_gets_a_page_and_never_an_error_of_ours(site, segments, query):
    """Whatever a client asks for: a page, 400 or 404, each with the security headers and,
    for HTML, the checks of every page; nothing it sent comes back as markup: no element
    but ours (it sends `<b>x</b>` and `<i>`), no event handler. Looking for what it sent
    as a substring would not do: `<`, `</` or `<a` is in every page of its own."""
    path = "/" + "/".join(segments)
    response = get(site.app, f"{path}?{query}" if query else path)
    assert response.status in (200, 400, 404), (path, query, response.status)
    if response.headers["Content-Type"].startswith("text/html"):
        assert tags_of(response.text) <= OUR_TAGS, (path, query)


def test_head_gives_the_headers_without_the_body(site):
    full = get(site.app, "/knightpanic/103")
    head = get(site.app, "/knightpanic/103", "HEAD")
    assert head.status == 200 and head.body == b""
    assert head.headers["Content-Length"] == full.headers["Content-Length"]


def test_the_stylesheet(site):
    response = get(site.app, "/static/pbm.css")
    assert response.status == 200 and response.headers["Content-Type"] == "text/css; charset=utf-8"
    assert b"body" in response.body


def test_the_icon_browsers_ask_for_is_there(site):
    """A browser asks for /favicon.ico on every site; a 404 would be an error in its log."""
    from PIL import Image

    response = get(site.app, "/favicon.ico")
    assert response.status == 200 and response.headers["Content-Type"] == "image/png"
    assert Image.open(io.BytesIO(response.body)).size == (32, 32)


def test_pages_of_fifty_boards(harness):
    harness.signup("alice", "bob", password=PASSWORD)
    for _ in range(51):
        harness.challenge("tally challenge alice bob")
    app = make_app(harness.config)
    first = get(app, "/tally/").text
    assert first.count('href="/tally/1') == 50 and 'href="/tally/151"' not in first
    assert "Page 1 of 2 (51 boards)." in first and 'href="/tally/?page=2"' in first
    second = get(app, "/tally/?page=2").text
    assert 'href="/tally/151"' in second and 'href="/tally/?page=1"' in second
    assert "No boards here." in get(app, "/tally/?page=3").text


def test_the_view_cannot_write(harness):
    store = Store.open_read_only(harness.config.db_path)
    try:
        with pytest.raises(sqlite3.OperationalError):
            store.conn.execute("DELETE FROM users")
    finally:
        store.close()


class SecretTally(Tally):
    """Tally whose moves only their own player sees until the end."""

    name = "secrettally"
    display_name = "SecretTally"
    visible_moves = False


class SecretTallyOneBoard(SecretTally):
    """Hidden moves on a board drawn alike for everyone: the move list still differs."""

    name = "secretboard"
    display_name = "SecretBoard"
    same_view_for_all = True


class SecretPlugin:
    @hookimpl
    def register_games(self, register):
        register(SecretTally())
        register(SecretTallyOneBoard())


@pytest.fixture
def secret_game():
    plugin = SecretPlugin()
    pm.register(plugin, name="secrettally")
    yield
    pm.unregister(plugin)


def test_hidden_moves_show_only_after_the_end(harness, secret_game):
    harness.signup("alice", "bob", password=PASSWORD)
    harness.challenge("secrettally challenge alice bob")
    harness.ok(f"secrettally move 101 alice {PASSWORD} 2")
    harness.ok(f"secrettally move 101 bob {PASSWORD} 1")
    app = make_app(harness.config)
    record = json.loads(get(app, "/secrettally/101.json").body)
    assert [p["text"] for p in record["plies"]] == ["...", "..."]
    assert record["seed"] is None
    page = get(app, "/secrettally/101").text
    assert "(alice): ...</a>" in page and "(alice): 2</a>" not in page
    assert re.search(r"1 \.\.\.\s+2 \.\.\.", get(app, "/secrettally/101.txt").text)
    harness.ok(f"secrettally resign 101 alice {PASSWORD}")
    record = json.loads(get(app, "/secrettally/101.json").body)
    assert [p["text"] for p in record["plies"]] == ["2", "1", "Resign"]
    assert isinstance(record["seed"], int)
    assert "(alice): 2</a>" in get(app, "/secrettally/101").text


def test_the_web_section_of_pbm_ini(tmp_path):
    from pbm.config import Config, ConfigError, default_ini_text

    assert "[web]" in default_ini_text() and "# port = 8080" in default_ini_text()
    (tmp_path / "pbm.ini").write_text("[web]\nhost = 0.0.0.0\nport = 8123\nthreads = 8\n")
    config = Config.load(tmp_path)
    assert (config.get("web.host"), config.number("web.port")) == ("0.0.0.0", 8123)
    assert config.number("web.threads") == 8
    (tmp_path / "pbm.ini").write_text("[web]\nport = eighty\n")
    with pytest.raises(ConfigError, match="web.port = 'eighty' is not a whole number"):
        Config.load(tmp_path)


def ignore_interrupts():
    # what a job started in the background by a non-interactive shell inherits
    signal.signal(signal.SIGINT, signal.SIG_IGN)


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM])
def test_pbm_web_serves_with_waitress_until_stopped(harness, project_env, stop):
    """Stopped by SIGINT or SIGTERM even when started with SIGINT ignored, as from a
    background job of a script (make test run that way once left it running for ever)."""
    harness.signup("alice", "bob", password=PASSWORD)
    harness.challenge("knightpanic challenge alice bob")
    harness.ok(f"knightpanic move 101 alice {PASSWORD} c1-e5")
    env = dict(project_env, PBM_HOME=str(harness.home))
    process = subprocess.Popen(
        [PBM, "web", "--host", "127.0.0.1", "--port", "0"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=ignore_interrupts,
    )
    try:
        ready = re.fullmatch(
            r"pbm web: serving (http://127\.0\.0\.1:\d+)/\n", process.stdout.readline()
        )
        assert ready, "pbm web says where it serves once it listens"
        base = ready.group(1)
        with urllib.request.urlopen(f"{base}/knightpanic/101", timeout=30) as response:
            assert response.status == 200
            assert response.headers["Server"] == "pbm"
            assert response.headers["Content-Security-Policy"] == CSP
            assert "<h1>KnightPanic Board 101</h1>" in response.read().decode()
        with urllib.request.urlopen(f"{base}/knightpanic/101.json", timeout=30) as response:
            assert json.loads(response.read())["plies"][0]["text"] == "c1-e5"
        with pytest.raises(urllib.error.HTTPError) as error:
            urllib.request.urlopen(f"{base}/knightpanic/", data=b"x=1", timeout=30)
        assert error.value.code == 405
    finally:
        process.send_signal(stop)
        out, err = process.communicate(timeout=30)
    assert process.returncode == 0, err


def test_each_player_s_board_mail_shows_only_their_own_hidden_moves(harness, secret_game):
    """The board mails of one move share what is the same for every reader (issue 31); the
    move list of a game with hidden moves is not, even when the board is drawn alike."""
    harness.signup("alice", "bob", password=PASSWORD)
    harness.challenge("secretboard challenge alice bob")
    harness.ok(f"secretboard move 101 alice {PASSWORD} 2")
    harness.new_mails()
    harness.ok(f"secretboard move 101 bob {PASSWORD} 1")
    mails = {str(mail["To"]): mail.get_content() for mail in harness.new_mails()}
    assert "   1 2          2 ...\n" in mails["alice@example.org"]
    assert "   1 ...        2 1\n" in mails["bob@example.org"]
