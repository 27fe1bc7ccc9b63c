"""The web view in a real browser (issue 18): Chromium from the distribution's packages,
driven by Playwright with that system browser (no browser download), against `pbm web`
served by waitress from a home where every game has an active and a finished board.

Every page kind is opened for every game: its content is checked, no request may fail
and nothing may log an error. The board page of each game is saved as a screenshot into
docs/pictures/<game>-web.png, where the README shows it.
"""

import json
import os
import random
import re
import shutil
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from pbm.plugins import load_game

ROOT = Path(__file__).resolve().parent.parent
PBM = Path(sys.executable).parent / "pbm"
CHROMIUM = Path("/usr/bin/chromium")
SCREENSHOTS = ROOT / "docs" / "pictures"
PASSWORD = "pear99"
PLAYERS = ("alice", "bob", "carol")
# The game, its challenge options and how many plies its active board gets.
BOARDS = (
    ("knightpanic", ["-size=6"], 8),
    ("knightvision", [], 14),
    ("lox", ["-control"], 14),
    ("uknight", [], 14),
    ("knightline", [], 14),
)
HOSTILE_COMMENT = '<script>alert("pwned")</script> & <b>not bold</b>'
# As the tool library's notes say: without the background-networking flags, Chromium's
# calls home are refused by a closed network and logged as errors.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
LIMITS = """
[limits]
commands_per_hour = 100000
signups_per_day = 1000
challenges_per_day = 1000
boards_per_user_per_day = 1000
"""


def ensure_chromium():
    if CHROMIUM.exists():
        return
    if os.geteuid() != 0:
        pytest.fail("make e2e needs root: it installs Chromium from the distribution")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    subprocess.run(["apt-get", "update", "-qq"], check=True, env=env)
    subprocess.run(
        ["apt-get", "install", "-y", "-qq", "--no-install-recommends", "chromium"],
        check=True,
        env=env,
    )


class Home:
    """A pbm home played in through the command line, as an operator or a player would."""

    def __init__(self, path: Path):
        self.path = path
        self.env = dict(os.environ, PBM_HOME=str(path))

    def pbm(self, *words, sender=None, body=None) -> subprocess.CompletedProcess:
        argv = [str(PBM)]
        if sender:
            argv += ["--from", sender]
        if body is not None:
            argv += ["--body", "-"]
        return subprocess.run(
            [*argv, *words], env=self.env, input=body, text=True, capture_output=True
        )

    def command(self, userid, *words, body=None) -> str:
        done = self.pbm(*words, sender=f"{userid}@players.test", body=body)
        assert done.returncode == 0, f"{' '.join(words)}: {done.stdout}{done.stderr}"
        return done.stdout + done.stderr


def fetch(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=30) as response:
        return response.read()


def replayed(game, record):
    """The state after the record's plies, replayed here by the game's own rules."""
    options = record["options"]
    state = game.initial_state(options, len(record["seats"]), 0)
    for ply in record["plies"]:
        if ply["undone"] or ply["kind"] not in ("move", "pass"):
            continue
        seat = game.to_move(state)
        state = game.apply_move(state, seat, game.parse_move(state, seat, ply["text"]))
    return state


def move_that_keeps_playing(engine, rng) -> str:
    """A random move, if one exists that does not end the game: the pages of a board still
    in play are what is checked."""
    moves = sorted(engine.legal_moves(), key=str)
    rng.shuffle(moves)
    for move in moves:
        after = engine.copy()
        after.play(move)
        if after.outcome() is None:
            return engine.move_text(move)
    return engine.move_text(moves[0])


def play_random_plies(home, site, name, number, plies, rng, comment=None):
    game = load_game(name)
    for ply in range(plies):
        record = json.loads(fetch(f"{site}/{name}/{number}.json"))
        state = replayed(game, record)
        seat = game.to_move(state)
        if seat is None:
            return
        move = move_that_keeps_playing(game.engine(state), rng)
        userid = record["seats"][seat]
        last = ply == plies - 1
        home.command(
            userid,
            name,
            "move",
            str(number),
            userid,
            PASSWORD,
            move,
            body=comment if last else None,
        )


def resign_on_move(home, site, name, number):
    """The player on move resigns (out of turn, a resignation would only be queued)."""
    game = load_game(name)
    record = json.loads(fetch(f"{site}/{name}/{number}.json"))
    userid = record["seats"][game.to_move(replayed(game, record))]
    home.command(userid, name, "resign", str(number), userid, PASSWORD)


def new_board(home, name, options, players) -> int:
    said = home.command(players[0], name, "challenge", *players, *options)
    return int(re.search(r"Board (\d+)", said).group(1))


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """`pbm web` on a free port, over a home with an active and a finished board of every
    game; stopped, and its home removed, on the way out."""
    ensure_chromium()
    home = Home(tmp_path_factory.mktemp("web-home"))
    assert home.pbm("init").returncode == 0
    with open(home.path / "pbm.ini", "a", encoding="utf-8") as ini:
        ini.write(LIMITS)
    server = subprocess.Popen(
        [str(PBM), "web", "--host", "127.0.0.1", "--port", "0"],
        env=home.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        banner = server.stdout.readline()
        match = re.search(r"http://127\.0\.0\.1:(\d+)/", banner)
        assert match, f"pbm web did not start: {banner}{server.stdout.read()}"
        url = f"http://127.0.0.1:{match.group(1)}"
        for userid in PLAYERS:
            home.command(userid, "signup", userid, PASSWORD)
        rng = random.Random(18)
        boards = {}
        for name, options, plies in BOARDS:
            players = PLAYERS if name == "knightline" else PLAYERS[:2]
            active = new_board(home, name, options, players)
            play_random_plies(home, url, name, active, plies, rng, comment=HOSTILE_COMMENT)
            finished = new_board(home, name, options, players[:2])
            play_random_plies(home, url, name, finished, 2, rng)
            resign_on_move(home, url, name, finished)
            boards[name] = (active, finished)
        yield url, boards
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        shutil.rmtree(home.path, ignore_errors=True)


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


class Visit:
    """A browser page that records every failed request, error response, console error
    and uncaught exception while it is open."""

    def __init__(self, browser):
        self.context = browser.new_context(viewport={"width": 900, "height": 900})
        self.page = self.context.new_page()
        self.problems = []
        page = self.page
        page.on("requestfailed", lambda r: self.problems.append(f"failed: {r.url} {r.failure}"))
        page.on(
            "response",
            lambda r: self.problems.append(f"{r.status}: {r.url}") if r.status >= 400 else None,
        )
        page.on(
            "console",
            lambda m: (
                self.problems.append(f"console: {m.text} ({m.location.get('url')})")
                if m.type == "error"
                else None
            ),
        )
        page.on("pageerror", lambda e: self.problems.append(f"page error: {e}"))
        page.on("dialog", lambda d: self.problems.append(f"dialog: {d.message}"))

    def open(self, url: str):
        response = self.page.goto(url, wait_until="load")
        assert response is not None and response.status == 200, f"{url}: {response}"
        return response

    def close(self):
        self.context.close()
        assert self.problems == [], f"on {self.page.url}"


@pytest.fixture
def visit(browser):
    opened = Visit(browser)
    yield opened
    opened.close()


def check_html_page(visit, url: str):
    """What every page has: a title, one heading, the way home, no script at all."""
    visit.open(url)
    page = visit.page
    assert page.title()
    assert page.locator("h1").count() == 1
    assert page.locator('a[href="/"]').count() >= 1
    assert page.locator("script").count() == 0
    return page


def test_the_front_page_lists_every_game(site, visit):
    url, boards = site
    page = check_html_page(visit, url + "/")
    for name in boards:
        assert page.locator(f'a[href="/{name}/"]').count() >= 1


@pytest.mark.parametrize("name", [name for name, _, _ in BOARDS])
def test_every_page_of_a_game(site, visit, name):
    url, boards = site
    active, finished = boards[name]
    game = load_game(name)

    page = check_html_page(visit, f"{url}/{name}/")
    assert page.locator(f'a[href="/{name}/{active}"]').count() == 1
    assert page.locator(f'a[href="/{name}/{finished}"]').count() == 0
    page = check_html_page(visit, f"{url}/{name}/finished")
    assert page.locator(f'a[href="/{name}/{finished}"]').count() == 1
    check_html_page(visit, f"{url}/{name}/archived")
    page = check_html_page(visit, f"{url}/{name}/standings")
    assert "alice" in page.content() and "bob" in page.content()
    page = check_html_page(visit, f"{url}/players/alice")
    assert page.locator(f'a[href="/{name}/{active}"]').count() >= 1
    assert "@" not in page.inner_text("body")

    record = json.loads(visit.open(f"{url}/{name}/{active}.json").text())
    made = len(record["plies"])
    assert record["game"] == name and record["board"] == active and made >= 2
    assert "@players.test" not in json.dumps(record)

    page = check_html_page(visit, f"{url}/{name}/{active}")
    assert page.locator(".picture svg").count() == 1
    assert page.locator("ol.moves li").count() == made
    for userid in record["seats"]:
        assert page.locator(f'a[href="/players/{userid}"]').count() >= 1
    # The hostile comment arrives as text: no script ran, no bold was made.
    assert HOSTILE_COMMENT in page.inner_text("pre.comment")
    assert page.locator("pre.comment b").count() == 0
    page.screenshot(path=str(SCREENSHOTS / f"{name}-web.png"), full_page=True)

    page = check_html_page(visit, f"{url}/{name}/{active}?ply=1")
    assert f"after ply 1 of {made}" in page.inner_text("h2 >> nth=1")
    assert page.locator(".picture svg").count() == 1

    page = check_html_page(visit, f"{url}/{name}/{finished}")
    assert "resign" in page.inner_text("body").lower()

    text = visit.open(f"{url}/{name}/{active}.txt").text()
    assert f"{game.display_name} Board {active}" in text or f"Board {active}" in text
    svg = visit.open(f"{url}/{name}/{active}.svg")
    assert svg.headers["content-type"].startswith("image/svg+xml")
    assert visit.page.locator("svg").count() >= 1


def test_unknown_pages_and_methods_are_refused(site):
    url, boards = site
    active = boards["lox"][0]
    for path, status in (
        ("/nosuchgame/", 404),
        ("/lox/999999", 404),
        (f"/lox/{active}?ply=x", 400),
        (f"/lox/{active}?ply=9999", 400),
    ):
        with pytest.raises(urllib.error.HTTPError) as refused:
            fetch(url + path)
        assert refused.value.code == status, path
    request = urllib.request.Request(url + "/", data=b"x", method="POST")
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=30)
    assert refused.value.code == 405
