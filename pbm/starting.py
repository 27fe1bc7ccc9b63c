"""Starting a board (docs/spec/server.md §3.4): the one path a challenge, an accepted
invitation (docs/spec/server.md §11.1) and a pair of open seeks (docs/spec/server.md
§11.2) all take."""

import secrets
from datetime import timedelta

from .boards import Board
from .clock import stamp
from .game import OptionError
from .grammar import is_valid_userid


def start_board(
    ctx,
    game,
    userids,
    options: dict,
    server_options: dict,
    *,
    comments=(),
    number: int | None = None,
    events=(),
    tell_sender: bool = False,
    announce: bool = True,
) -> Board:
    """A new board of `game` with these seats (in order), the plugin's normalised options
    and the server options (nag, forfeit and total days, the correspondence clock; the
    server's defaults where missing), in the command's transaction: the next board number,
    or the one an invitation reserved; subscribe-all users as subscribers, the comments
    ((author, text) pairs: the last is kept, this run's mails show all), every seat's
    seeking count minus one, the automatic steps; then the new-board mails, with a
    spectator's copy to the sender when `tell_sender` and they get none. Without
    `announce` the caller tells the players (a tournament's start mails each player once
    with all their boards, docs/spec/server.md §11.9)."""
    defaults = ctx.server.timeout_defaults()
    board_id = ctx.store.boards.create(
        game=game.name,
        number=number if number is not None else ctx.store.boards.next_number(game.name),
        options=options,
        seed=secrets.randbits(63),
        nag_days=server_options.get("nag_days", defaults["nag_days"]),
        forfeit_days=server_options.get("forfeit_days", defaults["forfeit_days"]),
        total_days=server_options.get("total_days", 0),
        clock=(
            server_options.get("clock_initial"),
            server_options.get("clock_increment"),
            server_options.get("clock_cap"),
        ),
        created_at=stamp(ctx.now),
        userids=userids,
        rated=game.is_rated(options),
    )
    for userid in ctx.store.watching.subscribe_all_users(game.name):
        if userid not in userids:
            ctx.store.watching.subscribe(board_id, userid)
    board = Board(ctx, ctx.store.boards.by_id(board_id))
    board.events.extend(events)
    for author, text in comments:
        if text.strip():
            board.set_comment(author, text)
    board.settle()
    for userid in set(userids):
        ctx.store.users.decrement_seeking(game.name, userid)
    if announce:
        intro = f"A new {game.display_name} board ({board.number}) has been started."
        ctx.announce(
            board, new=True, title=intro, spectator_to_sender=tell_sender, kind="new_board"
        )
    return board


def seating_problems(ctx, game, userids, params) -> tuple[list[str], dict | None, list[str]]:
    """The checks of docs/spec/server.md §3.4 on a board to be, all collected: (problems,
    the plugin's normalised options, users refused because they reject challenges)."""
    problems = []
    if len(userids) < game.min_players:
        problems.append(f"At least {game.min_players} players must play")
    if len(userids) > game.max_players:
        problems.append(f"At most {game.max_players} players can play")
    known = []
    for userid in dict.fromkeys(userids):
        user = ctx.store.users.get(userid) if is_valid_userid(userid) else None
        if user is None or user.status != "active":
            problems.append(f"Unknown userid: {userid}")
        else:
            known.append(userid)
    if not ctx.request.operator:
        # Only the operator seats one account twice (docs/spec/server.md §3.4).
        problems.extend(
            f"{userid} is named more than once: an account takes one seat on a board"
            for userid in dict.fromkeys(userids)
            if userids.count(userid) > 1
        )
    options = None
    try:
        options = game.parse_options(params, len(userids))
    except OptionError as error:
        problems.append(str(error))
    limits, refusing = limit_problems(ctx, game, known)
    return problems + limits, options, refusing


def limit_problems(ctx, game, userids) -> tuple[list[str], list[str]]:
    """Who may not be seated on one more board of the game now: new boards today, and each
    user's limit (docs/spec/server.md §3.4, §3.9). (problems, users who reject challenges)."""
    problems, refusing = [], []
    day_limit = ctx.config.number("limits.boards_per_user_per_day")
    since = stamp(ctx.now - timedelta(days=1))
    for userid in userids:
        if ctx.store.boards.count_started_since(userid, since) >= day_limit:
            problems.append(f"{userid} has been given {day_limit} new boards today; try tomorrow")
    for userid in userids:
        limit = ctx.store.users.challenge_limit(game.name, userid)
        if limit is None:
            continue
        if limit == 0:
            problems.append(f"{userid} is not accepting {game.display_name} challenges")
            if ctx.store.boards.count_active(game.name, userid) == 0:
                refusing.append(userid)
        elif ctx.store.boards.count_active(game.name, userid) >= limit:
            problems.append(
                f"{userid} has reached their limit of active {game.display_name} games ({limit})"
            )
    return problems, refusing
