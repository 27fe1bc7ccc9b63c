"""`pbm tournament`: round-robin tournaments from the command line (docs/spec/server.md
§11.9). `create` is a subcommand of its own so that `pbm tournament create --help` documents
its options; it and every other word after `pbm tournament` (join, leave, list, show) run as
the grammar's `tournament` command, as the operator, through the one dispatcher."""

import click

from .group import cli


class TournamentGroup(click.Group):
    """Its own subcommands first; any other words are the grammar's `tournament` command."""

    def resolve_command(self, ctx, args):
        if args and args[0] in self.commands:
            return super().resolve_command(ctx, args)
        return "run", _grammar_command(ctx), ["tournament", *args]


def _grammar_command(ctx) -> click.Command:
    """The `pbm` command's own runner of grammar words."""
    return ctx.find_root().command.commands["run"]


@cli.group("tournament", cls=TournamentGroup)
def tournament():
    """Round-robin tournaments: `create` one; `list`, `show NAME`, `join NAME ROBOT` (a robot
    of the operator's) and the players' `join` and `leave` as by mail."""


@tournament.command(
    "create", context_settings={"ignore_unknown_options": True, "allow_extra_args": True}
)
@click.argument("name")
@click.argument("game")
@click.argument("options", nargs=-1, type=click.UNPROCESSED)
@click.pass_context
def create(ctx, name, game, options):
    """Open tournament NAME of GAME for entries, as the operator.

    OPTIONS are the game's (-size=6) and the boards' clock (--time=3d+24h, --cap=10d, or
    --nagtime, --forfeittime, --totaltime), and the tournament's own: --largest=N (the
    largest division, 10 when not given), and when it starts: --start=YYYY-MM-DD[THH:MM]
    (UTC), --players=N, or both, whichever comes first. Example:

        pbm tournament create spring knightpanic -size=6 --time=3d+24h --players=12
    """
    ctx.invoke(_grammar_command(ctx), words=("tournament", "create", name, game, *options))
