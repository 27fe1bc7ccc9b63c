"""The hooks a pbm plugin may implement."""

import pluggy

hookspec = pluggy.HookspecMarker("pbm")


@hookspec
def register_games(register):
    """Call register(game) for each game type the plugin provides."""


@hookspec
def register_migrations(register):
    """Call register(migrations) with a sqlite_utils.Migrations named "pbm-game-<name>"."""


@hookspec
def register_commands(cli):
    """Add subcommands to the `pbm` command line: cli is its click.Group, so `@cli.command()`
    declares one. A name pbm or another plugin already gives a subcommand, a command word or
    a game stops the command line with PluginError (docs/spec/server.md §10.1)."""


@hookspec
def register_robots(register):
    """Call register(robot) for each robot the plugin provides: a pbm.robots.Robot (or a
    subclass) naming its game (docs/spec/server.md §11.7)."""
