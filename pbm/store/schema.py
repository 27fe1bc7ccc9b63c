"""Whether a database holds pbm's schema and nothing else: `pbm restore` puts back only
what pbm's own migrations make (docs/security.md, issue 25). One extra trigger in a backup
(a copy of every outgoing mail, reset codes included, to an outside address) would
otherwise run on every command after the restore.

The database's tables, indexes, views and triggers are compared, by type, name, table and
normalised SQL, with those of an empty database to which the same migrations (core and
plugins, the ones the database records as applied) are applied here."""

import re
import sqlite3

MIGRATIONS_TABLE = "_sqlite_migrations"
# Litestream's own bookkeeping (replication, issue 32): tables only, left as they are.
LITESTREAM_TABLES = {"_litestream_seq", "_litestream_lock"}
# Tables SQLite makes itself (AUTOINCREMENT, ANALYZE), each with the only SQL it gives them.
SQLITE_TABLES = {
    "sqlite_sequence": "CREATE TABLE sqlite_sequence(name,seq)",
    "sqlite_stat1": "CREATE TABLE sqlite_stat1(tbl,idx,stat)",
    "sqlite_stat4": "CREATE TABLE sqlite_stat4(tbl,idx,neq,nlt,ndlt,sample)",
}

_TOKEN = re.compile(
    r"""'(?:[^']|'')*'|"(?:[^"]|"")*"|\[[^\]]*\]|`(?:[^`]|``)*`|[A-Za-z0-9_$]+|\S"""
)


class SchemaError(Exception):
    """The database's migrations cannot be replayed here; the message says why."""


def normalised_sql(sql: str | None) -> str | None:
    """The SQL with layout, letter case and the style of identifier quoting ([x], "x",
    `x`) made uniform: what differs between sqlite-utils versions and means nothing.
    String literals are kept as they are; a bare word stays apart from a quoted one."""
    if sql is None:
        return None
    tokens = []
    for token in _TOKEN.findall(sql):
        if token[0] == "'":
            tokens.append(token)
        elif token[0] in '"`' and len(token) > 1:
            name = token[1:-1].replace(token[0] * 2, token[0])
            tokens.append('"' + name.lower().replace('"', '""') + '"')
        elif token[0] == "[" and len(token) > 1:
            tokens.append('"' + token[1:-1].lower().replace('"', '""') + '"')
        else:
            tokens.append(token.lower())
    return " ".join(tokens)


def schema_objects(conn) -> dict:
    """(type, name) -> (table, normalised SQL) for every object in sqlite_master."""
    rows = conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master").fetchall()
    return {
        (kind, name.lower()): ((table or "").lower(), normalised_sql(sql))
        for kind, name, table, sql in rows
    }


def applied_migrations(conn) -> dict[str, list[str]]:
    """The migrations the database records, by set, in the order they were applied."""
    exists = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (MIGRATIONS_TABLE,)
    ).fetchone()
    if not exists:
        return {}
    applied: dict[str, list[str]] = {}
    for migration_set, name in conn.execute(
        f"SELECT migration_set, name FROM {MIGRATIONS_TABLE} ORDER BY rowid"
    ):
        applied.setdefault(migration_set, []).append(name)
    return applied


def reference_objects(applied: dict[str, list[str]], migration_sets) -> dict:
    """The schema objects pbm's migrations make when exactly `applied` are run on an empty
    database; SchemaError when a set or a migration is unknown here, or the database's
    migrations of a set are not the first ones of it (one skipped cannot be replayed)."""
    # deferred: sqlite_utils costs more to import than a mail command (core_migrations)
    import sqlite_utils

    known = {migrations.name: migrations for migrations in migration_sets}
    unknown_sets = sorted(set(applied) - set(known))
    if unknown_sets:
        raise SchemaError(
            f"its database has migrations of {', '.join(unknown_sets)}, unknown here: "
            "install the pbm or game plugin that made it first"
        )
    conn = sqlite3.connect(":memory:")
    try:
        db = sqlite_utils.Database(conn, execute_plugins=False)
        for name, migrations in known.items():
            done = applied.get(name, [])
            order = [migration.name for migration in migrations.pending(db)]
            unknown = [step for step in done if step not in order]
            if unknown:
                raise SchemaError(
                    f"it was made by a newer pbm or game (migrations {', '.join(unknown)} "
                    f"of {name} are unknown here): upgrade first"
                )
            if not done:
                continue
            later = [step for step in order if step not in done]
            migrations.apply(db, stop_before=later[0] if later else None)
            if [m.name for m in migrations.applied(db)] != order[: len(done)]:
                raise SchemaError(
                    f"its migrations of {name} skip some: they cannot be replayed to check it"
                )
        return schema_objects(conn)
    finally:
        conn.close()


def foreign_objects(conn, migration_sets) -> list[str]:
    """What the database's schema holds beyond what its migrations make here, makes
    otherwise, or lacks: one phrase each, such as "trigger copy_out"."""
    found = schema_objects(conn)
    expected = reference_objects(applied_migrations(conn), migration_sets)
    problems = []
    for (kind, name), (table, sql) in sorted(found.items()):
        if kind == "table" and name in LITESTREAM_TABLES:
            continue
        if kind == "table" and name in SQLITE_TABLES:
            if sql != normalised_sql(SQLITE_TABLES[name]):
                problems.append(f"table {name} (not as SQLite makes it)")
            continue
        if (kind, name) not in expected:
            problems.append(f"{kind} {name}")
        elif expected[(kind, name)] != (table, sql):
            problems.append(f"{kind} {name} (not as pbm's migrations make it)")
    for kind, name in sorted(set(expected) - set(found)):
        if not (kind == "table" and name in SQLITE_TABLES):
            problems.append(f"{kind} {name} (missing)")
    return problems
