"""Discovery of game plugins through the "pbm" entry-point group."""

import os
import sys

import pluggy

from . import hookspecs

pm = pluggy.PluginManager("pbm")
pm.add_hookspecs(hookspecs)

_loaded = False
_games_cache = (None, None)


class PluginError(RuntimeError):
    """A plugin set that cannot start: a duplicate or malformed game."""


def load_plugins():
    """Load entry points once; under tests, the tests register their games."""
    global _loaded
    if _loaded:
        return
    _loaded = True
    if getattr(sys, "_called_from_test", False):
        return
    wanted = os.environ.get("PBM_LOAD_PLUGINS")
    if wanted is None:
        pm.load_setuptools_entrypoints("pbm")
        return
    from importlib.metadata import entry_points

    for name in filter(None, (n.strip() for n in wanted.split(","))):
        for entry_point in entry_points(group="pbm", name=name):
            if pm.get_plugin(name) is None:
                pm.register(entry_point.load(), name=name)


def _distribution(plugin):
    for candidate, dist in pm.list_plugin_distinfo():
        if candidate is plugin:
            return dist.project_name, dist.version
    return getattr(plugin, "__name__", pm.get_name(plugin) or repr(plugin)), ""


def _registrations():
    """(game, plugin) for every game every plugin registers."""
    load_plugins()
    found = []
    for impl in pm.hook.register_games.get_hookimpls():
        impl.function(lambda game, plugin=impl.plugin: found.append((game, plugin)))
    return found


def get_games():
    """All registered games by command name, checked against the contract."""
    global _games_cache
    from .game import validate_game

    load_plugins()
    key = tuple(id(p) for p in pm.get_plugins())
    if _games_cache[0] == key:
        return _games_cache[1]
    games, owners = {}, {}
    for game, plugin in _registrations():
        validate_game(game)
        owner = _distribution(plugin)[0]
        if game.name in games and games[game.name] is not game:
            raise PluginError(
                f'Game "{game.name}" is registered by both {owners[game.name]} and {owner}'
            )
        games[game.name] = game
        owners[game.name] = owner
    games = dict(sorted(games.items()))
    _games_cache = (key, games)
    return games


def plugin_listing():
    """(game name, display name, distribution, version) for `pbm plugins`."""
    return sorted(
        (game.name, game.display_name, *_distribution(plugin))
        for game, plugin in _registrations()
    )


def plugin_template_packages():
    """Packages of registered plugins, whose templates/ folders the loader searches."""
    load_plugins()
    names = []
    for plugin in pm.get_plugins():
        package = getattr(plugin, "__package__", None) or getattr(plugin, "__name__", None)
        if package and package not in names:
            names.append(package)
    return names


def get_migration_sets():
    """Migration sets registered by plugins, in registration order."""
    load_plugins()
    sets = []
    pm.hook.register_migrations(register=sets.append)
    return sets
