"""The operator's subcommands for the mail: the delivery queue (outbox), a message
handed in by hand (receive), and the cleanup run (docs/spec/server.md §5.1, §9.2)."""

import os
import sys

import click

from ..clock import now, stamp
from .group import cli, open_store


@cli.group()
def outbox():
    """The delivery queue (a table in pbm.db): deliver what is due, list it, retry one.

    Not the Maildir $PBM_HOME/outbox/, which holds the mail already delivered when no
    [smtp] host is set.
    """


@outbox.command()
@click.pass_obj
def flush(obj):
    """Deliver every queued message that is due."""
    # deferred: start-up speed of the pbm command
    from ..mailout import flush as flush_outbox

    store = open_store(obj["config"])
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
    store = open_store(config)
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
    from ..mailout import deliver

    store = open_store(obj["config"])
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
@click.option(
    "--recipient",
    "recipients",
    metavar="ADDR",
    multiple=True,
    help="The envelope recipient, as an MTA's $ORIGINAL_RECIPIENT, e.g. a reply address "
    "pbm+<token>@…; by default $ORIGINAL_RECIPIENT or $RECIPIENT, else the mail's "
    "Delivered-To, To and Cc.",
)
@click.pass_obj
def receive(obj, message, sender, recipients):
    """Handle one mail from a file (- for standard input) exactly as mail_handler.py does,
    and print the mail sent back to its sender.

    For trying a new home: write a message with a From and a Subject (or, to answer a
    board mail, To its Reply-To address and the move on the first line), run `pbm receive
    FILE`, read the answer. Exit 0 when the mail was handled, 75 when it must wait.
    """
    # deferred: start-up speed of the pbm command
    from ..intake import process_message
    from ..mailin import (
        read_limited,
        recipients_from_environment,
        setup_logging,
        written_recipients,
    )

    config = obj["config"]
    setup_logging(config)
    raw, size = read_limited(message, config.number("limits.max_message_bytes"))
    # A file has no envelope: where an MTA would say where it came to, its headers do.
    recipients = (
        list(recipients) or recipients_from_environment(os.environ) or written_recipients(raw)
    )
    outcome = process_message(raw, size, sender, config=config, envelope_recipients=recipients)
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
        reply_to = mail.headers.get("Reply-To")
        answer_to = f"\nReply-To: {reply_to}" if reply_to else ""
        click.echo(
            f"To: {', '.join(mail.to)}{answer_to}\nSubject: {mail.subject}\n\n"
            f"{mail.body.rstrip()}\n"
        )


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
    from ..cleanup import run_cleanup
    from ..dispatch import open_server
    from ..failures import TransientError

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
