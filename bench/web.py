"""The web view's speed (docs/spec/server.md §11.8): requests per second of a board page
with 100,000 boards in the database, served by `pbm web` (waitress) in a process of its
own, next to the stylesheet from the same server in the same run; the list of finished
boards (its first page and page 1,000) beside them.

Called by bench/bench.py as web(report, quick); runs alone as `python bench/web.py [--quick]`.
"""

import http.client
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from click.testing import CliRunner  # noqa: E402
from fixtures import LIMITS, populate  # noqa: E402

from pbm.cli import cli  # noqa: E402

PBM = Path(sys.executable).parent / "pbm"
GAME = "lox"
LONG_GAME_PLIES = 60  # the page measured: a running Lox board of 60 plies
CLIENTS = 8
THREADS = 4


def long_game(home: Path) -> int:
    """A running board of LONG_GAME_PLIES plies played through the dispatcher (so it has
    its snapshot, as every running board does); its number."""
    import games.lox
    from pbm.config import Config
    from pbm.dispatch import open_server
    from pbm.request import Request

    game = games.lox.Lox()
    config = Config.load(home)
    with open_server(config) as server:
        for words in ("signup longw secret l@bench.example", "signup longb secret b@bench.example"):
            assert server.execute(Request(text=words)).ok
        assert server.execute(Request(text=f"{GAME} challenge longw longb -size=11")).ok
        [row] = [r for r in server.store.boards.active([GAME]) if r.status == "active"]
        number = row.number
        # The dispatcher dealt the start from its own seed: play on from what it dealt.
        state = game.initial_state(json.loads(row.options), 2, row.seed)
        for ply in range(1, LONG_GAME_PLIES + 1):
            seat = game.to_move(state)
            assert seat is not None, "the game ended early"
            legal = sorted(game.legal_moves(state, seat))
            move = legal[(ply * 7) % len(legal)]
            userid = ("longw", "longb")[seat]
            request = Request(text=f"{GAME} move {number} {userid} secret {move}")
            assert server.execute(request).ok
            state = game.apply_move(state, seat, move)
    return number


def requests_per_second(port: int, path: str, seconds: float) -> float:
    """CLIENTS threads, each on a keep-alive connection, GET `path` for `seconds`."""
    counts = [0] * CLIENTS
    deadline = time.perf_counter() + seconds

    def client(index):
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        while time.perf_counter() < deadline:
            connection.request("GET", path)
            response = connection.getresponse()
            body = response.read()
            assert response.status == 200 and body, (path, response.status)
            counts[index] += 1
        connection.close()

    start = time.perf_counter()
    workers = [threading.Thread(target=client, args=(i,)) for i in range(CLIENTS)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return sum(counts) / (time.perf_counter() - start)


def web(report, quick: bool):
    boards = 2000 if quick else 100_000
    users = 500 if quick else 10_000
    seconds = 3 if quick else 15
    with tempfile.TemporaryDirectory(prefix="pbm-bench-web-") as tmp:
        home = Path(tmp) / "home"
        result = CliRunner().invoke(cli, ["--home", str(home), "init"])
        assert result.exit_code == 0, result.output
        (home / "pbm.ini").write_text(LIMITS)
        start = time.perf_counter()
        populate(home, boards, users)
        number = long_game(home)
        print(f"   (filling {boards} boards took {time.perf_counter() - start:.0f} s)", flush=True)
        env = dict(os.environ, PBM_HOME=str(home))
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        server = subprocess.Popen(
            [str(PBM), "web", "--port", "0", "--threads", str(THREADS)],
            env=env,
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            ready = server.stdout.readline()  # pbm web: serving http://127.0.0.1:<port>/
            assert ready.startswith("pbm web: serving"), ready
            port = int(ready.rstrip("/\n").rpartition(":")[2])
            board = f"/{GAME}/{number}"
            requests_per_second(port, board, 1)  # warm: templates compiled, pages cached by the OS
            page = requests_per_second(port, board, seconds)
            css = requests_per_second(port, "/static/pbm.css", seconds)
            first = requests_per_second(port, f"/{GAME}/finished", seconds)
            deep = requests_per_second(port, f"/{GAME}/finished?page={boards // 100}", seconds)
        finally:
            server.send_signal(signal.SIGINT)
            server.wait(timeout=60)
    setting = f"{boards:,} boards, waitress {THREADS} threads, {CLIENTS} keep-alive clients"
    report(
        f"web view: board page of a {LONG_GAME_PLIES}-ply Lox game, {setting}",
        f"{page:,.0f} requests/s",
        f"/static/pbm.css {css:,.0f} requests/s",
        f"{page / css:.2f}",
    )
    for number, rate in ((1, first), (boards // 100, deep)):
        report(
            f"web view: finished boards, page {number:,} of 50 boards, {setting}",
            f"{rate:,.0f} requests/s",
            f"/static/pbm.css {css:,.0f} requests/s",
            f"{rate / css:.2f}",
        )
    return page, css


if __name__ == "__main__":
    web(lambda *figures: print(" | ".join(figures), flush=True), "--quick" in sys.argv)
