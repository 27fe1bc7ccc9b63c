"""Today's game engines, frozen before the fast engines of issue 21 replaced them, and the
option variants both the differential test and `make bench` play them in."""

import importlib
import itertools

from pbm.game import Flag, Number, Switch

GAME_NAMES = ("knightline", "knightpanic", "knightvision", "lox", "uknight")


def reference_game(name: str):
    return importlib.import_module(f"tests.reference_engines.{name}").GAME


def variants(game) -> list[tuple[dict, int]]:
    """(raw challenge options, players): the defaults, each number option at its extremes,
    each flag or switch on, and each extreme with each of them, for every number of players."""
    numbers, toggles = [], []
    for option in game.options:
        if isinstance(option, Number):
            values = option.choices or (option.low, option.high)
            numbers += [{option.name: str(v)} for v in values if v != option.default]
        elif isinstance(option, Flag):
            if not option.excludes or option.excludes > option.name:
                toggles.append({option.name: True})
        elif isinstance(option, Switch):
            toggles.append({option.on: True})
    changes = [{}, *numbers, *toggles, *({**n, **t} for n in numbers for t in toggles)]
    players = range(game.min_players, game.max_players + 1)
    return [(change, count) for count, change in itertools.product(players, changes)]


def largest(game) -> list[tuple[dict, int]]:
    """The variants with every number option at its highest, for the most players."""
    highest = {
        option.name: str(max(option.choices or (option.high,)))
        for option in game.options
        if isinstance(option, Number)
    }
    return [
        (raw, players)
        for raw, players in variants(game)
        if players == game.max_players and all(raw.get(k) == v for k, v in highest.items())
    ]
