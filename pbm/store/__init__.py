"""All of pbm's SQL: the schema, its migrations, and every query the core runs, by concern.

`Store` holds the connection and its transactions; `store.users`, `store.boards`,
`store.votes`, `store.watching`, `store.ratings`, `store.limits` and `store.outbox`
hold the queries of one concern each.
"""

from .connection import Store, core_migrations, is_busy_or_full

__all__ = ["Store", "core_migrations", "is_busy_or_full"]
