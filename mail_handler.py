#!/usr/bin/env python3
"""Pipe one mail into pbm: point your MTA at this file (see README).

When `pbm serve` runs for the home, the mail is handed to it over the home's socket
(pbm/handoff.py has the frame) and this process loads nothing of pbm's; otherwise the
mail is handled here."""

import gc
import os
import socket
import sys

SOCKET_NAME = "serve.sock"  # pbm.handoff.SOCKET_NAME
ENVELOPE_VARIABLES = (b"SENDER", b"ORIGINAL_RECIPIENT", b"RECIPIENT")
# pbm serve answers after the command's commit (and the replica's wait): well within
# Postfix's command_time_limit of 1000 s.
ANSWER_SECONDS = 600
READ_CHUNK = 65536


def hand_to_serve() -> int | None:
    """The exit code for the mail once a running `pbm serve` has answered it; None when
    none listens, and nothing of the mail was read."""
    # pbm.config.resolve_home's rule, without loading pbm
    home = os.environ.get("PBM_HOME") or os.path.join(os.path.expanduser("~"), ".pbm")
    client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        client.connect(os.path.join(home, SOCKET_NAME))
    except OSError:  # no socket, or nobody listening on it: handled here
        client.close()
        return None
    with client:
        try:
            client.settimeout(ANSWER_SECONDS)
            block = b"".join(
                name + b"=" + os.environb[name] + b"\0"
                for name in ENVELOPE_VARIABLES
                if name in os.environb
            )
            client.sendall(b"%d\n" % len(block) + block)
            while chunk := sys.stdin.buffer.read(READ_CHUNK):
                client.sendall(chunk)
            client.shutdown(socket.SHUT_WR)
            answer = client.makefile("rb").readline(4096).decode(errors="replace").strip()
        except OSError as error:
            answer = f"75 pbm serve did not answer ({error})"
    code, _, cause = answer.partition(" ")
    if code == "0":
        return os.EX_OK
    # The mail may be in hand already: it is retried, and a duplicate is never run twice.
    print(f"pbm: try again later: {cause or 'pbm serve did not answer'}", file=sys.stderr)
    return os.EX_TEMPFAIL


def main() -> int:
    handed = hand_to_serve()
    if handed is not None:
        return handed
    from pbm.intake import main as handle_here
    from pbm.private import keep_private

    keep_private()  # whatever the MTA's umask, what this mail writes is private
    return handle_here()


if __name__ == "__main__":
    # One mail's process: what it loads lives until it exits, and what one mail may make
    # is bounded (limits.max_message_bytes, limits.max_multiple_lines). Collecting cycles
    # would scan the modules as they load, about a tenth of the mail's CPU, to free
    # nothing that the exit does not free. docs/performance.md has the peak memory of
    # hostile mails.
    gc.disable()
    sys.exit(main())
