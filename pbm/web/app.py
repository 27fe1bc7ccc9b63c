"""The WSGI side of the web view: routes, responses and their headers, and one read-only
database connection per server thread (docs/spec/server.md §11.8)."""

import logging
import threading
from importlib.resources import files
from typing import NoReturn
from urllib.parse import parse_qs

from ..clock import now
from ..dispatch import Server
from ..failures import TransientError
from ..game import GAME_NAME_RE
from ..grammar import DIGITS_RE, USERID_RE
from ..store import Store
from ..templating import html_environment
from ..unsubscribe import turn_off
from . import pages, tournaments

log = logging.getLogger("pbm.web")

SECURITY_HEADERS = [
    ("Content-Security-Policy", "default-src 'none'; style-src 'self'; img-src 'self' data:"),
    ("X-Content-Type-Options", "nosniff"),
    ("Referrer-Policy", "no-referrer"),
]
HTML = "text/html; charset=utf-8"
REASONS = {
    200: "OK",
    400: "Bad Request",
    404: "Not Found",
    405: "Method Not Allowed",
    413: "Content Too Large",
    500: "Internal Server Error",
}
BOARD_FILES = {
    "json": "application/json; charset=utf-8",
    "txt": "text/plain; charset=utf-8",
    "svg": "image/svg+xml",
}
STYLESHEET = files(__package__).joinpath("static", "pbm.css").read_bytes()
UNSUBSCRIBE_PATH = "/unsubscribe/"
MAX_POST_BYTES = 1024
# Browsers ask for /favicon.ico whatever the page says; a missing one is an error in their log.
FAVICON = files(__package__).joinpath("static", "favicon.png").read_bytes()


def not_found(what: str = "There is no such page here.") -> NoReturn:
    raise pages.PageError(404, what)


class WebView:
    """The application: each request reads one committed state of the database through
    its thread's read-only connection."""

    def __init__(self, config, games=None):
        self.config = config
        self.games = games
        self.templates = html_environment(config.home, write_cache=False)
        self._local = threading.local()
        if not config.db_path.exists():
            raise TransientError(f"No database at {config.db_path}: run `pbm init`")
        server = self._server()
        # Every plugin loaded here, once, before server threads look games up at once.
        len(server.games)
        pending = server.pending_migrations()
        if pending:
            raise TransientError(f"{len(pending)} migrations pending: run `pbm migrate`")

    def _server(self) -> Server:
        server = getattr(self._local, "server", None)
        if server is None:
            server = Server(self.config, Store.open_read_only(self.config.db_path), self.games)
            self._local.server = server
        return server

    def __call__(self, environ, start_response):
        method = environ.get("REQUEST_METHOD", "GET")
        headers = list(SECURITY_HEADERS)
        path = environ.get("PATH_INFO") or "/"
        if path.startswith(UNSUBSCRIBE_PATH):
            # The one route that writes (docs/spec/server.md §5.10): POST only, as RFC 8058's
            # one-click; a GET (a link checker, a preview) must change nothing.
            if method == "POST":
                status, content_type, body = self._unsubscribe(path, environ)
            else:
                status, content_type, body = self._error_page(
                    405,
                    "This address unsubscribes by POST, as your mail program's unsubscribe "
                    "button sends it; or reply to the unsubscribe address of the mail.",
                )
                headers.append(("Allow", "POST"))
        elif method not in ("GET", "HEAD"):
            status, content_type, body = self._error_page(
                405, f"This site is read-only: {method} is not allowed, only GET and HEAD."
            )
            headers.append(("Allow", "GET, HEAD"))
        else:
            status, content_type, body = self._respond(path, environ.get("QUERY_STRING", ""))
        headers += [("Content-Type", content_type), ("Content-Length", str(len(body)))]
        start_response(f"{status} {REASONS[status]}", headers)
        return [b""] if method == "HEAD" else [body]

    def _unsubscribe(self, path: str, environ):
        """One-click unsubscribe: a signed token turns off its stream, in a small write
        transaction of its own; nothing else is read or changed."""
        token = path[len(UNSUBSCRIBE_PATH) :]
        try:
            length = int(environ.get("CONTENT_LENGTH") or 0)
        except ValueError:
            length = -1
        if not 0 <= length <= MAX_POST_BYTES:
            return self._error_page(413, "A one-click unsubscribe carries only its one field.")
        body = environ["wsgi.input"].read(length) if length else b""
        if b"One-Click" not in body:
            return self._error_page(
                400, "A one-click unsubscribe POST carries List-Unsubscribe=One-Click."
            )
        try:
            store = Store.open(self.config.db_path)
            try:
                with store.write():
                    what = turn_off(store, self.config.secret_key, token)
            finally:
                store.close()
        except Exception:
            log.exception("web view: unsubscribe failed")
            return self._error_page(500, "Something went wrong on our side; try again later.")
        if what is None:
            return self._error_page(404, "This unsubscribe address is not valid.")
        return self._page("unsubscribed.html", {"title": "Unsubscribed", "what": what})

    def _respond(self, path: str, query: str):
        try:
            if path == "/static/pbm.css":
                return 200, "text/css; charset=utf-8", STYLESHEET
            if path == "/favicon.ico":
                return 200, "image/png", FAVICON
            server = self._server()
            with server.store.snapshot():
                reading = pages.Reading(server, server.store, now())
                return self._route(reading, path, parse_qs(query))
        except pages.PageError as error:
            return self._error_page(error.status, error.message)
        except Exception:
            log.exception("web view: %s failed", path)
            return self._error_page(500, "Something went wrong on our side; try again later.")

    def _route(self, reading, path: str, query: dict):
        parts = path.split("/")[1:]
        if parts == [""]:
            return self._page("index.html", pages.index(reading))
        if parts[0] == "tournaments" and len(parts) == 2:
            if parts[1] == "":
                return self._page("tournaments.html", tournaments.index(reading))
            return self._page("tournament.html", tournaments.tournament(reading, parts[1]))
        if len(parts) == 2 and parts[0] == "players":
            if not USERID_RE.fullmatch(parts[1]):
                not_found("There is no such player here.")
            return self._page("player.html", pages.player(reading, parts[1], _page_number(query)))
        game = self._game(reading, parts[0])
        rest = parts[1:]
        if rest in ([], [""]):
            return self._page(
                "boards.html", pages.boards(reading, game, "active", _page_number(query))
            )
        if len(rest) != 1:
            not_found()
        name = rest[0]
        if name in ("finished", "archived"):
            return self._page("boards.html", pages.boards(reading, game, name, _page_number(query)))
        if name == "standings":
            return self._page("standings.html", pages.standings(reading, game))
        if name == "seeks":
            return self._page("seeks.html", pages.seeks(reading, game))
        number, _, suffix = name.partition(".")
        if not DIGITS_RE.fullmatch(number) or (suffix and suffix not in BOARD_FILES):
            not_found()
        board = pages.load_board(reading, game, int(number))
        if not suffix:
            return self._page("board.html", pages.board(reading, board, _ply(query)))
        content = pages.board_file(reading, board, suffix)
        if content is None:
            not_found(f"{game.display_name} has no picture of its boards.")
        return 200, BOARD_FILES[suffix], content.encode("utf-8")

    @staticmethod
    def _game(reading, name: str):
        games = reading.server.games
        if not GAME_NAME_RE.fullmatch(name) or name not in games:
            not_found("There is no such game here.")
        return games[name]

    def _page(self, template: str, values: dict):
        body = self.templates.get_template(f"web/{template}").render(**values)
        return 200, HTML, body.encode("utf-8")

    def _error_page(self, status: int, message: str):
        body = self.templates.get_template("web/error.html").render(
            title=f"{status} {REASONS[status]}", message=message
        )
        return status, HTML, body.encode("utf-8")


def _number(query: dict, name: str, default: int | None, low: int) -> int | None:
    values = query.get(name)
    if not values:
        return default
    text = values[-1]
    if not DIGITS_RE.fullmatch(text) or int(text) < low:
        raise pages.PageError(
            400, f"{name}={text!r} is not a number of {low} or more: write it as ?{name}={low}."
        )
    return int(text)


def _page_number(query: dict) -> int:
    return _number(query, "page", 1, 1)


def _ply(query: dict) -> int | None:
    return _number(query, "ply", None, 0)


def make_app(config, games=None) -> WebView:
    """The WSGI application of the web view on the home's database; `games` stands in for
    the installed plugins (tests)."""
    return WebView(config, games)
