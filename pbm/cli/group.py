"""The `pbm` command itself: its options, the command grammar on the command line
(docs/spec/server.md §2.5), and what every subcommand shares."""

import os
import sys

import click

from ..config import Config, ConfigError
from ..private import keep_private

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
        from ..plugins import PluginError, add_plugin_commands  # deferred: loads every plugin

        try:
            add_plugin_commands(self, self.plugins_asked)
        except PluginError as error:
            raise click.ClickException(str(error)) from error


def may_be_plugin_command(word: str) -> bool:
    """Not a command word nor the entry point of a game (found without loading any)."""
    from importlib.metadata import entry_points  # deferred: start-up speed of the pbm command

    from ..grammar import reserved_command_words

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
    from ..dispatch import open_server
    from ..failures import is_transient
    from ..mailin import build_request

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
            from ..message import compose

            click.echo(compose(obj["config"], mail).as_string())
        else:
            click.echo(mail.body.rstrip("\n"))
            # The files a mail would attach, after it: the operator has no mail to open.
            for name, _, text in mail.attachments:
                click.echo(f"\n----- {name} -----\n{text.rstrip()}\n----- end of {name} -----")
    for _, mail in result.queued:
        click.echo(f"mailed: {mail.subject} -> {', '.join(mail.to)}", err=True)
    sys.exit(0 if result.ok else EX_REFUSED)


def open_store(config):
    # deferred: start-up speed of the pbm command
    from ..store import Store

    if not config.db_path.exists():
        raise click.ClickException(f"No database at {config.db_path}: run `pbm init`")
    return Store.open(config.db_path)
