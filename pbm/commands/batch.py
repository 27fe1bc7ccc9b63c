"""`multiple`: every line of the body is a command of its own (docs/spec/server.md §3.2.2)."""

from ..grammar import command
from ..request import Request, Result


@command("multiple", "global", "multiple", max_args=0, batch=True)
def multiple(ctx):
    """Runs each line of the body as a command, each in its own transaction, without comments."""
    server, request = ctx.server, ctx.request
    lines = [
        line.strip()
        for line in ctx.received.body_lines
        if line.strip() and not line.strip().startswith("#")
    ]
    limit = server.config.number("limits.max_multiple_lines")
    if not lines:
        return server.refuse_message(request, "No commands found in the message body")
    combined = Result(ok=True)
    for number, line in enumerate(lines[:limit], start=1):
        result = server.execute(
            Request(
                text=line,
                sender=request.sender,
                key=f"{request.key}#{number}" if request.key else None,
                message_id=request.message_id,
            )
        )
        combined.ok = combined.ok and result.ok
        combined.printed.extend(result.printed)
        combined.queued.extend(result.queued)
    if len(lines) > limit:
        over = server.refuse_message(
            Request(
                text="multiple",
                sender=request.sender,
                key=f"{request.key}#over" if request.key else None,
                message_id=request.message_id,
            ),
            f"Only the first {limit} commands were processed",
        )
        combined.ok = False
        combined.printed.extend(over.printed)
        combined.queued.extend(over.queued)
    return combined
