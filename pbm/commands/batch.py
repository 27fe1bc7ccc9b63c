"""`multiple`: every line of the body is a command of its own (docs/spec/server.md §3.2.2)."""

from ..grammar import command
from ..request import Request


@command("multiple", "global", "multiple", max_args=0, batch=True)
def multiple(ctx):
    """Runs each line of the body as a command and answers them all in one mail."""
    server, request = ctx.server, ctx.request
    lines = [
        line.strip()
        for line in ctx.received.body_lines
        if line.strip() and not line.strip().startswith("#")
    ]
    limit = server.config.number("limits.max_multiple_lines")
    if not lines:
        return server.refuse_message(request, "No commands found in the message body")

    def run(answering):
        for number, line in enumerate(lines[:limit], start=1):
            answering.number = number
            result = server.execute(
                Request(
                    text=line,
                    sender=request.sender,
                    key=f"{request.key}#{number}" if request.key else None,
                    message_id=request.message_id,
                )
            )
            answering.merge(result)
            if result.not_run:
                # Past the mail's ceiling: neither this command nor any after it.
                for later, skipped in enumerate(lines[number - 1 : limit], start=number):
                    answering.skip(later, skipped)
                break
        if len(lines) > limit:
            answering.skip_over_limit(limit + 1, len(lines))

    return server.answer_once(request, len(lines), run)
