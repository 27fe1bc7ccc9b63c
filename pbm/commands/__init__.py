"""One function per pbmserv command; importing this package registers them all."""

from . import accounts, batch, info, play  # noqa: F401
