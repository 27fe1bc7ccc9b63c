"""The operator's subcommands for robots (docs/spec/server.md §11.7)."""

import os
import sys

import click

from .group import cli, open_store, run


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
    from ..robots.accounts import add_robot

    store = open_store(obj["config"])
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
    from ..robots import get_robots

    store = open_store(obj["config"])
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
    from ..robots.accounts import remove_robot

    store = open_store(obj["config"])
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
    store = open_store(obj["config"])
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
    from ..dispatch import open_server
    from ..failures import TransientError
    from ..homelock import handling_mail
    from ..mailin import setup_logging
    from ..robots.runner import report_to_operator, run_robots

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
    store = open_store(ctx.obj["config"])
    try:
        account = store.robots.get(robot.lower())
    finally:
        store.close()
    if account is None:
        raise click.ClickException(f'"{robot}" is not a robot')
    ctx.invoke(run, words=(account.game, "challenge", account.userid, *words))
