"""Robot accounts (docs/spec/server.md §11.7): a user row the server moves for, without an
address and without a password anyone knows."""

import secrets

from ..clock import now, stamp
from ..grammar import is_valid_userid
from ..security import hash_password
from . import get_robots

DEFAULT_SECONDS = 10.0
MAX_SECONDS = 600.0


def add_robot(store, userid: str, game: str, robot: str, seconds: float) -> None:
    """Create the account; ValueError says what is wrong with the request."""
    userid = userid.lower()
    if not is_valid_userid(userid):
        raise ValueError(f'"{userid}" is not a valid userid')
    robots = get_robots()
    if (game, robot) not in robots:
        known = ", ".join(f"{g} {r}" for g, r in robots) or "none"
        raise ValueError(f'No robot "{robot}" for game "{game}"; installed: {known}')
    if not 0 < seconds <= MAX_SECONDS:
        raise ValueError(f"--seconds must be more than 0 and at most {MAX_SECONDS:g}")
    # Random and never shown: nobody can send a command as the robot but the server.
    unusable = hash_password(secrets.token_urlsafe(32))
    with store.write():
        if store.users.get(userid) is not None:
            raise ValueError(f'The userid "{userid}" is taken')
        at = stamp(now())
        store.users.create(userid, unusable, [], at)
        store.robots.add(userid, game, robot, seconds, at)


def remove_robot(store, userid: str) -> None:
    """The account goes as any deleted account does; its boards go on to their clocks."""
    userid = userid.lower()
    with store.write():
        if store.robots.get(userid) is None:
            raise ValueError(f'"{userid}" is not a robot')
        store.robots.remove(userid)
        store.users.delete(userid, stamp(now()))
