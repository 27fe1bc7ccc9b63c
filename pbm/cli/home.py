"""The operator's subcommands for the home: init, check, migrate, status, backup and
restore (docs/spec/server.md §6, §6.1)."""

import os
import secrets
import sys

import click

from ..config import Config, default_ini_text
from ..private import make_folders, private_opener
from .group import EX_REFUSED, cli


@cli.command()
@click.pass_obj
def init(obj):
    """Create the home: pbm.ini, secret.key, the outbox and the database."""
    config = obj["config"]
    home = config.home
    for sub in ("", "outbox/tmp", "outbox/new", "outbox/cur", "templates", "log"):
        make_folders(home / sub)
    ini = home / "pbm.ini"
    if not ini.exists():
        with open(ini, "w", encoding="utf-8", opener=private_opener) as handle:
            handle.write(default_ini_text())
    key = home / "secret.key"
    if not key.exists():
        descriptor = os.open(key, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(secrets.token_bytes(32))
    applied = migrate_home(Config.load(home))
    click.echo(f"pbm home ready at {home} ({applied} migrations applied)")


def migrate_home(config) -> int:
    # deferred: start-up speed of the pbm command
    from ..plugins import get_migration_sets
    from ..store import Store, core_migrations

    sets = [core_migrations()] + get_migration_sets()
    make_folders(config.home)
    store = Store.open(config.db_path)
    try:
        pending = store.pending_migrations(sets)
        store.apply_migrations(sets)
        store.enable_wal()
        return len(pending)
    finally:
        store.close()


@cli.command()
@click.pass_obj
def check(obj):
    """Report what would make incoming mail wait (permissions, database, pbm.ini, disk) and
    what others could read in the home."""
    # deferred: start-up speed of the pbm command
    from ..check import problems, replica_line, shared_problems

    home = obj["config"].home
    found, shared = problems(home), shared_problems(home)
    for line in found + shared:
        click.echo(f"problem: {line}")
    replica = replica_line(obj["config"])
    if replica is not None:
        click.echo(f"replica: {replica}")
    if found:
        click.echo(f"pbm check: {len(found)} problem(s); mail would be left with the MTA", err=True)
    if shared:
        click.echo(f"pbm check: others can read {home}; make it private", err=True)
    if found or shared:
        sys.exit(EX_REFUSED)
    click.echo(f"pbm check: {home} is ready for mail")
    from ..dnsrecords import dns_records

    click.echo("DNS records to publish for the server's mail (docs/delivery.md):")
    for line in dns_records(obj["config"]):
        click.echo(f"  {line}")


@cli.command()
@click.option("--list", "list_only", is_flag=True, help="Show applied and pending migrations only.")
@click.pass_obj
def migrate(obj, list_only):
    """Apply pending database migrations (core and game plugins)."""
    config = obj["config"]
    if not list_only:
        click.echo(f"{migrate_home(config)} migrations applied")
        return
    # deferred: start-up speed of the pbm command
    from ..plugins import get_migration_sets
    from ..store import Store, core_migrations

    sets = [core_migrations()] + get_migration_sets()
    store = Store.open(config.db_path)
    try:
        for name, migration, applied_at in store.applied_migrations(sets):
            click.echo(f"applied  {name}: {migration} ({applied_at})")
        for name, migration in store.pending_migrations(sets):
            click.echo(f"pending  {name}: {migration}")
    finally:
        store.close()


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="One JSON object, for monitoring tools.")
@click.pass_obj
def status(obj, as_json):
    """Health for monitoring: outbox, cleanup, sizes, migrations, activity; exit 1 past the
    [status] thresholds."""
    # deferred: start-up speed of the pbm command
    import json

    from ..status import gather, problems, text_lines

    config = obj["config"]
    if not config.db_path.exists():
        raise click.ClickException(f"No database at {config.db_path}: run `pbm init`")
    figures = gather(config)
    found = problems(config, figures)
    if as_json:
        click.echo(json.dumps({**figures, "problems": found, "ok": not found}, indent=1))
    else:
        for line in text_lines(figures, found):
            click.echo(line)
    sys.exit(EX_REFUSED if found else 0)


@cli.command()
@click.argument("directory", required=False, type=click.Path(file_okay=False))
@click.pass_obj
def backup(obj, directory):
    """Write a consistent, dated backup (database, pbm.ini, secret.key) while mail goes on;
    keep the last [backup] keep."""
    # deferred: start-up speed of the pbm command
    from ..backup import BackupError, make_backup, restore_cap_warning

    try:
        made, removed = make_backup(obj["config"], directory)
    except BackupError as error:
        raise click.ClickException(str(error)) from error
    click.echo(f"backup written: {made}")
    for path in removed:
        click.echo(f"old backup removed: {path}")
    warning = restore_cap_warning(obj["config"])
    if warning:
        click.echo(warning, err=True)


@cli.command()
@click.argument("archive", required=False, type=click.Path(dir_okay=False, exists=True))
@click.option(
    "--wait",
    default=10,
    show_default=True,
    type=click.IntRange(0, 3600),
    help="Seconds to wait for mail being handled to finish.",
)
@click.option(
    "--replica",
    metavar="CONFIG",
    type=click.Path(dir_okay=False, exists=True),
    help="Restore the database from the replica of this Litestream configuration.",
)
@click.option(
    "--keys-from",
    metavar="ARCHIVE",
    type=click.Path(dir_okay=False, exists=True),
    help="With --replica: pbm.ini and secret.key from this backup.",
)
@click.pass_obj
def restore(obj, archive, wait, replica, keys_from):
    """Put a backup (or, with --replica, Litestream's replica) back into the home after
    checking it; mail waits meanwhile."""
    # deferred: start-up speed of the pbm command
    from pathlib import Path

    from ..backup import BackupError, restore_from_replica
    from ..backup import restore as restore_backup
    from ..failures import TransientError

    if (archive is None) == (replica is None) or (keys_from and not replica):
        raise click.UsageError("Give a backup ARCHIVE, or --replica CONFIG [--keys-from ARCHIVE].")
    try:
        if replica:
            keys = Path(keys_from) if keys_from else None
            report = restore_from_replica(obj["config"], Path(replica), keys, wait)
        else:
            report = restore_backup(obj["config"], Path(archive), wait)
    except BackupError as error:
        raise click.ClickException(f"not restored: {error}") from error
    except TransientError as error:
        click.echo(f"pbm: not restored, try again: {error}", err=True)
        sys.exit(os.EX_TEMPFAIL)
    for line in report:
        click.echo(line)
