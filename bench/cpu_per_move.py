"""CPU per accepted `move` mail on `pbm serve`'s writer path, measured in process.

Each move is a real RFC 822 message run through intake.process_message with pbm serve's own
MailService as the pipeline (its early password check, its PasswordCache, its writer's
DirectServer), only called inline instead of on its threads so that one process_time and one
cProfile see all of it. Text-only mail, Maildir delivery, as `make bench` section 2 uses; with
--html every player gets the board's picture in an HTML part (`[mail] html = on`, the
default of a new home), issue 31's "at most 4 ms with pictures".

    python bench/cpu_per_move.py [--moves N] [--html] [--profile] [--root CHECKOUT]
    python bench/cpu_per_move.py --batch N [--moves TOTAL] [--html] [--root CHECKOUT]

prints `cpu_ms_per_move <figure>` (and with --profile the top of the profile). --root runs
another checkout's code (the base commit, for a before/after from the same run).

With --batch the moves are played N at a time, one batch for each line read on standard
input, and each batch's CPU per move printed: bench.py keeps several such processes (this
checkout and the base, each text-only and with pictures, and bench/move_floor.py) and asks
them in turn, so that all are measured within the same second over and over, and a shared
machine whose speed changes from one second to the next slows them alike.
"""

import argparse
import cProfile
import io
import pstats
import sys
import tempfile
import time
from concurrent.futures import Future
from pathlib import Path

PLIES_PER_BOARD = 100  # a 13x13 Lox game lasts longer than this


def _bench_helpers():
    """bench.py's setup helpers (init_home, pbm, move_script, mail) without its own
    sys.path change, so that --root decides which pbm is measured."""
    import importlib.util

    path = Path(__file__).resolve().parent / "bench.py"
    saved = list(sys.path)
    spec = importlib.util.spec_from_file_location("pbm_bench_helpers", path)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path[:] = saved
    return module


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--moves", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--batch", type=int, default=0)
    parser.add_argument("--html", action="store_true")
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--root", default=str(Path(__file__).resolve().parent.parent))
    args = parser.parse_args()
    root = Path(args.root).resolve()
    sys.path.insert(0, str(root))
    import pbm.cli  # noqa: F401  (the code under test, loaded before bench.py's path change)

    helpers = _bench_helpers()

    from pbm.config import Config  # noqa: E402
    from pbm.intake import process_message  # noqa: E402
    from pbm.serve import Command, MailService  # noqa: E402

    assert Path(sys.modules["pbm"].__file__).resolve().is_relative_to(root), "wrong checkout"

    class InlineService(MailService):
        """pbm serve's handler with its writer's work, a group of one command, done on the
        calling thread: what the writer's CPU a move is."""

        def run(self, request, refusal, early):
            outcome = Future()
            self._run_group([Command(request, refusal, early, outcome)], [])
            return outcome.result()

    with tempfile.TemporaryDirectory(prefix="pbm-cpu-") as tmp:
        home = helpers.init_home(Path(tmp) / "home")
        if args.html:  # before the players sign up: each takes the home's default
            (home / "pbm.ini").write_text(helpers.LIMITS + "[mail]\nhtml = on\n")
        # The first moves pay argon2 once per player and fill the template caches.
        boards = -(-args.moves // (PLIES_PER_BOARD - 2))
        warmup = max(args.warmup, 2 * boards)
        total = warmup + args.moves
        # Two players of their own on each board, as on a server with many players: a
        # player's reads (their rate limit's among them) then grow with their own moves only.
        for board in range(boards):
            for colour in ("white", "black"):
                userid = f"{colour}{board}"
                helpers.pbm(home, "signup", userid, "secret", f"{userid}@bench.example")
            helpers.pbm(
                home,
                helpers.GAME,
                "challenge",
                f"white{board}",
                f"black{board}",
                f"-size={helpers.SIZE}",
            )
        script = helpers.move_script(-(-total // boards))
        mails = []
        for ply, move in enumerate(script, start=1):
            colour = "white" if ply % 2 else "black"
            for board in range(boards):
                userid = f"{colour}{board}"
                message = helpers.mail(
                    f"{userid}@bench.example",
                    f"{helpers.GAME} move {101 + board} {userid} secret {move}#{ply}",
                    f"{board}-{ply}",
                )
                mails.append((f"{userid}@bench.example", message.as_bytes()))
        mails = mails[:total]
        config = Config.load(home)
        service = InlineService(config)

        def play(batch):
            for sender, raw in batch:
                outcome = process_message(raw, len(raw), sender, pipeline=service, config=config)
                assert outcome.consumed and outcome.result.ok, outcome

        play(mails[:warmup])
        measured = mails[warmup:]
        try:
            if args.batch:
                play_in_batches(play, measured, args.batch)
                return
            # CPU time, as the figure: a wall-clock profile would be mostly the fsyncs.
            profiler = cProfile.Profile(time.process_time) if args.profile else None
            start_cpu, start_wall = time.process_time(), time.perf_counter()
            if profiler:
                profiler.enable()
            play(measured)
            if profiler:
                profiler.disable()
            cpu = (time.process_time() - start_cpu) / len(measured) * 1000
            wall = (time.perf_counter() - start_wall) / len(measured) * 1000
        finally:
            service._close_database()  # opened on this thread, closed on it
            service.close()
        print(f"cpu_ms_per_move {cpu:.3f}")
        print(f"wall_ms_per_move {wall:.3f}")
        if profiler:
            out = io.StringIO()
            stats = pstats.Stats(profiler, stream=out)
            stats.sort_stats("tottime").print_stats(args.top)
            out.write("\n")
            stats.sort_stats("cumulative").print_stats(args.top)
            print(out.getvalue())


def play_in_batches(play, moves, size: int) -> None:
    """`size` moves for each line read on standard input, each batch's CPU a move printed:
    bench.py asks its processes in turn (bench.interleaved)."""
    print("ready", flush=True)
    for start in range(0, len(moves), size):
        if not sys.stdin.readline():
            break
        batch = moves[start : start + size]
        before = time.process_time()
        play(batch)
        print(f"{(time.process_time() - before) / len(batch) * 1000:.4f}", flush=True)


if __name__ == "__main__":
    main()
