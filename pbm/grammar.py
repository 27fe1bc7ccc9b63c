"""The one command grammar shared by mail Subjects, `multiple` lines and the command line.

Parsing is pure: it turns text into a `Parsed` command (or a `GrammarError`) without
touching the database, so the same words mean the same thing through every door.
"""

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache

from .game import GAME_NAME_RE
from .serveroptions import OWN_OPTIONS, clock_options, seek_options, tournament_options

MAX_COMMAND_CHARS = 512
MAX_COMMAND_TOKENS = 64

USERID_RE = re.compile(r"[a-z][a-z0-9_.-]{1,15}")
# Knight Panic's binding -2d/-3d start with a digit, so only a bare number (-2) is no option.
OPTION_RE = re.compile(r"-([A-Za-z0-9][A-Za-z0-9_]*)(?:=(.*))?", re.S)
NEGATIVE_NUMBER_RE = re.compile(r"-[0-9]+")
DIGITS_RE = re.compile(r"[0-9]{1,9}")
SERVER_OPTION_RE = re.compile(r"--([A-Za-z][A-Za-z0-9_]*)(?:=(.*))?", re.S)
PREFIX_RE = re.compile(
    r"^\s*(?:(?:re|fwd?|aw|wg|sv|vs|antw|tr)\s*(?:\[\d+\]|\^\d+)?\s*:|\[[^\]]*\])\s*", re.I
)
# Board and ply numbers: ASCII digits, few enough to fit an SQLite integer.
BOARD_RE = re.compile(r"([0-9]{1,9})(?:#(-?[0-9]{1,9}))?")

# Every command word and alias of docs/spec/server.md §2.3, implemented or not: none may be a
# userid.
COMMAND_VOCABULARY = frozenset(
    """help signup add change signoff delete list message broadcast multiple all vacation cleanup
    standings ratings history games show showas replay challenge move board mvoe pass swap resign
    propose undo accept reject queue qmove qboard moveq boardq submit confirm preview chat
    subscribe unsubscribe notify limit seek invite decline digest html export forgot reset subjects
    invitations seeks tournament""".split()
)
RESERVED_WORDS = COMMAND_VOCABULARY | frozenset(
    "all active inactive next archived tournament standard board new on off none cancel inf".split()
)
# `pbm` subcommands take precedence over grammar words (docs/spec/server.md §2.5): no game may be
# named so.
CLI_SUBCOMMANDS = frozenset(
    "init check migrate serve outbox plugins ratings-rebuild cleanup run status backup restore"
    " receive web robots tournament".split()
)


def reserved_command_words():
    return COMMAND_VOCABULARY


class GrammarError(Exception):
    """The words do not form a command; the message says how to write it right."""

    def __init__(
        self, message: str, *, game=None, spec=None, words=(), advice="", game_command=None
    ):
        super().__init__(message)
        self.message = message
        self.game = game
        self.spec = spec
        self.words = list(words)  # the command's words after its name, to find the passwords
        # What to send instead, said after the message (docs/spec/server.md §5.7 pbm note).
        self.advice = advice
        # A game's command sent without the game's name: the dispatcher names the sender's games.
        self.game_command = game_command


@dataclass
class CommandSpec:
    name: str
    scope: str  # "global" or "game"
    syntax: str
    handler: Callable
    summary: str
    aliases: tuple[str, ...] = ()
    min_abbrev: int | None = None
    subword: str | None = None
    takes_options: bool = False
    # The options of OWN_OPTIONS this command takes besides the board's (seek's --rating).
    own_options: tuple[str, ...] = ()
    min_args: int = 0
    max_args: int | None = None
    # Argument positions of passwords, and of the (userid, password) the dispatcher checks
    # before it calls the handler; a function of the arguments where the command has two
    # shapes (accept B U P / accept U P).
    secrets: tuple[int, ...] | Callable = ()
    auth: tuple[int, int] | Callable | None = None
    # ctx -> None: the checks whose refusal wins over a wrong password (a board's syntax and
    # existence, docs/spec/server.md §3.5.1 step 1), run before the password is checked.
    before_auth: Callable | None = None
    new_secrets: tuple[int, ...] = ()  # passwords hashed before the transaction
    operator_only: bool = False
    # Runs outside the one transaction of a command, each step in its own (multiple,
    # cleanup): the handler returns the Result itself.
    batch: bool = False

    @property
    def word(self) -> str:
        return self.name.split()[0]

    def secret_positions(self, args) -> tuple[int, ...]:
        return self.secrets(args) if callable(self.secrets) else self.secrets

    def auth_positions(self, args):
        return self.auth(args) if callable(self.auth) else self.auth

    def syntax_for(self, game) -> str:
        return self.syntax.replace("{game}", game.name if game else "game")


REGISTRY: dict[str, list[CommandSpec]] = {"global": [], "game": []}
_command_loaders: list[Callable[[str | None], None]] = []


def use_command_loader(loader: Callable[[str | None], None]) -> None:
    """pbm.commands' loader: loader(word) imports the command modules that may define
    `word`, loader(None) all of them. A mail runs one command: only its module need load."""
    _command_loaders[:] = [loader]


def specs_for(scope: str, word: str | None = None) -> list[CommandSpec]:
    """The registered specs of a scope, once the modules that may define `word` (every
    module when word is None) are loaded."""
    for loader in _command_loaders:
        loader(word)
    return REGISTRY[scope]


def command(name, scope, syntax, **fields):
    """Register the decorated function as the handler of a command word."""

    def register(handler):
        words = name.split()
        spec = CommandSpec(
            name=name,
            scope=scope,
            syntax=syntax,
            handler=handler,
            summary=(handler.__doc__ or "").strip(),
            subword=words[1] if len(words) > 1 else None,
            **fields,
        )
        REGISTRY[scope].append(spec)
        return handler

    return register


@dataclass
class Parsed:
    spec: CommandSpec
    game: object | None
    args: list[str]
    params: dict = field(default_factory=dict)
    server_options: dict = field(default_factory=dict)
    tokens: list[str] = field(default_factory=list)

    @property
    def secrets(self) -> list[str]:
        return [self.args[i] for i in self.spec.secret_positions(self.args) if i < len(self.args)]

    def auth_pair(self):
        positions = self.spec.auth_positions(self.args)
        if positions is None:
            return None
        user_at, password_at = positions
        if max(user_at, password_at) >= len(self.args):
            return None
        return self.args[user_at].lower(), self.args[password_at]


def normalize(text: str) -> str:
    """Tabs and line breaks to spaces, reply and forward prefixes and list tags stripped."""
    text = re.sub(r"[\t\r\n\v\f]", " ", text or "")
    if not text.isprintable():
        text = "".join(c for c in text if c.isprintable())
    while True:
        stripped = PREFIX_RE.sub("", text, count=1)
        if stripped == text:
            return text.strip()
        text = stripped


NO_COMMAND_ADVICE = (
    'The command goes in the Subject. Send "help" as the Subject for the list of commands, '
    'or "help tutorial" for how to start and play a game.'
)


def tokenize(text: str) -> list[str]:
    if len(text) > MAX_COMMAND_CHARS:
        raise GrammarError("Command too long")
    tokens = [t for t in text.split() if t != "**"]
    if len(tokens) > MAX_COMMAND_TOKENS:
        raise GrammarError("Command too long")
    if not tokens:
        raise GrammarError("No command given", advice=NO_COMMAND_ADVICE)
    return tokens


SERVER_OPTION_NAMES = ("nagtime", "forfeittime", "totaltime", "time", "cap", *OWN_OPTIONS)


def extract_options(tokens, timeouts=(7, 21)):
    """Split tokens into positional words, game parameters and server options; `timeouts`
    are the server's default nag and forfeit days, which the options are checked against."""
    positional, params, server = [], {}, {}
    for token in tokens:
        if token in ("--", "-") or NEGATIVE_NUMBER_RE.fullmatch(token):
            positional.append(token)
            continue
        match = SERVER_OPTION_RE.fullmatch(token)
        if match:
            name = match.group(1).lower()
            if name not in SERVER_OPTION_NAMES:
                raise GrammarError(f'Unknown server option "--{name}"')
            server[name] = match.group(2)
            continue
        match = OPTION_RE.fullmatch(token)
        if match:
            value = match.group(2)
            params[match.group(1).lower()] = True if value is None else value
            continue
        positional.append(token)
    return positional, params, _check_server_options(server, timeouts)


def _check_server_options(raw, timeouts):
    def days(name, low, high, message):
        if name not in raw:
            return None
        value = raw[name]
        if value is None or not re.fullmatch(r"[0-9]{1,5}", value) or not low <= int(value) <= high:
            raise GrammarError(message)
        return int(value)

    options = {}
    nag = days("nagtime", 1, 365, "--nagtime must be between 1 and 365 days")
    if nag is not None:
        options["nag_days"] = nag
    floor = nag if nag is not None else timeouts[0]
    forfeit_message = "--forfeittime must be between --nagtime and 365 days"
    forfeit = days("forfeittime", floor, 365, forfeit_message)
    if forfeit is not None:
        options["forfeit_days"] = forfeit
    elif floor > timeouts[1] and "time" not in raw:
        raise GrammarError(f"{forfeit_message} (the default is {timeouts[1]})")
    total = days("totaltime", 0, 3650, "--totaltime must be between 0 and 3650 days")
    if total is not None:
        options["total_days"] = total
    try:
        options.update(clock_options(raw))
        options.update(seek_options(raw))
        options.update(tournament_options(raw))
    except ValueError as error:
        raise GrammarError(str(error)) from error
    return options


def did_you_mean(word: str, candidates) -> str:
    import difflib  # deferred: start-up of the mail pipe; only an unknown word needs it

    close = difflib.get_close_matches(word.lower(), list(candidates), n=1, cutoff=0.75)
    return f' Did you mean "{close[0]}"?' if close else ""


def with_suggestion(message: str, word: str, candidates) -> str:
    """`message`, or `message. Did you mean "x"?` when a candidate is close."""
    suggestion = did_you_mean(word, candidates)
    return f"{message}.{suggestion}" if suggestion else message


def find_game(word: str, games):
    """A game by command name (looked up alone, so only that plugin is loaded) or display name."""
    lowered = word.lower()
    if GAME_NAME_RE.fullmatch(lowered) and lowered in games:
        return games[lowered]
    for game in games.values():
        if lowered == game.display_name.lower():
            return game
    return None


def _resolve(word: str, specs):
    lowered = word.lower()
    for test in (
        lambda s: s.word == lowered,
        lambda s: lowered in s.aliases,
        lambda s: (
            s.min_abbrev is not None and len(lowered) >= s.min_abbrev and s.word.startswith(lowered)
        ),
    ):
        matches = [s for s in specs if test(s)]
        if matches:
            return matches
    return []


def parse(text: str, games: dict, timeouts=(7, 21)) -> Parsed:
    tokens = tokenize(normalize(text))
    positional, params, server_options = extract_options(tokens, timeouts)
    if not positional:
        raise GrammarError("No command given", advice=NO_COMMAND_ADVICE)
    game = None if _is_global_word(positional[0]) else find_game(positional[0], games)
    if game is not None:
        scope, words = "game", positional[1:]
        if not words:
            raise GrammarError(
                f'No command given for {game.display_name}. Send "help {game.name}" for its commands.',
                game=game,
            )
    else:
        scope, words = "global", positional
    specs = _resolve(words[0], specs_for(scope, words[0]))
    if not specs:
        if game is not None:
            candidates = {w for s in specs_for("game") for w in (s.word, *s.aliases)}
        else:
            candidates = {s.word for s in specs_for("global")} | {g.name for g in games.values()}
        unknown = f'Unknown command "{words[0]}".' + did_you_mean(words[0], sorted(candidates))
        if game is not None:
            raise GrammarError(unknown, game=game, advice=_game_word_advice(words[0], game))
        game_specs = _resolve(words[0], specs_for("game", words[0]))
        if game_specs:
            raise GrammarError(
                unknown,
                spec=game_specs[0],
                words=words[1:],
                game_command=game_specs[0],
                advice=game_first_advice(game_specs[0], words, games.keys()),
            )
        raise GrammarError(unknown, advice=games_advice(games))
    args = words[1:]
    if specs[0].subword is not None:
        chosen = [s for s in specs if args and s.subword == args[0].lower()]
        if not chosen:
            # No spec: where the passwords stand is unknown, so the quote hides every word.
            lines = " or ".join(f'"{s.syntax_for(game)}"' for s in specs)
            raise GrammarError(f"Syntax is {lines}", game=game)
        specs, args = chosen, args[1:]
    spec = specs[0]
    if (params or server_options) and not spec.takes_options:
        raise GrammarError(
            f"The {spec.word} command takes no options", game=game, spec=spec, words=args
        )
    for name, key in OWN_OPTIONS.items():
        if key in server_options and name not in spec.own_options:
            raise GrammarError(
                f"The {spec.word} command takes no --{name} option",
                game=game,
                spec=spec,
                words=args,
            )
    if len(args) < spec.min_args or (spec.max_args is not None and len(args) > spec.max_args):
        raise GrammarError(f'Syntax is "{spec.syntax_for(game)}"', game=game, spec=spec, words=args)
    return Parsed(spec, game, args, params, server_options, tokens)


# Words players send for a move word that is spelt otherwise here.
MOVE_WORD_SYNONYMS = {"draw": "propose", "offer": "propose", "takeback": "undo"}


def _game_word_advice(word: str, game) -> str:
    meant = MOVE_WORD_SYNONYMS.get(word.lower())
    if meant is None:
        return f'Send "help {game.name}" for its commands.'
    spec = _resolve(meant, specs_for("game", meant))[0]
    what = "A draw is proposed" if meant == "propose" else "An undo is asked for"
    return f'{what} with "{spec.syntax_for(game)}"; the other players then accept or reject it.'


def game_first_advice(spec, words, game_names) -> str:
    """`move 104 ...` without a game: the same words with a game name in front."""
    shown = " ".join(mask_unparsed(words))
    names = ", ".join(game_names) or "none installed"
    return f'Put the game name first: "<game> {shown}". Games: {names}.'


def games_advice(games) -> str:
    names = ", ".join(games.keys())
    return (
        f"The games here are: {names}. A game's commands start with its name; "
        'send "help commands" for every command.'
    )


def _is_global_word(word: str) -> bool:
    lowered = word.lower()
    return any(lowered == s.word or lowered in s.aliases for s in specs_for("global", lowered))


def password_of(text: str):
    """(userid, password) a command will be checked with, read from the words alone and
    without loading any game, so the slow password check can start early; None if the
    words do not say (the full parse then decides everything)."""
    try:
        positional, _, _ = extract_options(tokenize(normalize(text)))
    except GrammarError:
        return None
    if not positional:
        return None
    scope = "global" if _is_global_word(positional[0]) else "game"
    words = positional if scope == "global" else positional[1:]
    specs = _resolve(words[0], specs_for(scope, words[0])) if words else []
    args = words[1:]
    if specs and specs[0].subword is not None:
        specs = [s for s in specs if args and s.subword == args[0].lower()]
        args = args[1:]
    if not specs:
        return None
    positions = specs[0].auth_positions(args)
    if positions is None or max(positions) >= len(args):
        return None
    return args[positions[0]].lower(), args[positions[1]]


# A command names its passwords within its first words (`game accept B U P`, `change
# password U old new`): a pasted command is read from at most this many words on.
PASTED_COMMAND_WORDS = 8
# Every command word and alias, and the beginnings an abbreviation may take: a word that is
# none of them is no command, without a look at the command table.
COMMAND_STARTS = frozenset(
    word[:length] for word in COMMAND_VOCABULARY for length in range(3, len(word) + 1)
)
PASSWORD_SHAPE_RE = re.compile(r"[!-~]{4,64}")


def pasted_passwords(line: str, names_account: Callable[[str | None, str], bool]) -> list[str]:
    """The password words of every command with a password that the line reads as, from any
    of its words on: a command pasted into a reply's first line, a comment or a chat. Read
    from the words alone, as password_of does, with no password checked. A reading counts
    when names_account(game word or None, userid) says it names a real account: the shortest
    that does, grown to the command's least number of arguments (`change password U old
    new` has two)."""
    words = line.split()
    found = []
    for start, word in enumerate(words):
        if "global" not in _command_scopes(word) and not (
            start + 1 < len(words) and "game" in _command_scopes(words[start + 1])
        ):
            continue
        command = _pasted_command(words[start : start + PASTED_COMMAND_WORDS])
        if command is not None:
            game, spec, args = command
            found.extend(_account_passwords(game, spec, args, names_account))
    return found


def _account_passwords(game, spec, args, names_account) -> list[str]:
    for count in range(1, len(args) + 1):
        reading = _reading(spec, args[:count])
        if reading is None or not names_account(game, reading[0]):
            continue
        whole = _reading(spec, args[: max(count, min(spec.min_args, len(args)))])
        return whole[1] if whole and whole[0] == reading[0] else reading[1]
    return []


@lru_cache(maxsize=4096)
def _command_scopes(word: str) -> tuple[str, ...]:
    """The scopes in which a word names a command that takes a password."""
    return tuple(scope for scope in ("global", "game") if _password_specs(scope, word.lower()))


@lru_cache(maxsize=1024)
def _password_specs(scope: str, lowered: str) -> tuple[CommandSpec, ...]:
    """The specs a lower-case word resolves to in a scope, if one of them takes a password."""
    if lowered not in COMMAND_STARTS:
        return ()
    specs = tuple(_resolve(lowered, specs_for(scope, lowered)))
    return specs if any(spec.secrets for spec in specs) else ()


def _pasted_command(words):
    """(game word or None, spec, arguments) of a command with a password the words start
    with, else None."""
    try:
        positional, _, _ = extract_options([w for w in words if w != "**"])
    except GrammarError:
        return None
    if len(positional) < 2:
        return None
    scope = "global" if "global" in _command_scopes(positional[0]) else "game"
    game = None if scope == "global" else positional[0]
    rest = positional if scope == "global" else positional[1:]
    specs = _password_specs(scope, rest[0].lower())
    args = rest[1:]
    if specs and specs[0].subword is not None:
        specs = [s for s in specs if args and s.subword == args[0].lower()]
        args = args[1:]
    return (game, specs[0], args) if specs else None


def _reading(spec, args):
    """(userid, password words) of a command with exactly these arguments, or None when they
    name no userid and password of a possible account."""
    secret_at = [i for i in spec.secret_positions(args) if i < len(args)]
    if not secret_at:
        return None
    auth = spec.auth_positions(args)
    userid_at = auth[0] if auth is not None else min(secret_at) - 1
    if not 0 <= userid_at < len(args) or not is_valid_userid(args[userid_at].lower()):
        return None
    secrets = [args[i] for i in secret_at]
    if not all(PASSWORD_SHAPE_RE.fullmatch(secret) for secret in secrets):
        return None
    return args[userid_at].lower(), secrets


def parse_board(token: str, allow_ply=False):
    """`101` or, where allowed, `101#5` / `101#-2`; None when it is no board token."""
    match = BOARD_RE.fullmatch(token)
    if not match or (match.group(2) is not None and not allow_ply):
        return None
    ply = int(match.group(2)) if match.group(2) is not None else None
    return int(match.group(1)), ply


def split_guard(text: str):
    """Take the `#n` guard off a move text: (text, guard string or None)."""
    head, sep, tail = text.rpartition("#")
    if not sep or not tail:
        return text, None
    return head, tail


def is_valid_userid(userid: str) -> bool:
    return bool(USERID_RE.fullmatch(userid))


def mask_unparsed(tokens) -> list[str]:
    """Where the syntax is unknown, hide every token after the second."""
    return list(tokens[:2]) + ["..."] * max(0, len(tokens) - 2)
