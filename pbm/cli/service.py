"""The long-running services (serve, web), the plugins installed, and rebuilding the
ratings."""

import click

from ..ratings import rebuild
from .group import cli, open_store


@cli.command()
def plugins():
    """List the installed games and the distributions they come from."""
    # deferred: start-up speed of the pbm command
    from ..plugins import plugin_listing

    for name, display, dist, version in plugin_listing():
        click.echo(f"{name:<16}{display:<16}{dist} {version}".rstrip())


@cli.command("ratings-rebuild")
@click.argument("games", nargs=-1)
@click.pass_obj
def ratings_rebuild(obj, games):
    """Recompute ratings from the results table (the same numbers, by construction)."""
    store = open_store(obj["config"])
    try:
        chosen = [g.lower() for g in games] or store.ratings.result_games()
        with store.write():
            count = rebuild(store, chosen)
    finally:
        store.close()
    click.echo(f"{count} rated results replayed for {', '.join(chosen) or 'no game'}")


@cli.command()
@click.option("--host", help="Address to listen on (default [listen] host, 127.0.0.1).")
@click.option("--port", type=int, help="Port to listen on (default [listen] port, 2525).")
@click.pass_obj
def serve(obj, host, port):
    """Receive mail over SMTP and answer it, like mail_handler.py, until stopped."""
    # deferred: start-up speed of the pbm command
    from ..failures import TransientError
    from ..mailin import setup_logging
    from ..serve import serve as run_service

    config = obj["config"]
    setup_logging(config)
    host = host or config.get("listen.host")
    port = port or config.number("listen.port")
    try:
        run_service(
            config,
            host,
            port,
            ready=lambda: print(f"pbm serve: listening on {host}:{port}", flush=True),
        )
    except TransientError as error:
        raise click.ClickException(f"cannot start: {error}") from error


@cli.command()
@click.option("--host", help="Address to listen on (default [web] host, 127.0.0.1).")
@click.option("--port", type=int, help="Port to listen on (default [web] port, 8080).")
@click.option("--threads", type=click.IntRange(1, 64), help="Worker threads ([web] threads, 4).")
@click.pass_obj
def web(obj, host, port, threads):
    """Serve the read-only web view with waitress, until stopped (docs/spec/server.md §11.8)."""
    # deferred: start-up speed of the pbm command
    import logging
    import signal

    import waitress

    from ..failures import TransientError
    from ..mailin import setup_logging
    from ..web import make_app

    config = obj["config"]
    setup_logging(config)
    # waitress's own notices (a queue of waiting requests, say) go to pbm's log too.
    logging.getLogger("waitress").handlers = logging.getLogger("pbm").handlers
    host = host or config.get("web.host")
    port = config.number("web.port") if port is None else port  # 0: any free port
    threads = threads or config.number("web.threads")
    try:
        app = make_app(config)
    except TransientError as error:
        raise click.ClickException(f"cannot start: {error}") from error
    server = waitress.create_server(app, host=host, port=port, threads=threads, ident="pbm")

    def stop(signum, frame):
        # waitress's loop ends on KeyboardInterrupt; a SIGINT ignored since start-up (a
        # background job of a script) or a SIGTERM would otherwise never raise it
        raise KeyboardInterrupt

    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, stop)
    print(f"pbm web: serving http://{host}:{server.effective_port}/", flush=True)
    try:
        server.run()
    except KeyboardInterrupt:
        pass
    finally:
        server.close()
