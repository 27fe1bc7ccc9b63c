"""The base of every concern's repository: its share of the one connection."""


class Repository:
    """Queries of one concern, run on the Store's connection inside its transactions."""

    def __init__(self, store):
        self.store = store
        self.conn = store.conn

    def _rows(self, sql, params=()):
        cursor = self.conn.execute(sql, params)
        names = [d[0] for d in cursor.description]
        return [dict(zip(names, row)) for row in cursor.fetchall()]

    def _row(self, sql, params=()):
        rows = self._rows(sql, params)
        return rows[0] if rows else None

    def _value(self, sql, params=()):
        row = self.conn.execute(sql, params).fetchone()
        return row[0] if row else None
