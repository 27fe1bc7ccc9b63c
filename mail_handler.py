#!/usr/bin/env python3
"""Pipe one mail into pbm: point your MTA at this file (see README)."""

import sys

from pbm.intake import main

if __name__ == "__main__":
    sys.exit(main())
