"""`pbm status`: the figures a monitoring system watches, and which of them are past the
thresholds of pbm.ini's [status] section."""

from datetime import timedelta

from .clock import now, parse_stamp, stamp
from .replica import describe, lag

ACTIVE_DAYS = 30
MEGABYTE = 1024 * 1024


def gather(config) -> dict:
    """Every figure, read in one short read transaction."""
    from .plugins import get_migration_sets
    from .store import Store

    moment = now()
    store = Store.open(config.db_path)
    try:
        with store.snapshot():
            outbox = {row.status: row for row in store.outbox.health()}
            last_cleanup = store.limits.last_audit_at("cleanup")
            held_back = store.limits.held_mail_count()
            since = stamp(moment - timedelta(days=ACTIVE_DAYS))
            activity = {
                "boards_active": sum(store.boards.active_counts().values()),
                f"boards_moved_{ACTIVE_DAYS}d": store.boards.count_moved_since(since),
                f"players_moved_{ACTIVE_DAYS}d": store.boards.count_players_moved_since(since),
            }
            failing = [
                {
                    "address": row.address,
                    "since": row.since,
                    "reason": row.reason,
                    "userids": store.delivery.owners(row.address),
                }
                for row in store.delivery.failing()
            ]
            sets = get_migration_sets()
            pending = store.core_pending() + (store.pending_migrations(sets) if sets else [])
            withheld = store.limits.count_rate_events(
                "answer_withheld", stamp(moment - timedelta(days=1))
            )
        sizes = store.file_sizes()
    finally:
        store.close()

    def age_minutes(at):
        return None if at is None else int((moment - parse_stamp(at)).total_seconds() // 60)

    waiting = [outbox[s] for s in ("pending", "sending") if s in outbox]
    replica = lag(config)
    oldest_waiting = min((r.oldest_at for r in waiting), default=None)
    failed = outbox.get("failed")
    return {
        "at": stamp(moment),
        "outbox": {
            "queued": sum(r.count for r in waiting),
            "queued_oldest_minutes": age_minutes(oldest_waiting),
            "failed": failed.count if failed else 0,
            "failed_oldest_minutes": age_minutes(failed.oldest_at) if failed else None,
            # Held back by the unconfirmed-address cap, their players not yet told.
            "held_back": held_back,
        },
        "cleanup": {
            "last_run": last_cleanup,
            "hours_ago": None if last_cleanup is None else age_minutes(last_cleanup) // 60,
        },
        "database": {"bytes": sizes["database"], "wal_bytes": sizes["wal"]},
        "pending_migrations": [f"{name}: {step}" for name, step in pending],
        "activity": activity,
        # Addresses pbm no longer mails because they bounce (docs/spec/server.md §5.9): the
        # players' to cure, so listed but no problem of the server's.
        "failing_addresses": failing,
        # Answers not sent past the per-address caps (docs/spec/server.md §7.1), last 24 h.
        "answers": {"withheld_24h": withheld},
    } | ({"replica": replica} if replica is not None else {})


def problems(config, figures: dict) -> list[str]:
    """What is past a threshold, in words."""
    found = []
    outbox, cleanup = figures["outbox"], figures["cleanup"]
    limit = config.number("status.max_queued")
    if outbox["queued"] > limit:
        found.append(f"{outbox['queued']} mails queued (more than {limit})")
    limit = config.number("status.max_mail_age_minutes")
    if outbox["queued_oldest_minutes"] is not None and outbox["queued_oldest_minutes"] > limit:
        found.append(
            f"the oldest queued mail waits for {outbox['queued_oldest_minutes']} "
            f"minutes (more than {limit})"
        )
    limit = config.number("status.max_failed")
    if outbox["failed"] > limit:
        found.append(f"{outbox['failed']} mails failed (more than {limit}): see `pbm outbox list`")
    limit = config.number("status.max_cleanup_age_hours")
    if cleanup["last_run"] is None:
        found.append("cleanup has never run: add `pbm cleanup` to cron")
    elif cleanup["hours_ago"] > limit:
        found.append(f"cleanup last ran {cleanup['hours_ago']} hours ago (more than {limit})")
    limit = config.number("status.max_wal_megabytes")
    if figures["database"]["wal_bytes"] > limit * MEGABYTE:
        found.append(
            f"the write-ahead log holds {figures['database']['wal_bytes'] // MEGABYTE} "
            f"MB (more than {limit})"
        )
    if figures["pending_migrations"]:
        found.append(f"{len(figures['pending_migrations'])} migrations pending: run `pbm migrate`")
    replica = figures.get("replica")
    limit = config.number("status.max_replica_lag_seconds")
    if replica is not None and replica["lag_seconds"] is None:
        found.append(f"the replica's lag is unknown: {describe(replica)}")
    elif replica is not None and replica["lag_seconds"] > limit:
        found.append(f"the replica lags {replica['lag_seconds']} s (more than {limit})")
    return found


def text_lines(figures: dict, found: list[str]) -> list[str]:
    outbox, cleanup, database = figures["outbox"], figures["cleanup"], figures["database"]

    def minutes(value):
        return "" if value is None else f", oldest {value} min"

    lines = [
        f"outbox:     {outbox['queued']} queued{minutes(outbox['queued_oldest_minutes'])}; "
        f"{outbox['failed']} failed{minutes(outbox['failed_oldest_minutes'])}",
        f"held back:  {outbox['held_back']} mails to unconfirmed addresses, their players "
        "not yet told",
        "cleanup:    "
        + (
            f"last run {cleanup['last_run']} ({cleanup['hours_ago']} h ago)"
            if cleanup["last_run"]
            else "never run"
        ),
        f"database:   {database['bytes']} bytes, WAL {database['wal_bytes']} bytes",
        "migrations: " + (", ".join(figures["pending_migrations"]) or "none pending"),
        "activity:   " + ", ".join(f"{k} {v}" for k, v in figures["activity"].items()),
        f"answers:    {figures['answers']['withheld_24h']} withheld in 24 h (per-address caps)",
    ]
    lines.append(f"failing:    {len(figures['failing_addresses'])} addresses bounce")
    for entry in figures["failing_addresses"]:
        owners = ", ".join(entry["userids"]) or "no account"
        lines.append(f"  {entry['address']} ({owners}) since {entry['since']}: {entry['reason']}")
    if "replica" in figures:
        lines.append(f"replica:    {describe(figures['replica'])}")
    return lines + [f"problem: {line}" for line in found]
