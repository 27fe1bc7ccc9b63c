"""pbm: a play-by-email board game server in the tradition of pbmserv."""

import pluggy

hookimpl = pluggy.HookimplMarker("pbm")

__all__ = ["hookimpl"]
