"""The game plugin contract (docs/spec/server.md §10): the abstract base class every game
derives from, and the option declarations the core parses for it."""

import re
import textwrap
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from .outcome import Outcome, State

if TYPE_CHECKING:  # only for annotations: a mail about a game needs neither
    import jinja2

    from .drawing import Drawing
    from .engine import Engine

__all__ = [
    "BaseGame",
    "Flag",
    "MoveError",
    "Number",
    "Option",
    "OptionError",
    "Options",
    "Outcome",
    "RawOptions",
    "State",
    "Switch",
    "format_option",
]

# The challenge options as given ({"size": "7", "misere": True}) and as the game receives
# them, complete ({"size": 7, "misere": False}); a value is an int or a bool.
RawOptions = Mapping[str, str | bool]
Options = dict[str, Any]

RESERVED_MOVE_WORDS = frozenset(
    {"pass", "--", "swap", "resign", "propose", "undo", "accept", "reject", "cancel"}
)
GAME_NAME_RE = re.compile(r"[a-z][a-z0-9]{1,19}")
SEAT_SYMBOL_MAX = 3  # a symbol is read inside a sentence: "You are Black (x)."
SEAT_SYMBOL_RE = re.compile(rf"[!-~]{{1,{SEAT_SYMBOL_MAX}}}")  # printable ASCII, no space
OPTION_NUMBER_RE = re.compile(r"\+?[0-9]{1,9}")
HELP_WIDTH = 76


class OptionError(ValueError):
    """A bad challenge option; the message is shown to the user as is."""


class MoveError(ValueError):
    """An illegal or malformed move; the message is shown to the user as is."""


# -- declared options ----------------------------------------------------------------------
# NamedTuples rather than frozen dataclasses: every mail process defines them, and a
# NamedTuple is several times cheaper to define.


class Number(NamedTuple):
    """`-name=N`: a whole number from low to high, or one of choices."""

    name: str
    default: int
    help: str
    low: int | None = None
    high: int | None = None
    choices: tuple[int, ...] = ()
    unit: str = ""  # "tiles": -stack=N counts tiles
    example: int | None = None  # shown in the refusal: "e.g. -size=13"

    @property
    def keys(self) -> tuple[str, ...]:
        return (self.name,)

    def span(self) -> str:
        if self.choices:
            words = [str(c) for c in self.choices]
            return ", ".join(words[:-1]) + " or " + words[-1] if len(words) > 1 else words[0]
        return f"{self.low} to {self.high}"

    def allows(self, number: int) -> bool:
        if self.choices:
            return number in self.choices
        return self.low is not None and self.high is not None and self.low <= number <= self.high

    def usage(self) -> str:
        unit = f" {self.unit}" if self.unit else ""
        return f"-{self.name}=N ({self.span()}{unit}, default {self.default})"

    def help_entry(self) -> tuple[str, str]:
        return f"-{self.name}=N", f"{self.help} {self.span()} (default {self.default})"

    def parse(self, given: str, value: str | bool, raw: RawOptions) -> Options:
        # Stripped before int(): strip() drops some characters (\x1f) that int() keeps.
        text = value.strip() if isinstance(value, str) else ""
        number = int(text) if OPTION_NUMBER_RE.fullmatch(text) else None
        if number is None and self.unit:
            raise _Refusal(f"write the number of {self.unit}, e.g. -{self.name}={self.example}")
        if number is not None and self.allows(number):
            return {self.name: number}
        if self.choices:
            raise _Refusal(f"{self.name} must be {self.span()}")
        unit = f" {self.unit}" if self.unit else ""
        # With a unit the example went with "write the number of"; without one it goes here.
        example = f", e.g. -{self.name}={self.example}" if self.example and not self.unit else ""
        raise _Refusal(f"{self.name} must be from {self.span()}{unit}{example}")


class Flag(NamedTuple):
    """`-name`: on when given, off by default; `excludes` names a flag it cannot go with."""

    name: str
    help: str
    excludes: str = ""
    why: str = ""  # said after "give only one of -a and -b"

    # A property, not a field: a flag is off unless given.
    @property
    def default(self) -> bool:
        return False

    @property
    def keys(self) -> tuple[str, ...]:
        return (self.name,)

    def usage(self) -> str:
        return f"-{self.name}"

    def help_entry(self) -> tuple[str, str]:
        return f"-{self.name}", f"{self.help} (off by default)"

    def parse(self, given: str, value: str | bool, raw: RawOptions) -> Options:
        if value is not True:
            raise _Refusal(f"-{self.name} takes no value")
        if self.excludes and self.excludes in raw:
            raise _Refusal(f"give only one of -{self.name} and -{self.excludes}{self._why()}")
        return {self.name: True}

    def _why(self) -> str:
        return f": {self.why}" if self.why else ""


class Switch(NamedTuple):
    """`-off` (the default) or `-on`, stored as options[on]: True for `-on`."""

    on: str
    off: str
    help: str

    @property
    def default(self) -> bool:
        return False

    @property
    def name(self) -> str:
        return self.on

    @property
    def keys(self) -> tuple[str, ...]:
        return (self.off, self.on)

    def usage(self) -> str:
        return f"-{self.off} | -{self.on}"

    def help_entry(self) -> tuple[str, str]:
        return self.usage(), f"{self.help} (default -{self.off})"

    def parse(self, given: str, value: str | bool, raw: RawOptions) -> Options:
        if value is not True:
            raise _Refusal(f"-{given} takes no value")
        if self.off in raw and self.on in raw:
            raise _Refusal(f"give only one of -{self.off} and -{self.on}")
        return {self.on: given == self.on}


Option = Number | Flag | Switch


class _Refusal(Exception):
    """Why one option's value is refused, before the core adds the shared wording."""


# -- the base class --------------------------------------------------------------------------


class BaseGame(ABC):
    """What a game must implement (the abstract methods) and the defaults of the rest.

    A state is a plain JSON value. The defaults of to_move and outcome read the keys
    "to_move" (the seat on move), "winner" (a seat, None while the game goes on) or, for
    a game with draws or several winners, "winners" instead (a list of seats, [] a draw),
    and "reason"; a game whose states keep the result otherwise overrides both.
    apply_move receives only canonical move texts and "pass", and MUST accept "pass" for a
    seat the core reports as out (docs/spec/server.md §3.5.4) or for which can_pass or forced_move
    allow it.
    """

    name: str
    display_name: str
    player_names: tuple[str, ...]
    # The symbol of each seat's pieces as the board legend shows it ("You are Black (x).");
    # empty when the pieces have no one symbol per seat.
    seat_symbols: tuple[str, ...] = ()
    min_players = 2
    max_players = 2
    swap_after: int | None = None
    visible_moves = True
    # True when render_board and drawing show every perspective the same board (a game
    # without hidden information): the server then draws a state once for all its readers.
    same_view_for_all = False
    move_rows = 4
    move_layout = "columns"
    templates: "jinja2.Environment | None" = None  # set by the core
    # Flags a reader may add to show/showas (`lox show 101 -control`); each reaches
    # render_board as a keyword argument set to True.
    view_options: tuple[str, ...] = ()
    # The challenge options, in the order the options dict keeps them.
    options: tuple[Option, ...] = ()

    # -- what every game implements ----------------------------------------------------

    @abstractmethod
    def initial_state(self, options: Options, players: int, seed: int) -> State:
        """The start position; randomness comes from seed."""

    @abstractmethod
    def parse_move(self, state: State, seat: int, text: str) -> str:
        """The canonical text of the move, or MoveError saying what is wrong and how to write it."""

    @abstractmethod
    def legal_moves(self, state: State, seat: int) -> Iterable[str]:
        """The seat's canonical moves; none when it is not on move."""

    @abstractmethod
    def apply_move(self, state: State, seat: int, move: str) -> State:
        """A new state after a canonical move or "pass"; never mutates its argument."""

    # -- defaults ----------------------------------------------------------------------

    def to_move(self, state: State) -> int | None:
        return None if self.outcome(state) is not None else state["to_move"]

    def outcome(self, state: State) -> Outcome | None:
        reason = state.get("reason", "")
        if "winners" in state:  # a list of seats, [] a draw
            winners = state["winners"]
            return None if winners is None else Outcome(winners=tuple(winners), reason=reason)
        if state["winner"] is None:
            return None
        return Outcome(winners=(state["winner"],), reason=reason)

    def parse_options(self, raw: RawOptions, players: int) -> Options:
        """The complete options from the declared ones: defaults, then what raw gives, then
        check_options on the whole."""
        options: Options = {option.name: option.default for option in self.options}
        by_key = {key: option for option in self.options for key in option.keys}
        for given, value in raw.items():
            option = by_key.get(given)
            shown = format_option(given, value)
            if option is None:
                raise self.option_error(shown, self._unknown_option())
            try:
                options.update(option.parse(given, value, raw))
            except _Refusal as refusal:
                raise self.option_error(shown, str(refusal)) from None
        self.check_options(options, players)
        return options

    def check_options(self, options: Options, players: int) -> None:
        """The checks across options ("row must not exceed size") and against the number of
        players, once every option has passed its own: raise self.option_error(shown, reason)
        when they do not go together. The default has none to make."""
        return None

    def _unknown_option(self) -> str:
        if not self.options:
            return f"{self.display_name} takes no options"
        usages = [option.usage() for option in self.options]
        if len(usages) == 1:
            return f"unknown option; the only option is {usages[0]}"
        return "unknown option; the options are " + ", ".join(usages[:-1]) + " and " + usages[-1]

    def option_error(self, shown: str, reason: str) -> OptionError:
        """The refusal of one challenge option, in the wording every game shares."""
        return OptionError(f'Invalid {self.display_name} parameter "{shown}": {reason}')

    def options_help(self) -> str:
        """The declared options, one entry each, for the "Options:" part of help.txt."""
        if not self.options:
            return "  none"
        entries = [option.help_entry() for option in self.options]
        column = 2 + max(len(usage) for usage, _ in entries) + 3
        lines = []
        for usage, text in entries:
            wrapped = textwrap.wrap(text, HELP_WIDTH - column) or [""]
            lines.append(f"  {usage:<{column - 2}}{wrapped[0]}".rstrip())
            lines.extend(" " * column + more for more in wrapped[1:])
        return "\n".join(lines)

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

    def drawing(
        self, state: State, perspective: int | None, last_move: str | None
    ) -> "Drawing | None":
        """The board picture (a pbm.drawing.Drawing) or None to stay text only.

        perspective is a seat, or None for a spectator: show exactly what render_board
        shows that perspective. last_move is the canonical text of the last ply, or None; its
        cells are highlighted. pbm/pictures.py turns the Drawing into SVG and PNG.
        """
        return None

    def winning_cells(self, state: State) -> tuple[str, ...]:
        """The cells, named as in the game's moves, of the line or chain that won this
        finished state (docs/spec/server.md §10.2), for pictures and the web view to show;
        () while the game goes on, after a draw or a win without one, and by default."""
        return ()

    def engine(self, state: State) -> "Engine":
        """A mutable position for search (pbm/engine.py); a game may return a faster one."""
        from .engine import ContractEngine  # deferred: only robots and benchmarks search

        return ContractEngine(self, state)

    def is_rated(self, options: Options) -> bool:
        return not any(name.startswith("handicap") and value for name, value in options.items())

    # -- templates: templates/board.txt and templates/help.txt in the game's package ---

    def _environment(self) -> "jinja2.Environment":
        if self.templates is None:  # a game on its own, outside a server
            from .templating import text_environment  # deferred: jinja2 only when rendering

            self.templates = text_environment(None, self._own_game)
        return self.templates

    def _own_game(self, name: str) -> "BaseGame | None":
        return self if name == self.name else None

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
