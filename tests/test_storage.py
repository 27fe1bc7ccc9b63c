"""Storage promises: the log is the truth, snapshots only a cache; SQL only in pbm/store."""

import ast
import json
import re
from pathlib import Path

import pytest

from pbm.position import replay
from pbm.store import BoardRecord, PlyRecord, Store, UserRecord
from tests.conftest import ROOT
from tests.test_architecture import import_graph


def play_some_boards(harness):
    harness.signup("alice", "bob", "carol")
    harness.challenge("knightpanic challenge alice bob")
    for userid, move in [("alice", "c1-a5"), ("bob", "a7-c3"), ("alice", "g1-e5")]:
        harness.ok(f"knightpanic move 101 {userid} secret {move}")
    harness.challenge("knightpanic challenge bob carol -size=6")
    harness.ok("knightpanic move 102 bob secret c3-e7")
    harness.challenge("tally challenge alice bob carol")
    harness.ok("tally move 101 alice secret 2")
    harness.challenge("knightpanic challenge alice carol")
    harness.ok("knightpanic move 103 alice secret c1-e5")
    harness.ok("knightpanic move 103 carol secret a7-c3")


def test_every_snapshot_equals_a_replay_of_the_log(harness):
    play_some_boards(harness)
    from pbm.plugins import get_games

    games = get_games()
    store = Store.open(harness.home / "pbm.db")
    checked = 0
    for row in store.boards.all():
        game = games[row.game]
        position = replay(
            game,
            json.loads(row.options),
            store.boards.seat_userids(row.id),
            row.seed,
            store.boards.plies(row.id),
        )
        assert row.snapshot_ply == position.plies_made
        assert json.loads(row.snapshot_state) == position.state
        checked += 1
    assert checked == 4
    assert store.integrity_check() == "ok"


def test_rows_are_immutable_records_and_a_column_added_later_is_not_seen(harness):
    play_some_boards(harness)
    store = Store.open(harness.home / "pbm.db")
    store.conn.execute("ALTER TABLE boards ADD COLUMN added_by_a_later_migration TEXT")
    board = store.boards.get("knightpanic", 101)
    assert isinstance(board, BoardRecord) and (board.game, board.number) == ("knightpanic", 101)
    assert not hasattr(board, "added_by_a_later_migration")
    with pytest.raises(AttributeError):
        board.status = "finished"
    plies = store.boards.plies(board.id)
    assert all(isinstance(p, PlyRecord) for p in plies)
    assert [(p.ply, p.userid, p.text) for p in plies] == [
        (1, "alice", "c1-a5"),
        (2, "bob", "a7-c3"),
        (3, "alice", "g1-e5"),
    ]
    assert isinstance(store.users.get("alice"), UserRecord)
    harness.ok("knightpanic move 101 bob secret c7-e3")


def test_a_dropped_or_stale_snapshot_changes_nothing(harness):
    play_some_boards(harness)
    before = harness.ok("knightpanic show 101", sender=None).printed[0].body
    store = Store.open(harness.home / "pbm.db")
    store.conn.execute(
        "UPDATE boards SET snapshot_ply = 1 WHERE number = 101 AND game = 'knightpanic'"
    )
    assert harness.ok("knightpanic show 101", sender=None).printed[0].body == before
    store.conn.execute("UPDATE boards SET snapshot_ply = NULL, snapshot_state = NULL")
    assert harness.ok("knightpanic show 101", sender=None).printed[0].body == before
    harness.ok("knightpanic move 101 bob secret c7-e3")


def test_the_database_uses_wal_and_is_migrated(harness):
    store = Store.open(harness.home / "pbm.db")
    assert store.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    from pbm.store import core_migrations

    assert store.pending_migrations([core_migrations()]) == []
    assert store.core_pending() == []


def test_a_refused_command_leaves_no_trace_but_its_answer(harness):
    harness.signup("alice", "bob")
    harness.challenge("knightpanic challenge alice bob")
    store = Store.open(harness.home / "pbm.db")

    def counts():
        return {
            t: store.conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
            for t in ("boards", "moves", "users", "seats")
        }

    before = counts()
    harness.refused("knightpanic move 101 alice secret c1-c3")
    harness.refused("knightpanic move 101 alice wrong c1-e5")
    assert counts() == before


def _imports(path: Path):
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            yield node.module


SQL_RE = re.compile(
    r"^\s*(SELECT .+ FROM|INSERT INTO|UPDATE \w+ SET|DELETE FROM|CREATE (UNIQUE |TABLE|INDEX)"
    r"|DROP |ALTER TABLE|PRAGMA |BEGIN|COMMIT|SAVEPOINT)"
)


def _string_constants(path: Path):
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            yield node.value


# The modules that start a program, each with an argument list and no shell: the by-mail
# test harness a plugin's tests use hands mail to a handler in a child process, as an MTA
# does (no module of the server imports it); and Litestream's replica is read by Litestream
# itself (`litestream restore`), its format being Litestream's to decode, not pbm's; and
# `pbm serve` starts its reader processes, pbm's own Python (pbm/readerpool.py).
TEST_HARNESS = ROOT / "pbm" / "testing" / "mail.py"
RUNS_A_PROGRAM = {TEST_HARNESS, ROOT / "pbm" / "replica.py", ROOT / "pbm" / "readerpool.py"}


def test_only_storage_touches_sqlite_and_nothing_runs_a_shell():
    store_package = ROOT / "pbm" / "store"
    assert (store_package / "__init__.py").exists()
    for path in sorted((ROOT / "pbm").rglob("*.py")):
        imports = set(_imports(path))
        text = path.read_text()
        if store_package not in path.parents:
            assert not imports & {"sqlite3", "sqlite_utils"}, path
            assert not [s for s in _string_constants(path) if SQL_RE.match(s)], path
        assert "subprocess" not in imports or path in RUNS_A_PROGRAM, path
        assert "os.system" not in text and "shell=True" not in text, path
    importers = [name for name, needs in import_graph().items() if "pbm.testing.mail" in needs]
    assert importers == [], "the server must not import the test harness"
    for path in sorted((ROOT / "games").rglob("*.py")):
        imports = set(_imports(path))
        assert not imports & {"sqlite3", "sqlite_utils", "pbm.store", "smtplib"}, path


def test_passwords_are_never_stored_or_mailed_in_clear(harness):
    harness.signup("alice", password="Sup3rSecret")
    harness.refused("change password alice Sup3rSecret x")
    raw = (harness.home / "pbm.db").read_bytes()
    assert b"Sup3rSecret" not in raw
    for path in harness.outbox_files():
        assert b"Sup3rSecret" not in path.read_bytes()
    store = Store.open(harness.home / "pbm.db")
    assert store.users.password_hash("alice").startswith("$argon2id$")
