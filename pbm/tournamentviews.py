"""What a tournament looks like to its readers (docs/spec/server.md §11.9): its terms, its
divisions with their standings, crosstables and boards, as the mails of `tournament show`,
the digests and the final announcement write them and as the web view shows them. Read
only: the standings are derived here, from the boards' results, every time."""

from dataclasses import dataclass

from .clock import show_time
from .grammar import USERID_RE
from .serveroptions import options_text
from .store import TournamentBoardRecord, TournamentEntrantRecord, TournamentRecord
from .summary import MAIL_WIDTH, options_line, text_table
from .timebank import ClockTerms
from .tournaments import Game, Standing, crosstable, result_mark, show_points, standings, winners

# Tournament names have the shape of userids.
NAME_RE = USERID_RE
NAME_RULE = (
    'Tournament names are 2 to 16 characters: a letter, then letters, digits, "_", "." or "-"'
)
STATUS_WORDS = {
    "open": "open for entries",
    "running": "running",
    "finished": "finished",
    "called_off": "called off",
}
DEPARTURES = {"left": "left", "timed_out": "out: two losses on time"}
LEGEND = [
    "Each cell: the row player's result as {first}, then as {second}",
    "(1 a win, = a draw, 0 a loss, . being played).",
]


@dataclass
class DivisionView:
    number: int
    table: list[Standing]  # in standing order
    games: list[Game]  # by board number
    entrants: dict[str, TournamentEntrantRecord]
    boards: list[TournamentBoardRecord]
    reasons: dict[int, str | None]  # board number -> why it ended

    @property
    def order(self) -> list[str]:
        return [s.userid for s in self.table]

    @property
    def ended(self) -> bool:
        return all(game.ended for game in self.games)

    def winners(self) -> list[str]:
        return winners(self.table)

    def note(self, userid: str) -> str:
        return DEPARTURES.get(self.entrants[userid].status, "")


def division_views(store, record: TournamentRecord) -> list[DivisionView]:
    """Every division of a started tournament, its standings derived from the results of
    its boards."""
    entrants = {e.userid: e for e in store.tournaments.entrants(record.id)}
    results = store.tournaments.results(record.id)
    rows = store.tournaments.boards(record.id)
    views = []
    for number in sorted({row.division for row in rows}):
        boards = [row for row in rows if row.division == number]
        games, reasons = [], {}
        for row in boards:
            scores, reason = results.get(row.board_id, ({}, None))
            games.append(
                Game(row.number, row.white, row.black, scores.get(row.white), scores.get(row.black))
            )
            reasons[row.number] = reason
        members = [e for e in entrants.values() if e.division == number]
        members.sort(key=lambda e: (-(e.rating or 0), e.joined_at, e.userid))
        views.append(
            DivisionView(
                number,
                standings([e.userid for e in members], games),
                games,
                {e.userid: e for e in members},
                boards,
                reasons,
            )
        )
    return views


def terms_lines(ctx, game, record: TournamentRecord) -> list[str]:
    """The tournament's terms: game, options, clock, divisions, when it starts."""
    lines = [f"Game: {game.display_name}, every pair of a division plays twice."]
    shown = options_line(game, record.options, 2)
    if shown:
        lines.append(shown)
    clock = ClockTerms.of_options(record.server_options)
    if clock is not None:
        lines.append(f"Clock: {clock.describe()}")
    others = options_text(
        {k: v for k, v in record.server_options.items() if not k.startswith("clock_")},
        ctx.server.timeout_defaults(),
    )
    if others:
        lines.append(f"Server options: {others}")
    lines.append(f"Divisions of at most {record.largest} players, sorted by rating.")
    lines.append(start_line(record))
    if record.creator:
        lines.append(f"Created by {record.creator}.")
    return lines


def start_line(record: TournamentRecord) -> str:
    if record.started_at is not None:
        return f"Started on {show_time(record.started_at)}."
    if record.ended_at is not None:
        return f"Called off on {show_time(record.ended_at)}."
    rules = []
    if record.start_at:
        rules.append(f"on {show_time(record.start_at)}")
    if record.start_players:
        rules.append(f"as soon as {record.start_players} players have joined")
    return (
        "It starts " + ", or ".join(rules) + (", whichever comes first." if len(rules) > 1 else ".")
    )


def table_lines(view: DivisionView) -> list[str]:
    """The standings of a division: rank, player, rating, points, Sonneborn-Berger, games
    won and played, and who left."""
    header = ["Rank", "Player", "Rating", "Points", "SB", "Won", "Played", ""]
    rows = [
        [
            s.rank,
            s.userid,
            view.entrants[s.userid].rating or "",
            show_points(s.points),
            show_points(s.sonneborn_berger),
            s.won,
            f"{s.played}/{s.games}",
            view.note(s.userid),
        ]
        for s in view.table
    ]
    return text_table(header, rows, right={0, 2, 3, 4, 5, 6})


def crosstable_lines(view: DivisionView, game) -> list[str]:
    """The crosstable of a division, when it fits the width of a mail (else none: the web
    view has it)."""
    order = view.order
    header = ["No", "Player"] + [str(i) for i in range(1, len(order) + 1)]
    cells = crosstable(order, view.games)
    rows = []
    for i, userid in enumerate(order):
        marks = [
            "x" if i == j else "".join(result_mark(game, userid) for game in cells[i][j])
            for j in range(len(order))
        ]
        rows.append([i + 1, userid, *marks])
    lines = text_table(header, rows, right={0})
    if max(len(line) for line in lines) > MAIL_WIDTH:
        return []
    first, second = game.player_names[:2]
    return lines + [""] + [line.format(first=first, second=second) for line in LEGEND]


def result_text(game: Game, reason: str | None) -> str:
    if not game.ended:
        return "being played"
    if game.white_score == game.black_score:
        return "draw"
    winner = game.white if (game.white_score or 0) > (game.black_score or 0) else game.black
    return f"{winner} won" + (f" ({reason})" if reason else "")


def schedule_lines(view: DivisionView, game) -> list[str]:
    """Every board of the division: its number, who plays first and second (White and
    Black, in the game's colours) and how it stands."""
    rows = [
        [g.number, g.white, g.black, result_text(g, view.reasons[g.number])] for g in view.games
    ]
    header = ["Board", *game.player_names[:2], "Result"]
    return text_table(header, rows, right={0})


def division_sections(view: DivisionView, game, schedule: bool = False) -> list[dict]:
    """The sections of a mail that shows one division."""
    cross = crosstable_lines(view, game)
    sections = [
        {
            "title": f"Division {view.number} ({len(view.table)} players)",
            "lines": table_lines(view) + ([""] + cross if cross else []),
        }
    ]
    if schedule:
        sections.append(
            {"title": f"Boards of division {view.number}", "lines": schedule_lines(view, game)}
        )
    return sections


def web_url(config, record: TournamentRecord) -> str:
    base = config.get("web.base_url").rstrip("/")
    return f"{base}/tournaments/{record.name}" if base else ""


def listing_rows(store, records) -> list[list]:
    """One row per tournament: name, game, status, players, divisions, when."""
    rows = []
    for record in records:
        entrants = store.tournaments.entrants(record.id)
        divisions = len({e.division for e in entrants if e.division is not None})
        rows.append(
            [
                record.name,
                record.game,
                STATUS_WORDS[record.status],
                len(entrants),
                divisions or "",
                _start_short(record),
            ]
        )
    return rows


def _start_short(record: TournamentRecord) -> str:
    """When it starts or started, in a listing's column."""
    if record.started_at:
        return show_time(record.started_at)[:10]
    rules = []
    if record.start_at:
        rules.append(show_time(record.start_at))
    if record.start_players:
        rules.append(f"at {record.start_players} players")
    return " or ".join(rules)
