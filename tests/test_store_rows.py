"""How the store hands rows out (pbm/store/repository.py, records.py): a record's fields are
read from the columns of the same names, whatever the query selects and in whatever order;
a field it does not select takes its default, or the query fails; `decode` turns a stored
text into its value. And the inbox records a mail's key once (the duplicate check)."""

import sqlite3
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pbm.dispatch import open_server
from pbm.store.records import Record
from pbm.store.repository import Repository
from tests.conftest import STRESS_FACTOR


class Sample(Record):
    id: int
    name: str
    note: str | None = None
    tags: list | None = None


def repository():
    return Repository(SimpleNamespace(conn=sqlite3.connect(":memory:")))


def by_name(record, columns, row, decode):
    """What a row means, spelt out: each field from its column by name, else its default."""
    values = {}
    for name in record._fields:
        if name in columns:
            values[name] = row[columns.index(name)]
        else:
            values[name] = record._defaults[name]
    for name, convert in decode.items():
        values[name] = convert(values[name])
    return record(**values)


columns_drawn = st.lists(
    st.sampled_from(["id", "name", "note", "tags", "extra"]), unique=True, min_size=0
).map(lambda found: [c for c in found if c not in ("id", "name")] + ["id", "name"])


@settings(max_examples=100 * STRESS_FACTOR, deadline=None)
@given(columns=columns_drawn.flatmap(st.permutations), rows=st.integers(0, 3))
def test_fields_come_from_the_columns_of_their_names(columns, rows):
    store = repository()
    store.conn.execute(f"CREATE TABLE t ({', '.join(columns)})")
    made = []
    for number in range(rows):
        row = tuple(f'["{c}{number}"]' if c == "tags" else f"{c}{number}" for c in columns)
        store.conn.execute(f"INSERT INTO t VALUES ({', '.join('?' * len(columns))})", row)
        made.append(row)
    decode = {"tags": lambda text: text and text.strip('[]"').split(",")}
    found = store._records(Sample, "SELECT * FROM t ORDER BY rowid", decode=decode)
    assert found == [by_name(Sample, columns, row, decode) for row in made]
    assert all(type(record) is Sample for record in found)
    assert [record.name for record in found] == [f"name{n}" for n in range(rows)]


def test_a_field_without_a_column_or_a_default_fails_the_query():
    store = repository()
    store.conn.execute("CREATE TABLE t (id, note)")
    assert store._records(Sample, "SELECT * FROM t") == []
    store.conn.execute("INSERT INTO t VALUES (1, 'x')")
    with pytest.raises(TypeError, match="needs the field name"):
        store._records(Sample, "SELECT * FROM t")


def test_the_inbox_records_a_key_once_and_forgets_it_with_its_command(harness):
    with open_server(harness.config) as server:
        limits = server.store.limits
        with server.store.write():
            assert limits.inbox_record("<a@x>", "2026-11-28T00:00:00+00:00")
            assert not limits.inbox_record("<a@x>", "2026-11-28T00:00:01+00:00")
            with pytest.raises(RuntimeError), server.store.savepoint():
                assert limits.inbox_record("<b@x>", "2026-11-28T00:00:00+00:00")
                raise RuntimeError("the command failed")
        assert limits.inbox_seen("<a@x>") and not limits.inbox_seen("<b@x>")
