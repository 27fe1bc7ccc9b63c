"""The read-only web view (docs/spec/server.md §11.8): `make_app(config)` is a plain WSGI
application, served by `pbm web` with waitress."""

from .app import make_app

__all__ = ["make_app"]
