"""Information commands: help, list, games, show (docs/spec/server.md §3.2, §3.3)."""

from jinja2 import TemplateNotFound

from .. import invitations
from ..boards import Board
from ..grammar import command, find_game, parse_board, specs_for, with_suggestion
from ..position import replay
from ..summary import board_table

HELP_TOPICS = ("commands", "tutorial", "games", "clocks")
EXCLUSIVE_SELECTORS = ("active", "inactive", "archived", "next")


# -- help ----------------------------------------------------------------------------------


@command("help", "global", "help [commands|tutorial|games|<game>|<command>...]")
def help_(ctx):
    """Mails help: the command list, a tutorial, the games, a game's rules or a command."""
    # Each topic once, however often it is named: all of them go in one answer.
    for subject in dict.fromkeys(a.lower() for a in ctx.args or ["commands"]):
        text = _help_text(ctx, subject)
        if text is None:
            candidates = list(HELP_TOPICS) + list(ctx.server.games) + _command_words()
            ctx.abort(
                with_suggestion(f'No help available for "{subject}"', subject, candidates)
                + "\n\n"
                + _help_topics(ctx)
            )
        ctx.reply(f"Help {subject}", ctx.render("mail/help.txt", text=text), kind="help")


@command("help", "game", "{game} help", max_args=0)
def game_help(ctx):
    """Mails the rules, options and move notation of the game."""
    ctx.reply(
        f"Help {ctx.game.name}",
        ctx.render("mail/help.txt", text=_game_help(ctx.game)),
        kind="help",
    )


def _help_topics(ctx) -> str:
    games = ", ".join(ctx.server.games.keys())
    return (
        f"Help is available for: {', '.join(HELP_TOPICS)}, a command word, or a game. "
        f"The games here are: {games}."
    )


def _command_words():
    return sorted({s.word for scope in ("global", "game") for s in specs_for(scope)})


def _help_text(ctx, subject):
    word = subject.lower()
    games = ctx.server.games
    if word == "commands":
        return ctx.render(
            "help/commands.txt",
            global_specs=sorted(specs_for("global"), key=lambda s: s.name),
            game_specs=sorted(specs_for("game"), key=lambda s: s.name),
        )
    if word == "tutorial":
        return ctx.render("help/tutorial.txt", games=list(games.values()))
    if word == "games":
        return ctx.render("help/games.txt", games=list(games.values()))
    if word == "clocks":
        return ctx.render("help/clocks.txt")
    game = find_game(word, games)
    if game is not None:
        return _game_help(game)
    specs = [
        s
        for scope in ("global", "game")
        for s in specs_for(scope, word)
        if word in (s.word, *s.aliases)
    ]
    if specs:
        return ctx.render("help/command.txt", specs=specs, details=_details(ctx, specs[0].word))
    return None


def _details(ctx, word: str) -> str:
    """More about a command than its summary line, where templates/help/command/ has it."""
    try:
        return ctx.render(f"help/command/{word}.txt")
    except TemplateNotFound:
        return ""


def _game_help(game) -> str:
    options = game.parse_options({}, game.min_players)
    state = game.initial_state(options, game.min_players, 0)
    return game.help_text() + "\n\nThe start position:\n\n" + game.render_board(state, None)


# -- list and games ------------------------------------------------------------------------


@command("list", "global", "list [game...]")
def list_(ctx):
    """Lists the game types, or the boards of the named games."""
    games = ctx.server.games
    if not ctx.args:
        counts = ctx.store.boards.active_counts()
        lines = [
            f"{'Game':<16}{'Name':<16}{'Players':<9}Active boards",
        ] + [
            f"{g.name:<16}{g.display_name:<16}{_players(g):<9}{counts.get(g.name, 0)}"
            for g in games.values()
        ]
        ctx.reply("List of games", ctx.render("mail/game_list.txt", lines=lines), kind="list")
        return
    chosen = []
    for word in ctx.args:
        game = find_game(word, games)
        if game is None:
            ctx.abort(with_suggestion(f'Unknown game "{word}"', word, list(games)))
        chosen.append(game)
    for game in dict.fromkeys(chosen):
        boards = [Board(ctx, row) for row in ctx.store.boards.of_game(game.name)]
        _games_mail(ctx, game, boards, None, invitations.listing(ctx, game))


def _players(game) -> str:
    if game.min_players == game.max_players:
        return str(game.min_players)
    return f"{game.min_players}-{game.max_players}"


@command("games", "game", "{game} games [userid...] [active|inactive|archived|next|all]")
def games(ctx):
    """Lists the boards of the game, and its open invitations, optionally of some users or a
    selector."""
    boards = _select(ctx, ctx.args, default="all")
    _games_mail(ctx, ctx.game, boards, _heading(ctx.args), _invitation_lines(ctx, ctx.args))


def _invitation_lines(ctx, args) -> list[str]:
    """The open invitations the named users sent or received (docs/spec/server.md §11.1):
    none for a selector of boards that have been played or are on move."""
    words = [a.lower() for a in args]
    if {"inactive", "archived", "next", "tournament"} & set(words):
        return []
    selectors = EXCLUSIVE_SELECTORS + ("all", "standard")
    return invitations.listing(ctx, ctx.game, [w for w in words if w not in selectors])


def _games_mail(ctx, game, boards, heading, invited=()):
    title = f"List of {game.display_name} games" + (f" ({heading})" if heading else "")
    body = ctx.render(
        "mail/board_list.txt",
        title=title,
        lines=board_table(game, boards) if boards else [],
        invitations=list(invited),
    )
    ctx.reply(f"List of {game.display_name} games", body, kind="list")


def _heading(args) -> str | None:
    return " ".join(a.lower() for a in args) or None


# -- show -----------------------------------------------------------------------------------


def view_options(ctx) -> dict:
    """The game's view flags given to show or showas (`-control`), as render keywords."""
    game = ctx.game
    if ctx.parsed.server_options:
        ctx.abort(f"The {ctx.spec.word} command takes no server options")
    for name, value in ctx.parsed.params.items():
        if name not in game.view_options or value is not True:
            offered = " ".join(f"-{v}" for v in game.view_options)
            ctx.abort(
                f'Unknown view option "-{name}" for {ctx.spec.word}'
                + (
                    f"; {game.display_name} offers {offered}"
                    if offered
                    else f"; {game.display_name} boards have no view options"
                )
            )
    return {name: True for name in ctx.parsed.params}


def _show_password_positions(args) -> tuple[int, ...]:
    """`show 104 alice pw`: a board with a userid and a password, meant for showas; every
    word after the userid is hidden from the reply."""
    words = [
        i
        for i, a in enumerate(args)
        if parse_board(a, allow_ply=True) is None and a.lower() != "board"
    ]
    has_board = len(words) < len(args)
    return tuple(words[1:]) if has_board and len(words) >= 2 else ()


@command(
    "show",
    "game",
    "{game} show board[#n]... | {game} show userid... [active|inactive|archived|next|all]",
    takes_options=True,
    secrets=_show_password_positions,
)
def show(ctx):
    """Mails the full summary of boards: by number (#n for an earlier position) or by user."""
    view = view_options(ctx)
    args = [a for i, a in enumerate(ctx.args) if not _is_board_word(ctx.args, i)]
    if not args:
        ctx.abort("This would generate too much mail -- please refine request")
    if _show_password_positions(ctx.args):
        _refuse_mixed_show(ctx)
    if parse_board(args[0], allow_ply=True) is None:
        boards = _select(ctx, args, default="all")
        if not boards:
            _show_summary(ctx, [], [], f"No boards found for {' '.join(args).lower()}")
            return
        _check_mail_cap(ctx, len(boards))
        for board in boards:
            _show_board(ctx, board, None, view=view)
        return
    requests = []
    for token in args:
        parsed = parse_board(token, allow_ply=True)
        if parsed is None:
            _refuse_mixed_show(ctx)
        requests.append(parsed)
    _check_mail_cap(ctx, len(requests))
    shown, not_shown = [], []
    for number, ply in requests:
        row = ctx.store.boards.get(ctx.game.name, number)
        if row is None:
            not_shown.append(f"{number} (not found)")
            continue
        board = Board(ctx, row)
        made = board.position.plies_made
        if ply is not None:
            upto = made + ply if ply < 0 else ply
            if not 0 <= upto <= made:
                not_shown.append(f"{number} (Board {number} has only {made} moves)")
                continue
            ply = upto
        _show_board(ctx, board, ply, view=view)
        shown.append(str(number))
    if not_shown:
        _show_summary(ctx, shown, not_shown)
    if not shown:
        ctx.refused = True


def _refuse_mixed_show(ctx):
    message = "Give either board numbers or userids, not both"
    numbers = [a for a in ctx.args if parse_board(a) is not None]
    words = [a for a in ctx.args if parse_board(a, allow_ply=True) is None and a.lower() != "board"]
    if len(words) >= 2 and numbers:
        message += (
            f". To see a board from your own seat, with your password, send "
            f'"{ctx.game.name} showas {words[0].lower()} <password> {" ".join(numbers)}"'
        )
    ctx.abort(message)


def _is_board_word(args, i) -> bool:
    """In show, the word `board` before a number is ignored."""
    return (
        args[i].lower() == "board"
        and i + 1 < len(args)
        and parse_board(args[i + 1], allow_ply=True) is not None
    )


def _check_mail_cap(ctx, count):
    if count > ctx.config.number("limits.max_show_mails"):
        ctx.abort("This would generate too much mail -- please refine request")


def _show_board(ctx, board, ply, viewer=None, view=None):
    title = f"Summary of {board.title_name}"
    position = None
    if ply is not None and ply != board.position.plies_made:
        title += f" after move {ply}"
        position = replay(
            board.game, board.options, board.seat_userids, board.row.seed, board.plies, upto=ply
        )
    extra = []
    if viewer is not None and board.active:
        for seat in board.position.seats_of(viewer):
            submission = ctx.store.votes.submission(board.id, seat)
            if submission is not None:
                extra.append(
                    f"You have submitted this move, not yet confirmed: {submission.move_text}"
                )
    body, html = ctx.board_mail(
        board,
        viewer,
        ctx.board_context(
            board,
            viewer,
            title=title,
            full_moves=True,
            timing=True,
            position=position,
            extra_lines=extra,
            view=view,
        ),
    )
    ctx.reply(ctx.board_subject(board), body, kind="show", html=html)


def _show_summary(ctx, shown, not_shown, message=""):
    body = ctx.render("mail/show_summary.txt", shown=shown, not_shown=not_shown, message=message)
    ctx.reply("Show summary", body, kind="show")


# -- selectors ------------------------------------------------------------------------------


def _select(ctx, args, default, userids=(), game=None):
    """Boards of this game chosen by userids and one selector word (docs/spec/server.md §3.3.1)."""
    game = game or ctx.game
    userids, selectors = list(userids), []
    for token in args:
        word = token.lower()
        if parse_board(token, allow_ply=True) is not None:
            ctx.abort("Give either board numbers or userids, not both")
        if word in EXCLUSIVE_SELECTORS + ("all", "tournament", "standard"):
            selectors.append(word)
        else:
            ctx.require_user(word)
            userids.append(word)
    exclusive = [s for s in selectors if s in EXCLUSIVE_SELECTORS]
    if len(set(exclusive)) > 1:
        ctx.abort("Use only one of active, inactive, archived or next")
    selector = exclusive[0] if exclusive else (selectors[0] if selectors else default)
    if selector == "next" and not userids:
        ctx.abort("The next selector needs at least one userid")
    rows = ctx.store.boards.of_game(game.name, userids, include_archived=selector == "archived")
    boards = []
    for row in rows:
        if selector == "active" and row.status != "active":
            continue
        if selector == "inactive" and (row.status == "active" or row.archived_at):
            continue
        if selector == "archived" and not row.archived_at:
            continue
        board = Board(ctx, row)
        if selector == "next" and board.on_move_userid() not in userids:
            continue
        if selector == "tournament" and board.tournament is None:
            continue
        boards.append(board)
    return boards


@command(
    "showas",
    "game",
    "{game} showas userid password [board...|active|inactive|archived|next|all]",
    min_args=2,
    secrets=(1,),
    auth=(0, 1),
    before_auth=view_options,
    takes_options=True,
)
def showas(ctx):
    """As show, but from your own seat: hidden information, your queued and submitted moves."""
    view = view_options(ctx)  # checked before the password already (before_auth)
    args = ctx.args[2:]
    if args and parse_board(args[0]) is not None:
        numbers = []
        for token in args:
            parsed = parse_board(token)
            if parsed is None:
                ctx.abort("Give either board numbers or userids, not both")
            numbers.append(parsed[0])
        _check_mail_cap(ctx, len(numbers))
        for number in numbers:
            _show_board(ctx, ctx.load_board(number), None, viewer=ctx.userid, view=view)
        return
    if any(a.lower() not in EXCLUSIVE_SELECTORS + ("all", "tournament", "standard") for a in args):
        ctx.syntax_error()
    boards = _select(ctx, args, default="active", userids=[ctx.userid])
    if not boards:
        _show_summary(ctx, [], [], f"No boards found for {ctx.userid}")
        return
    _check_mail_cap(ctx, len(boards))
    for board in boards:
        _show_board(ctx, board, None, viewer=ctx.userid, view=view)


@command("all show", "global", "all show userid [next|active]", min_args=1, max_args=2)
def all_show(ctx):
    """Shows a user's boards of every game (active by default)."""
    userid = ctx.args[0].lower()
    ctx.require_user(userid)
    selector = ctx.args[1].lower() if len(ctx.args) == 2 else "active"
    if selector not in ("next", "active"):
        ctx.syntax_error()
    boards = []
    for game in ctx.server.games.values():
        boards.extend(_select(ctx, [selector], default=selector, userids=[userid], game=game))
    if not boards:
        _show_summary(ctx, [], [], f"No boards found for {userid}")
        return
    _check_mail_cap(ctx, len(boards))
    for board in boards:
        _show_board(ctx, board, None)
