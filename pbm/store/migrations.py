"""The core's schema, as the steps of its sqlite-utils migration set ("pbm"), in order.

A step is never changed once released: a new table, column or index is a new step at the
end. `pbm migrate` applies the steps a database lacks; the mail pipe and `pbm serve` refuse
to run (exit 75, 451) while any is pending; `pbm restore` compares a backup's schema with the
one these steps make (schema.py).
"""

from functools import lru_cache

from . import steps_from_m012, steps_m001_m011

CORE_SET = "pbm"
_CORE_STEPS = [*steps_m001_m011.STEPS, *steps_from_m012.STEPS]


@lru_cache(maxsize=1)
def core_migrations():
    """The core's sqlite-utils migration set. Built on demand: importing sqlite_utils costs
    more than a whole mail command, and only `pbm init` and `pbm migrate` need it."""
    # deferred: see above
    import sqlite_utils

    migrations = sqlite_utils.Migrations(CORE_SET)
    for step in _CORE_STEPS:
        migrations()(step)
    return migrations


def core_step_names() -> list[str]:
    return [step.__name__ for step in _CORE_STEPS]
