"""The base of every concern's repository: its share of the one connection."""


class Repository:
    """Queries of one concern, run on the Store's connection inside its transactions."""

    def __init__(self, store):
        self.store = store
        self.conn = store.conn

    def _records(self, record, sql, params=(), decode=None):
        """Each row as a `record`, its fields read from the columns of the same names;
        `decode` maps a field to what turns its stored text into the value (JSON, say)."""
        cursor = self.conn.execute(sql, params)
        columns = [d[0] for d in cursor.description]
        names = [n for n in record._fields if n in columns]
        at = [columns.index(n) for n in names]
        records = []
        for row in cursor.fetchall():
            values = dict(zip(names, (row[i] for i in at)))
            for name, convert in (decode or {}).items():
                values[name] = convert(values[name])
            records.append(record(**values))
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
