"""The `pbm` command: the command grammar on the command line, and the operator's
subcommands, a module each for the home, the mail, the robots, the services and the
tournaments."""

from . import home, mailflow, robots, service, tournament  # noqa: F401  (each registers its subcommands)
from .group import cli, main
from .home import migrate_home

__all__ = ["cli", "main", "migrate_home"]
