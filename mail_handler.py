#!/usr/bin/env python3
"""Pipe one mail into pbm: point your MTA at this file (see README)."""

import sys

from pbm.intake import main
from pbm.private import keep_private

if __name__ == "__main__":
    keep_private()  # whatever the MTA's umask, what this mail writes is private
    sys.exit(main())
