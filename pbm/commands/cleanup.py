"""`cleanup [full|nag]`, for the operator: the timeouts of docs/spec/server.md §9 as a command."""

from ..grammar import command
from ..request import Result


def _cleanup_command(ctx, games):
    # deferred: start-up speed of the mail pipe (mailin imports every command module early)
    from ..cleanup import run_cleanup
    from ..message import Mail

    mode = ctx.args[0].lower() if ctx.args else "full"
    if mode not in ("full", "nag"):
        return ctx.server.refuse_message(
            ctx.request, f'Syntax is "{ctx.spec.syntax_for(ctx.game)}"'
        )
    report = run_cleanup(ctx.server, games, mode)
    text = "\n".join(report) or "Nothing to do."
    return Result(ok=True, printed=[Mail("cleanup", "Cleanup report", text, [], to_sender=True)])


@command("cleanup", "global", "cleanup [full|nag]", max_args=1, operator_only=True, batch=True)
def cleanup(ctx):
    """Operator only: nags, forfeits, archiving and housekeeping for every game."""
    return _cleanup_command(ctx, None)


@command("cleanup", "game", "{game} cleanup [full|nag]", max_args=1, operator_only=True, batch=True)
def game_cleanup(ctx):
    """Operator only: nags, forfeits and archiving for this game."""
    return _cleanup_command(ctx, [ctx.game.name])
