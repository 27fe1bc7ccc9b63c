"""The base of every concern's repository: its share of the one connection."""

from functools import lru_cache


class Repository:
    """Queries of one concern, run on the Store's connection inside its transactions."""

    def __init__(self, store):
        self.store = store
        self.conn = store.conn

    def _records(self, record, sql, params=(), decode=None):
        """Each row as a `record`, its fields read from the columns of the same names;
        `decode` maps a field to what turns its stored text into the value (JSON, say)."""
        cursor = self.conn.execute(sql, params)
        rows = cursor.fetchall()
        if not rows:
            return []
        picks = _layout(record, tuple(d[0] for d in cursor.description))
        converts = [
            (record._fields.index(name), convert) for name, convert in (decode or {}).items()
        ]
        records = []
        for row in rows:
            values = [row[at] if at is not None else default for at, default in picks]
            for index, convert in converts:
                values[index] = convert(values[index])
            records.append(tuple.__new__(record, values))
        return records

    def _record(self, record, sql, params=(), decode=None):
        records = self._records(record, sql, params, decode)
        return records[0] if records else None

    def _column(self, sql, params=()) -> list:
        """The first column of every row."""
        return [row[0] for row in self.conn.execute(sql, params).fetchall()]

    def _value(self, sql, params=()):
        row = self.conn.execute(sql, params).fetchone()
        return row[0] if row else None


_MISSING = object()


@lru_cache(maxsize=512)
def _layout(record, columns: tuple[str, ...]) -> tuple[tuple[int | None, object], ...]:
    """For each field of `record`, the index of its column, or None and its default: a
    record is built from a row without naming its fields (building a board's row by name
    took four times the query's own CPU)."""
    picks: list[tuple[int | None, object]] = []
    for name in record._fields:
        if name in columns:
            picks.append((columns.index(name), None))
        elif record._defaults.get(name, _MISSING) is not _MISSING:
            picks.append((None, record._defaults[name]))
        else:
            raise TypeError(f"{record.__name__} needs the field {name}")
    return tuple(picks)
