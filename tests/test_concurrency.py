"""Concurrent mail: 8 mail_handler.py processes at once on a few shared boards.

Moves in and out of turn, stale #moveno guards and duplicates race each other; afterwards
every board's log is exactly the accepted moves, no ply is duplicated or lost, and each
accepted move produced exactly one mail per recipient. `make stress` runs it bigger
(PBM_STRESS=1)."""

import email
import email.policy
import random
from concurrent.futures import ThreadPoolExecutor

from click.testing import CliRunner

import games.knightpanic
from pbm.cli import cli
from pbm.store import Store
from pbm.testing import random_game
from tests.conftest import GENEROUS_LIMITS, STRESS_FACTOR
from tests.mailpipe import command_mail, pipe

STRESS = STRESS_FACTOR > 1
BOARDS = 8 if STRESS else 4
PLIES = 10 if STRESS else 5  # 5 messages a ply: 400 messages under stress, 100 otherwise
WORKERS = 8


def message(sender, subject, tag):
    """(tag, raw mail): the tag names the message in its Message-ID and its comment."""
    return tag, command_mail(sender, subject, f"msg {tag}\n", f"<{tag}@race.example>")


def scripts(count, plies):
    game = games.knightpanic.KnightPanic()
    options = game.parse_options({"size": "6"}, 2)
    found, seed = [], 0
    while len(found) < count:
        moves, _ = random_game(game, options, 2, seed, max_plies=plies)
        if len(moves) == plies:
            found.append(moves)
        seed += 1
    return found


def test_concurrent_mail_keeps_every_board_consistent(project_env, tmp_path):
    home = tmp_path / "home"
    runner = CliRunner()
    assert runner.invoke(cli, ["--home", str(home), "init"]).exit_code == 0
    (home / "pbm.ini").write_text(GENEROUS_LIMITS)
    players = {}
    for b in range(BOARDS):
        players[b] = (f"w{b}", f"b{b}")
        for userid in players[b]:
            assert (
                runner.invoke(
                    cli,
                    [
                        "--home",
                        str(home),
                        "signup",
                        userid,
                        "pw" + userid,
                        f"{userid}@race.example",
                    ],
                ).exit_code
                == 0
            )
        assert (
            runner.invoke(
                cli, ["--home", str(home), "knightpanic", "challenge", *players[b], "-size=6"]
            ).exit_code
            == 0
        )
    boards = scripts(BOARDS, PLIES)
    rng = random.Random(7)
    expectation = {}  # tag -> "accepted-or-twin" | "refused" | "duplicate"
    sent = 0
    with ThreadPoolExecutor(WORKERS) as pool:
        for ply in range(1, PLIES + 1):
            wave = []
            for b, script in enumerate(boards):
                number = 101 + b
                mover, waiting = players[b][(ply - 1) % 2], players[b][ply % 2]
                move = script[ply - 1]
                correct = message(
                    f"{mover}@race.example",
                    f"knightpanic move {number} {mover} pw{mover} {move}#{ply}",
                    f"b{number}-p{ply}-guarded",
                )
                twin = message(
                    f"{mover}@race.example",
                    f"knightpanic move {number} {mover} pw{mover} {move}",
                    f"b{number}-p{ply}-unguarded",
                )
                out_of_turn = message(
                    f"{waiting}@race.example",
                    f"knightpanic move {number} {waiting} pw{waiting} "
                    f"{script[min(ply, PLIES - 1)]}#{ply}",
                    f"b{number}-p{ply}-outofturn",
                )
                stale = message(
                    f"{mover}@race.example",
                    f"knightpanic move {number} {mover} pw{mover} {move}#{ply - 1}",
                    f"b{number}-p{ply}-stale",
                )
                wave += [correct, twin, correct, out_of_turn, stale]
                expectation[correct[0]] = expectation[twin[0]] = "one of the pair"
                expectation[out_of_turn[0]] = expectation[stale[0]] = "refused"
            rng.shuffle(wave)
            results = list(pool.map(lambda item: pipe(project_env, item[1]), wave))
            sent += len(wave)
            assert all(r.returncode == 0 for r in results), [
                r.stderr[-500:] for r in results if r.returncode
            ]
    assert sent == BOARDS * PLIES * 5

    store = Store.open(home / "pbm.db")
    assert store.integrity_check() == "ok"
    for b, script in enumerate(boards):
        row = store.boards.get("knightpanic", 101 + b)
        plies = store.boards.plies(row.id)
        assert [p.text for p in plies] == script, "the log is exactly the accepted moves"
        assert [p.ply for p in plies] == list(range(1, PLIES + 1))
        assert row.snapshot_ply == PLIES

    by_tag = {}
    for path in (home / "outbox" / "new").iterdir():
        mail = email.message_from_bytes(path.read_bytes(), policy=email.policy.default)
        lines = mail.get_content().splitlines()
        # An error keeps the board's subject (docs/spec/server.md §5.3): known by its quote.
        if "Original message follows:" in lines:
            kind, marker = "error", "> msg "  # the quoted original names the refused message
        else:
            kind, marker = "board", "msg "  # the comment names the move that was played
        tag = next((line[len(marker) :] for line in lines if line.startswith(marker)), None)
        if tag is not None:
            by_tag.setdefault(tag, []).append((kind, mail["To"]))
    for b in range(BOARDS):
        number = 101 + b
        for ply in range(1, PLIES + 1):
            pair = [f"b{number}-p{ply}-guarded", f"b{number}-p{ply}-unguarded"]
            outcomes = [sorted(by_tag.get(tag, [])) for tag in pair]
            accepted = [o for o in outcomes if o and o[0][0] == "board"]
            assert len(accepted) == 1, (number, ply, outcomes)
            assert sorted(to for _, to in accepted[0]) == sorted(
                f"{u}@race.example" for u in players[b]
            ), "one mail per recipient"
            refused = [o for o in outcomes if o is not accepted[0]]
            assert refused == [[("error", refused[0][0][1])]] if refused[0] else refused == [[]]
            for kind in ("outofturn", "stale"):
                mails = by_tag.get(f"b{number}-p{ply}-{kind}", [])
                assert [k for k, _ in mails] == ["error"], (number, ply, kind, mails)
    mails = sum(len(v) for v in by_tag.values())
    print(
        f"\nmessages: {sent} from {WORKERS} processes at once on {BOARDS} boards; "
        f"plies played: {BOARDS * PLIES}; mails checked: {mails}; lost or doubled: none"
    )
