"""The game plugin contract (server spec section 10) and its base class."""

import re
from dataclasses import dataclass
from typing import Any, Mapping

State = Any

RESERVED_MOVE_WORDS = frozenset(
    {"pass", "--", "swap", "resign", "propose", "undo", "accept", "reject", "cancel"}
)
GAME_NAME_RE = re.compile(r"[a-z][a-z0-9]{1,19}")


class OptionError(ValueError):
    """A bad challenge option; the message is shown to the user as is."""


class MoveError(ValueError):
    """An illegal or malformed move; the message is shown to the user as is."""


@dataclass(frozen=True)
class Outcome:
    winners: tuple[int, ...]
    points: int = 1
    reason: str = ""


class BaseGame:
    """Defaults of the contract; a game overrides what its rules need."""

    name: str
    display_name: str
    player_names: tuple[str, ...]
    min_players = 2
    max_players = 2
    swap_after: int | None = None
    visible_moves = True
    move_rows = 4
    move_layout = "columns"
    templates = None  # the Jinja2 environment, set by the core
    # Flags a reader may add to show/showas (`lox show 101 -control`); each reaches
    # render_board as a keyword argument set to True.
    view_options: tuple[str, ...] = ()

    def parse_options(self, raw: Mapping[str, str | bool], players: int) -> dict:
        if raw:
            name, value = next(iter(raw.items()))
            raise self.option_error(
                format_option(name, value), f"{self.display_name} takes no options"
            )
        return {}

    def option_error(self, shown: str, reason: str) -> OptionError:
        """The refusal of one challenge option, in the wording every game shares."""
        return OptionError(f'Invalid {self.display_name} parameter "{shown}": {reason}')

    def can_pass(self, state: State, seat: int) -> bool:
        return False

    def pass_refusal(self, state: State, seat: int) -> str | None:
        """Why a pass is not allowed now, in the game's words; None for the core's own."""
        return None

    def can_draw(self, state: State) -> bool:
        return True

    def can_undo(self, state: State) -> bool:
        return True

    def forced_move(self, state: State) -> str | None:
        return None

    def is_rated(self, options: dict) -> bool:
        return not any(name.startswith("handicap") and value for name, value in options.items())

    def _environment(self):
        if self.templates is None:
            from .templating import text_environment

            self.templates = text_environment()
        return self.templates

    def render_board(self, state: State, perspective: int | None) -> str:
        template = self._environment().get_template(f"{self.name}/board.txt")
        return template.render(
            game=self, state=state, perspective=perspective, options=state.get("options", {})
        ).strip("\n")

    def help_text(self) -> str:
        template = self._environment().get_template(f"{self.name}/help.txt")
        return template.render(game=self, state=None, perspective=None, options={}).strip("\n")


def format_option(name: str, value: str | bool) -> str:
    return f"-{name}" if value is True else f"-{name}={value}"


def validate_game(game) -> None:
    """Refuse a plugin that breaks the naming rules of the contract."""
    from .grammar import CLI_SUBCOMMANDS, reserved_command_words

    problems = []
    if not isinstance(getattr(game, "name", None), str) or not GAME_NAME_RE.fullmatch(game.name):
        problems.append("name must match [a-z][a-z0-9]{1,19}")
    elif game.name in reserved_command_words() | CLI_SUBCOMMANDS:
        problems.append(f'name "{game.name}" is a command word')
    display = getattr(game, "display_name", "")
    if not display or any(c.isspace() for c in display):
        problems.append("display_name must be non-empty without whitespace")
    elif display.lower() in reserved_command_words() | CLI_SUBCOMMANDS:
        problems.append(f'display_name "{display}" is a command word')
    if len(getattr(game, "player_names", ())) < getattr(game, "max_players", 0):
        problems.append("player_names must name every seat")
    if not 1 <= game.min_players <= game.max_players:
        problems.append("min_players and max_players are inconsistent")
    if game.move_layout not in ("columns", "lines"):
        problems.append('move_layout must be "columns" or "lines"')
    if problems:
        from .plugins import PluginError

        raise PluginError(f"Game {getattr(game, 'name', game)!r}: " + "; ".join(problems))


