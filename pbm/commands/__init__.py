"""One function per pbmserv command; importing this package registers them all."""

from . import accounts, info, play  # noqa: F401
