#!/usr/bin/env python3
"""Pipe one mail into pbm: point your MTA at this file (see README)."""

import gc
import sys

# One mail's process: what it loads lives until it exits, and what one mail may make is
# bounded (limits.max_message_bytes, limits.max_multiple_lines). Collecting cycles
# would scan the modules as they load, about a tenth of the mail's CPU, to free nothing
# that the exit does not free. docs/performance.md has the peak memory of hostile mails.
gc.disable()

from pbm.intake import main  # noqa: E402  (after the collector is off)
from pbm.private import keep_private  # noqa: E402

if __name__ == "__main__":
    keep_private()  # whatever the MTA's umask, what this mail writes is private
    sys.exit(main())
