"""Invitations (docs/spec/server.md §11.1): a board that starts only once everyone on it has
said yes. An invitation reserves its board number but stays apart from the boards until the
last acceptance starts the board (starting.start_board); a decline, a withdrawal or cleanup
ends it. Everyone on it hears of each step; each invitee's mails carry an invitation token
(docs/spec/server.md §11.3), so a reply `accept` or `decline` answers it.
"""

from datetime import timedelta

from .clock import show_time, stamp
from .replies import (
    invitation_token,
    new_invitation_id,
    reply_address,
)
from .serveroptions import options_text
from .starting import limit_problems, start_board
from .summary import options_line, text_table
from .timebank import ClockTerms

LAPSE = timedelta(days=14)


class Invitation:
    """An invitation as a command sees it: its record, its seats and its game. It stands
    where a board would for the thread headers of its mails (game, number)."""

    def __init__(self, ctx, record):
        self.ctx = ctx
        self.record = record
        self.game = ctx.server.game_for_board(record.game)
        self.seats = ctx.store.invitations.seats(record.id)

    @property
    def number(self) -> int:
        return self.record.number

    @property
    def title(self) -> str:
        return f"{self.game.display_name} Board {self.number}"

    @property
    def subject(self) -> str:
        inviter = self.record.inviter
        return f"Invitation: {self.title}" + (f" from {inviter}" if inviter else "")

    @property
    def userids(self) -> list[str]:
        """The seat holders, in seat order."""
        return [s.userid for s in self.seats]

    @property
    def users(self) -> list[str]:
        """Everyone on the invitation, once each."""
        return list(dict.fromkeys(self.userids))

    @property
    def waiting(self) -> list[str]:
        """The users who have not accepted yet."""
        return list(dict.fromkeys(s.userid for s in self.seats if not s.accepted))

    def token_of(self, userid: str) -> str | None:
        for seat in self.seats:
            if seat.userid == userid and seat.token_id:
                config = self.ctx.config
                return invitation_token(
                    config.secret_key, seat.token_id, self.game.name, self.number, userid
                )
        return None

    def reload(self):
        self.record = self.ctx.store.invitations.get(self.game.name, self.number)
        self.seats = self.ctx.store.invitations.seats(self.record.id)


def load(ctx, game, number: int) -> Invitation | None:
    record = ctx.store.invitations.get(game.name, number)
    return Invitation(ctx, record) if record is not None else None


# -- making one --------------------------------------------------------------------------


def invite(ctx, game, userids, options, server_options, *, inviter, comment, consenting):
    """Record an invitation of these seats, where the users in `consenting` and the robots of
    the game (by their policy) have accepted, and mail everyone on it but the inviter, whom
    the caller answers. Returns the Invitation, started at once when nobody is awaited."""
    robots = {u for u in userids if _robot_game(ctx, u) == game.name}
    consenting = set(consenting) | robots
    number = ctx.store.boards.next_number(game.name)
    tokens, seats = {}, []
    for userid in userids:
        first = userid not in tokens
        tokens.setdefault(userid, None if userid in consenting else new_invitation_id())
        seats.append((userid, userid in consenting, tokens[userid] if first else None))
    ctx.store.invitations.create(
        game=game.name,
        number=number,
        inviter=inviter,
        options=options,
        server_options=server_options,
        comment_author=comment[0],
        comment_text=comment[1].strip() or None,
        created_at=stamp(ctx.now),
        lapses_at=stamp(ctx.now + LAPSE),
        seats=seats,
    )
    invitation = load(ctx, game, number)
    if not invitation.waiting:
        _start(ctx, invitation, None)
        return invitation
    if inviter:
        headline = f"{inviter} invites you to play {game.display_name} on board {number}."
    else:
        headline = (
            f"A challenge names you on {game.display_name} board {number}. Some of its "
            "players take challenges only as invitations, so it starts when they accept."
        )
    _tell(ctx, invitation, headline, skip=inviter)
    return invitation


def _robot_game(ctx, userid: str) -> str | None:
    robot = ctx.store.robots.get(userid)
    return robot.game if robot is not None else None


def robot_refusals(ctx, game, userids) -> list[str]:
    """The robots' policy (docs/spec/server.md §11.1): a robot accepts at once an invitation
    of its own game within its limit (checked with everyone's), and declines every other."""
    refusals = []
    for userid in dict.fromkeys(userids):
        own = _robot_game(ctx, userid)
        if own is not None and own != game.name:
            plays = ctx.server.games[own].display_name if own in ctx.server.games else own
            refusals.append(f"{userid} is a robot that plays only {plays}: it declines")
    return refusals


def from_challenge(ctx, game, userids, options, server_options, wanting):
    """A challenge naming users who take challenges only as invitations (docs/spec/server.md
    §3.4): they must accept; the others are seated without being asked, as pbmserv seats
    them. The sender's own account among the named, if any, is the inviter."""
    inviter = next(
        (u for u in dict.fromkeys(userids) if ctx.sender_is_among(ctx.store.users.addresses(u))),
        None,
    )
    consenting = {u for u in userids if u not in wanting} | ({inviter} if inviter else set())
    invitation = invite(
        ctx,
        game,
        userids,
        options,
        server_options,
        inviter=inviter,
        comment=("Challenger", ctx.request.body),
        consenting=consenting,
    )
    reply_sent(ctx, invitation)


def reply_sent(ctx, invitation):
    """The inviter's answer: what was sent, or that the robots' answers settled it."""
    status = invitation.record.status
    if status == "started":
        text = f"Everyone accepted at once: {invitation.title} has started."
    elif status != "open":
        text = ended_message(invitation)
    else:
        text = (
            f"{invitation.title} is reserved for you. It starts when "
            f"{_join(invitation.waiting)} {'accepts' if len(invitation.waiting) == 1 else 'accept'}; "
            f"the invitation lapses on {show_time(invitation.record.lapses_at)}.\n"
        )
        inviter = invitation.record.inviter
        decline = f"{invitation.game.name} decline {invitation.number}"
        if inviter:
            text += f'To withdraw it, send "{decline} {inviter} <password>".'
        else:
            text += f'Any player on it may decline it: "{decline} <userid> <password>".'
    body = ctx.render("mail/invitation.txt", headline=text, **_summary(ctx, invitation, None))
    ctx.reply(f"Invitation sent: {invitation.title}", body, kind="invitation")


# -- answering ---------------------------------------------------------------------------


def answer(ctx, invitation, userid: str, accept: bool, comment: str = ""):
    """An accept or decline of one user on the invitation (docs/spec/server.md §11.1)."""
    record = invitation.record
    if record.status != "open":
        ctx.abort(ended_message(invitation))
    if userid not in invitation.users:
        ctx.abort(f"You are not on the invitation to {invitation.title}")
    if not accept:
        withdrawn = userid == record.inviter
        event = f"{userid} has {'withdrawn' if withdrawn else 'declined'} the invitation to"
        _end(
            ctx,
            invitation,
            "withdrawn" if withdrawn else "declined",
            f"{event} {invitation.title}. The board will not be played.",
            (userid, comment),
        )
        return
    if userid not in invitation.waiting:
        ctx.abort(
            f"You have already accepted the invitation to {invitation.title}; it waits for "
            f"{_join(invitation.waiting)}"
        )
    problems, _ = limit_problems(ctx, invitation.game, [userid])
    if problems:
        ctx.abort("\n".join(problems))
    ctx.store.invitations.accept(record.id, userid)
    invitation.reload()
    if invitation.waiting:
        event = (
            f"{userid} has accepted the invitation to {invitation.title}. It waits for "
            f"{_join(invitation.waiting)}."
        )
        _tell(ctx, invitation, event, note=(userid, comment))
        return
    _start(ctx, invitation, (userid, comment))


def _start(ctx, invitation, note):
    """The last acceptance starts the board, if every seat may still be seated: each
    account still there, and each user's limits (docs/spec/server.md §11.1). The rest of
    the challenge's checks (options, seats) held when the invitation was made."""
    record = invitation.record
    userids = list(dict.fromkeys(invitation.userids))
    # Deleted since the invitation:
    problems = [f"Unknown userid: {u}" for u in userids if not ctx.store.users.is_active(u)]
    problems += limit_problems(ctx, invitation.game, userids)[0]
    if problems:
        ctx.abort(
            f"{invitation.title} cannot start yet, so your acceptance was not recorded:\n"
            + "\n".join(problems)
            + "\nAccept again once this has changed, or decline."
        )
    ctx.store.invitations.end(record.id, "started", stamp(ctx.now))
    invitation.reload()
    start_board(
        ctx,
        invitation.game,
        invitation.userids,
        record.options,
        record.server_options,
        comments=[(record.comment_author, record.comment_text or "")] + ([note] if note else []),
        number=record.number,
        events=["Everyone has accepted the invitation."],
    )


def lapse(ctx, invitation):
    """Cleanup's end of an invitation nobody finished answering in time."""
    _end(
        ctx,
        invitation,
        "lapsed",
        f"The invitation to {invitation.title} has lapsed: {_join(invitation.waiting)} did not "
        f"answer within {LAPSE.days} days. The board will not be played.",
        None,
    )


def lapse_due(ctx) -> list[str]:
    """Cleanup (docs/spec/server.md §9.2): every open invitation past its time lapses."""
    done = []
    for record in ctx.store.invitations.lapsing(stamp(ctx.now)):
        if record.game not in ctx.server.games:
            continue
        invitation = Invitation(ctx, record)
        lapse(ctx, invitation)
        done.append(f"{invitation.title}: invitation lapsed")
    return done


def _end(ctx, invitation, status, event, note):
    ctx.store.invitations.end(invitation.record.id, status, stamp(ctx.now))
    invitation.reload()
    _tell(ctx, invitation, event, note=note)


def ended_message(invitation) -> str:
    record = invitation.record
    what = {
        "started": "everyone accepted and the board has started",
        "declined": "it was declined, so the board will not be played",
        "withdrawn": f"{record.inviter} withdrew it",
        "lapsed": f"it lapsed on {show_time(record.ended_at or record.lapses_at)}",
    }[record.status]
    return f"The invitation to {invitation.title} is over: {what}."


# -- mails -------------------------------------------------------------------------------


def _tell(ctx, invitation, headline, note=None, skip=None):
    """Everyone on the invitation (but `skip`) hears what happened, with the invitation as it
    stands; those still to answer get the way to, by reply or by command."""
    for userid in invitation.users:
        if userid == skip:
            continue
        values = _summary(ctx, invitation, userid)
        headers = {"References": ctx.thread_root(invitation, userid)}
        token = invitation.token_of(userid) if values["how"] else None
        if token is not None:
            headers["Reply-To"] = reply_address(ctx.config, token)
        if note is not None and note[1].strip():
            values["note"] = {"author": note[0], "text": note[1].strip()}
        body = ctx.render("mail/invitation.txt", headline=headline, **values)
        ctx.mail_user(userid, invitation.subject, body, "invitation", headers=headers)


def _summary(ctx, invitation, viewer) -> dict:
    """What every mail about the invitation shows: seats, terms, comment, lapse time, and for
    a viewer still to answer, how."""
    game, record = invitation.game, invitation.record
    waiting = set(invitation.waiting)
    seats = [
        f"{game.player_names[seat]}: {userid}"
        + (" (awaited)" if userid in waiting else " (accepted)")
        for seat, userid in enumerate(invitation.userids)
    ]
    clock = ClockTerms.of_options(record.server_options)
    values = {
        "seats": seats,
        "options_line": options_line(game, record.options, len(seats)),
        "server_options": options_text(record.server_options, ctx.server.timeout_defaults()),
        "clock": clock.describe() if clock else "",
        "comment": {"author": record.comment_author, "text": record.comment_text}
        if record.comment_text
        else None,
        "lapses": show_time(record.lapses_at) if record.status == "open" else "",
        "note": None,
        "how": "",
    }
    if record.status == "open" and viewer in waiting:
        values["how"] = f"{game.name} accept {invitation.number} {viewer} <password>"
    return values


def listing(ctx, game, userids=()) -> list[str]:
    """The open invitations the users sent or received (all without users), as the lines
    `games` shows after its board table (docs/spec/server.md §11.1)."""
    rows = []
    for record in ctx.store.invitations.open_of_game(game.name, userids):
        invitation = Invitation(ctx, record)
        rows.append(
            (
                str(record.number),
                record.inviter or "challenge",
                record.lapses_at[:10],
                " ".join(invitation.waiting),
                " ".join(invitation.userids),
            )
        )
    if not rows:
        return []
    return text_table(("Board", "From", "Lapses", "Waiting for", "Players"), rows, right=(0,))


def _join(names) -> str:
    names = list(names)
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
