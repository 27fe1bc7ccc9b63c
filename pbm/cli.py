"""The `pbm` command: the command grammar on the command line, and operator subcommands."""

import os
import secrets
import sys

import click

from .cli_tournament import tournament
from .clock import now, stamp
from .config import Config, ConfigError, default_ini_text
from .private import keep_private, make_folders, private_opener
from .ratings import rebuild

EX_REFUSED = 1


class PbmGroup(click.Group):
    """Subcommands take precedence; any other words are a command of the grammar
    (docs/spec/server.md §2.5). Plugins add subcommands (hook register_commands), loaded
    only when a word may be one: a command word or a game's name needs none of them."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.plugins_asked: set = set()

    def resolve_command(self, ctx, args):
        if args and args[0] != "run" and self._is_subcommand(args[0]):
            return super().resolve_command(ctx, args)
        return "run", self.commands["run"], args

    def list_commands(self, ctx):
        self.add_plugin_commands()
        return super().list_commands(ctx)

    def _is_subcommand(self, word: str) -> bool:
        if word not in self.commands and may_be_plugin_command(word):
            self.add_plugin_commands()
        return word in self.commands

    def add_plugin_commands(self) -> None:
        from .plugins import PluginError, add_plugin_commands  # deferred: loads every plugin

        try:
            add_plugin_commands(self, self.plugins_asked)
        except PluginError as error:
            raise click.ClickException(str(error)) from error


def may_be_plugin_command(word: str) -> bool:
    """Not a command word nor the entry point of a game (found without loading any)."""
    from importlib.metadata import entry_points  # deferred: start-up speed of the pbm command

    from .grammar import reserved_command_words

    lowered = word.lower()
    return lowered not in reserved_command_words() and not entry_points(group="pbm", name=lowered)


@click.group(cls=PbmGroup, invoke_without_command=False)
@click.option(
    "--home",
    type=click.Path(file_okay=False),
    help="The server's home (default $PBM_HOME or ~/.pbm).",
)
@click.option(
    "--from", "sender", metavar="ADDR", help="Act as a mail from ADDR, not as the operator."
)
@click.option(
    "--body", type=click.File("r"), help="The mail body: a file, or - for standard input."
)
@click.option("--headers", is_flag=True, help="Print whole messages, not just their bodies.")
@click.version_option(package_name="pbm")
@click.pass_context
def cli(ctx, home, sender, body, headers):
    """pbm: a play-by-email board game server.

    Run a server command as the operator, e.g.

        pbm knightpanic show 101

    or one of the subcommands below.
    """
    try:
        config = Config.load(home)
    except ConfigError as error:
        if ctx.invoked_subcommand != "check":  # check reports it with the rest
            click.echo(f"pbm: {error} -- correct pbm.ini (see `pbm check`)", err=True)
            sys.exit(os.EX_TEMPFAIL)
        config = Config.load(home, strict=False)
    ctx.obj = {
        "config": config,
        "sender": sender,
        "body": body.read() if body else "",
        "headers": headers,
    }


cli.add_command(tournament)


def main():
    """The `pbm` command: everything it writes is private, whatever the umask it was
    started with (pbm/private.py)."""
    keep_private()
    cli()


@cli.command(
    "run",
    hidden=True,
    add_help_option=False,
    context_settings={"ignore_unknown_options": True, "allow_extra_args": True},
)
@click.argument("words", nargs=-1, type=click.UNPROCESSED)
@click.pass_obj
def run(obj, words):
    # deferred: start-up speed of the pbm command
    from .dispatch import open_server
    from .failures import is_transient
    from .mailin import build_request

    if not words:
        raise click.UsageError("Give a command, e.g. `pbm help`, or a subcommand (`pbm --help`).")
    request = build_request(" ".join(words), obj["body"], obj["sender"])
    try:
        with open_server(obj["config"]) as server:
            result = server.execute(request)
    except Exception as error:
        if is_transient(error):
            click.echo(f"pbm: try again later: {error}", err=True)
            sys.exit(os.EX_TEMPFAIL)
        raise
    for mail in result.printed:
        if obj["headers"]:
            # deferred: start-up speed of the pbm command
            from .mailout import compose

            click.echo(compose(obj["config"], mail).as_string())
        else:
            click.echo(mail.body.rstrip("\n"))
    for _, mail in result.queued:
        click.echo(f"mailed: {mail.subject} -> {', '.join(mail.to)}", err=True)
    sys.exit(0 if result.ok else EX_REFUSED)


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
    applied = _migrate(Config.load(home))
    click.echo(f"pbm home ready at {home} ({applied} migrations applied)")


def _migrate(config) -> int:
    # deferred: start-up speed of the pbm command
    from .plugins import get_migration_sets
    from .store import Store, core_migrations

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
    from .check import problems, shared_problems

    home = obj["config"].home
    found, shared = problems(home), shared_problems(home)
    for line in found + shared:
        click.echo(f"problem: {line}")
    if found:
        click.echo(f"pbm check: {len(found)} problem(s); mail would be left with the MTA", err=True)
    if shared:
        click.echo(f"pbm check: others can read {home}; make it private", err=True)
    if found or shared:
        sys.exit(EX_REFUSED)
    click.echo(f"pbm check: {home} is ready for mail")
    from .dnsrecords import dns_records

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
        click.echo(f"{_migrate(config)} migrations applied")
        return
    # deferred: start-up speed of the pbm command
    from .plugins import get_migration_sets
    from .store import Store, core_migrations

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

    from .status import gather, problems, text_lines

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
    from .backup import BackupError, make_backup, restore_cap_warning

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
@click.argument("archive", type=click.Path(dir_okay=False, exists=True))
@click.option(
    "--wait",
    default=10,
    show_default=True,
    type=click.IntRange(0, 3600),
    help="Seconds to wait for mail being handled to finish.",
)
@click.pass_obj
def restore(obj, archive, wait):
    """Put a backup back into the home after checking it; mail waits meanwhile."""
    # deferred: start-up speed of the pbm command
    from pathlib import Path

    from .backup import BackupError
    from .backup import restore as restore_backup
    from .failures import TransientError

    try:
        report = restore_backup(obj["config"], Path(archive), wait)
    except BackupError as error:
        raise click.ClickException(f"not restored: {error}") from error
    except TransientError as error:
        click.echo(f"pbm: not restored, try again: {error}", err=True)
        sys.exit(os.EX_TEMPFAIL)
    for line in report:
        click.echo(line)


@cli.group()
def outbox():
    """The delivery queue (a table in pbm.db): deliver what is due, list it, retry one.

    Not the Maildir $PBM_HOME/outbox/, which holds the mail already delivered when no
    [smtp] host is set.
    """


def _open_store(config):
    # deferred: start-up speed of the pbm command
    from .store import Store

    if not config.db_path.exists():
        raise click.ClickException(f"No database at {config.db_path}: run `pbm init`")
    return Store.open(config.db_path)


@outbox.command()
@click.pass_obj
def flush(obj):
    """Deliver every queued message that is due."""
    # deferred: start-up speed of the pbm command
    from .mailout import flush as flush_outbox

    store = _open_store(obj["config"])
    try:
        counts = flush_outbox(store, obj["config"])
    finally:
        store.close()
    click.echo(", ".join(f"{n} {what}" for what, n in counts.items()))


@outbox.command("list")
@click.option("--all", "show_all", is_flag=True, help="Include messages already sent.")
@click.pass_obj
def list_outbox(obj, show_all):
    """List the delivery queue: mail waiting or failed (with --all, sent mail too)."""
    config = obj["config"]
    store = _open_store(config)
    try:
        rows = store.outbox.rows(None if show_all else ("pending", "sending", "failed"))
    finally:
        store.close()
    if rows:
        click.echo(f"{'ID':>6}  {'Status':<8}  {'Tries':>5}  {'Queued at':<20}  {'Kind':<8}  To")
    for row in rows:
        to = ", ".join(row.recipients)
        line = (
            f"{row.id:>6}  {row.status:<8}  {row.attempts:>5}  {row.created_at:<20}  "
            f"{row.kind:<8}  {to}"
        )
        if row.status == "pending" and row.attempts:
            line += f"  next {row.next_attempt_at}"
        if row.last_error:
            line += f"  [{row.last_error}]"
        click.echo(line)
    if not rows:
        click.echo(
            "The delivery queue is empty: no mail is waiting to be sent"
            + ("." if show_all else " or has failed.")
        )
    click.echo(_delivered_mail_line(config))


def _delivered_mail_line(config) -> str:
    """Where the mail the queue delivered went, so the two are not taken for each other."""
    host = config.get("smtp.host")
    if host:
        return f"Delivered mail goes to the SMTP relay {host}; it keeps no copy here."
    delivered = config.outbox_dir / "new"
    count = sum(1 for _ in delivered.iterdir()) if delivered.is_dir() else 0
    return (
        f"Delivered mail is in the Maildir {delivered} ({count} message{'s' * (count != 1)}; "
        "pbm only writes there, your mail reader or MTA takes them away)."
    )


@outbox.command()
@click.argument("row_id", type=int)
@click.pass_obj
def retry(obj, row_id):
    """Send one queued or failed message now."""
    # deferred: start-up speed of the pbm command
    from .mailout import deliver

    store = _open_store(obj["config"])
    try:
        if not store.outbox.reschedule(row_id, stamp(now())):
            raise click.ClickException(f"No queued or failed message {row_id}")
        counts = deliver(store, obj["config"], [row_id])
    finally:
        store.close()
    click.echo(", ".join(f"{n} {what}" for what, n in counts.items()))


@cli.command()
@click.argument("message", type=click.File("rb"))
@click.option("--sender", metavar="ADDR", help="The envelope sender, as an MTA's $SENDER.")
@click.pass_obj
def receive(obj, message, sender):
    """Handle one mail from a file (- for standard input) exactly as mail_handler.py does,
    and print the mail sent back to its sender.

    For trying a new home: write a message with a From and a Subject, run `pbm receive
    FILE`, read the answer. Exit 0 when the mail was handled, 75 when it must wait.
    """
    # deferred: start-up speed of the pbm command
    from .intake import process_message
    from .mailin import read_limited, setup_logging

    config = obj["config"]
    setup_logging(config)
    raw, size = read_limited(message, config.number("limits.max_message_bytes"))
    outcome = process_message(raw, size, sender, config=config)
    if not outcome.consumed:
        click.echo(f"pbm: try again later: {outcome.cause.line()}", err=True)
        sys.exit(os.EX_TEMPFAIL)
    result = outcome.result
    if result is None:
        click.echo(
            "Dropped unanswered (a loop, a bounce or no address to answer); see log/pbm.log."
        )
        return
    if result.duplicate:
        click.echo("Already handled: a mail with this Message-ID was answered before.")
        return
    for _, mail in result.queued:
        click.echo(f"To: {', '.join(mail.to)}\nSubject: {mail.subject}\n\n{mail.body.rstrip()}\n")


@cli.command()
def plugins():
    """List the installed games and the distributions they come from."""
    # deferred: start-up speed of the pbm command
    from .plugins import plugin_listing

    for name, display, dist, version in plugin_listing():
        click.echo(f"{name:<16}{display:<16}{dist} {version}".rstrip())


@cli.command()
@click.argument("games", nargs=-1)
@click.option(
    "--mode",
    type=click.Choice(["full", "nag"]),
    default="full",
    show_default=True,
    help="full: nags, forfeits, archiving, housekeeping; nag: nags only.",
)
@click.option("--dry-run", is_flag=True, help="Report what would be done; change nothing.")
@click.pass_obj
def cleanup(obj, games, mode, dry_run):
    """Timeouts for cron: nags, forfeits, auto-accepted votes, archiving (daily or more)."""
    # deferred: start-up speed of the pbm command
    from .cleanup import run_cleanup
    from .dispatch import open_server
    from .failures import TransientError

    try:
        with open_server(obj["config"]) as server:
            unknown = [g for g in games if g.lower() not in server.games]
            if unknown:
                raise click.BadParameter(f"unknown game {unknown[0]!r}", param_hint="GAMES")
            report = run_cleanup(server, [g.lower() for g in games] or None, mode, dry_run)
    except TransientError as error:
        click.echo(f"pbm: try again later: {error}", err=True)
        sys.exit(os.EX_TEMPFAIL)
    prefix = "would do: " if dry_run else ""
    for line in report:
        click.echo(prefix + line)
    if not report:
        click.echo("Nothing to do.")


@cli.group()
def robots():
    """Robot players: accounts the server moves for (docs/spec/server.md §11.7)."""


@robots.command("add")
@click.argument("userid")
@click.argument("game")
@click.argument("robot")
@click.option("--seconds", type=float, default=10.0, show_default=True, help="Time per move.")
@click.pass_obj
def robots_add(obj, userid, game, robot, seconds):
    """Add a robot account USERID that plays GAME with ROBOT (see `pbm robots list`)."""
    # deferred: start-up speed of the pbm command
    from .robots.accounts import add_robot

    store = _open_store(obj["config"])
    try:
        add_robot(store, userid, game.lower(), robot, seconds)
    except ValueError as error:
        raise click.ClickException(str(error)) from error
    finally:
        store.close()
    click.echo(f"Robot {userid.lower()} plays {game.lower()} with {robot}, {seconds:g}s a move.")


@robots.command("list")
@click.pass_obj
def robots_list(obj):
    """The robot accounts, and the robots installed."""
    # deferred: start-up speed of the pbm command
    from .robots import get_robots

    store = _open_store(obj["config"])
    try:
        accounts = store.robots.all()
    finally:
        store.close()
    for account in accounts:
        seeks = ""
        if account.seek_after_hours is not None:
            seeks = f", answers seeks after {account.seek_after_hours:g} hours"
        click.echo(
            f"{account.userid}: {account.game} {account.robot}, {account.seconds:g}s a move{seeks}"
        )
    if not accounts:
        click.echo("No robot accounts.")
    click.echo("Installed robots:")
    for (game, name), robot in get_robots().items():
        click.echo(f"  {game} {name}: {robot.description}")


@robots.command("remove")
@click.argument("userid")
@click.pass_obj
def robots_remove(obj, userid):
    """Remove a robot account; its running boards are left to their clocks."""
    # deferred: start-up speed of the pbm command
    from .robots.accounts import remove_robot

    store = _open_store(obj["config"])
    try:
        remove_robot(store, userid)
    except ValueError as error:
        raise click.ClickException(str(error)) from error
    finally:
        store.close()
    click.echo(f"Robot {userid.lower()} removed.")


MAX_SEEK_WAIT_HOURS = 24 * 60


@robots.command("seeks")
@click.argument("userid")
@click.argument("hours")
@click.pass_obj
def robots_seeks(obj, userid, hours):
    """The robot answers the open seeks of its game that waited HOURS without a human
    match (0: at once), or none with `off` (docs/spec/server.md §11.2)."""
    if hours.lower() == "off":
        wait = None
    else:
        try:
            wait = float(hours)
        except ValueError:
            wait = -1.0
        if not 0 <= wait <= MAX_SEEK_WAIT_HOURS:
            raise click.BadParameter(
                f"hours from 0 to {MAX_SEEK_WAIT_HOURS}, or off", param_hint="HOURS"
            )
    store = _open_store(obj["config"])
    try:
        with store.write():
            if store.robots.get(userid.lower()) is None:
                raise click.ClickException(f'"{userid}" is not a robot')
            store.robots.set_seek_after(userid.lower(), wait)
    finally:
        store.close()
    if wait is None:
        click.echo(f"Robot {userid.lower()} answers no seeks.")
    else:
        click.echo(f"Robot {userid.lower()} answers seeks that waited {wait:g} hours.")


@robots.command("run")
@click.option(
    "--seconds", type=float, default=240.0, show_default=True, help="Stop starting moves after."
)
@click.pass_obj
def robots_run(obj, seconds):
    """For cron: every robot on move moves once, every pending vote is answered."""
    # deferred: start-up speed of the pbm command
    from .dispatch import open_server
    from .failures import TransientError
    from .homelock import handling_mail
    from .mailin import setup_logging
    from .robots.runner import report_to_operator, run_robots

    config = obj["config"]
    setup_logging(config)

    def submit(text, grant):
        with handling_mail(config.home):
            return server.execute_for_robot(text, grant)

    try:
        with open_server(config) as server:
            report = run_robots(
                server,
                submit,
                lambda kind, line: report_to_operator(config.home, kind, line),
                seconds,
            )
    except TransientError as error:
        click.echo(f"pbm: try again later: {error}", err=True)
        sys.exit(os.EX_TEMPFAIL)
    for line in report.commands:
        click.echo(line)
    for line in report.failures:
        click.echo(f"failed: {line}", err=True)
    if not report.commands and not report.failures:
        click.echo("Nothing to do.")


@robots.command(
    "challenge", context_settings={"ignore_unknown_options": True, "allow_extra_args": True}
)
@click.argument("robot")
@click.argument("words", nargs=-1, required=True, type=click.UNPROCESSED)
@click.pass_context
def robots_challenge(ctx, robot, words):
    """The robot challenges: `pbm robots challenge ROBOT OPPONENT... [-option...]` starts a
    board of the robot's game with the robot in the first seat, as `challenge` does."""
    store = _open_store(ctx.obj["config"])
    try:
        account = store.robots.get(robot.lower())
    finally:
        store.close()
    if account is None:
        raise click.ClickException(f'"{robot}" is not a robot')
    ctx.invoke(run, words=(account.game, "challenge", account.userid, *words))


@cli.command("ratings-rebuild")
@click.argument("games", nargs=-1)
@click.pass_obj
def ratings_rebuild(obj, games):
    """Recompute ratings from the results table (the same numbers, by construction)."""
    store = _open_store(obj["config"])
    try:
        chosen = [g.lower() for g in games] or store.ratings.result_games()
        with store.write():
            count = rebuild(store, chosen)
    finally:
        store.close()
    click.echo(f"{count} rated results replayed for {', '.join(chosen) or 'no game'}")


@cli.command()
@click.option("--host", help="Address to listen on (default [listen] host, 127.0.0.1).")
@click.option("--port", type=int, help="Port to listen on (default [listen] port, 2525).")
@click.pass_obj
def serve(obj, host, port):
    """Receive mail over SMTP and answer it, like mail_handler.py, until stopped."""
    # deferred: start-up speed of the pbm command
    from .failures import TransientError
    from .mailin import setup_logging
    from .serve import serve as run_service

    config = obj["config"]
    setup_logging(config)
    host = host or config.get("listen.host")
    port = port or config.number("listen.port")
    try:
        run_service(
            config,
            host,
            port,
            ready=lambda: print(f"pbm serve: listening on {host}:{port}", flush=True),
        )
    except TransientError as error:
        raise click.ClickException(f"cannot start: {error}") from error


@cli.command()
@click.option("--host", help="Address to listen on (default [web] host, 127.0.0.1).")
@click.option("--port", type=int, help="Port to listen on (default [web] port, 8080).")
@click.option("--threads", type=click.IntRange(1, 64), help="Worker threads ([web] threads, 4).")
@click.pass_obj
def web(obj, host, port, threads):
    """Serve the read-only web view with waitress, until stopped (docs/spec/server.md §11.8)."""
    # deferred: start-up speed of the pbm command
    import logging
    import signal

    import waitress

    from .failures import TransientError
    from .mailin import setup_logging
    from .web import make_app

    config = obj["config"]
    setup_logging(config)
    # waitress's own notices (a queue of waiting requests, say) go to pbm's log too.
    logging.getLogger("waitress").handlers = logging.getLogger("pbm").handlers
    host = host or config.get("web.host")
    port = config.number("web.port") if port is None else port  # 0: any free port
    threads = threads or config.number("web.threads")
    try:
        app = make_app(config)
    except TransientError as error:
        raise click.ClickException(f"cannot start: {error}") from error
    server = waitress.create_server(app, host=host, port=port, threads=threads, ident="pbm")

    def stop(signum, frame):
        # waitress's loop ends on KeyboardInterrupt; a SIGINT ignored since start-up (a
        # background job of a script) or a SIGTERM would otherwise never raise it
        raise KeyboardInterrupt

    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, stop)
    print(f"pbm web: serving http://{host}:{server.effective_port}/", flush=True)
    try:
        server.run()
    except KeyboardInterrupt:
        pass
    finally:
        server.close()
