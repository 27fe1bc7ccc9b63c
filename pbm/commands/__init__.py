"""One function per pbmserv command; importing this package registers them all."""

from . import (  # noqa: F401
    accounts,
    batch,
    cleanup,
    export,
    info,
    pending,
    play,
    previews,
    ranking,
    recovery,
    settings,
    votes,
    watch,
)
