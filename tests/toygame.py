"""Tally: a tiny game for core tests, with the features Knight Panic lacks.

Players in turn add 1 or 2 to a running total; whoever reaches the target wins. It has
a pie rule after one ply, voluntary passes and up to three seats.
"""

from pbm import hookimpl
from pbm.game import BaseGame, MoveError, OptionError, Outcome


class Tally(BaseGame):
    name = "tally"
    display_name = "Tally"
    player_names = ("Red", "Blue", "Green")
    min_players = 2
    max_players = 3
    swap_after = 1

    def parse_options(self, raw, players):
        options = {"target": 10, "handicap": 0}
        for name, value in raw.items():
            if name not in options or value is True or not str(value).isdigit():
                raise OptionError(
                    f'Invalid Tally parameter "-{name}": the options are -target=N, -handicap=N'
                )
            options[name] = int(value)
        return options

    def initial_state(self, options, players, seed):
        return {
            "total": options["handicap"],
            "target": options["target"],
            "players": players,
            "to_move": 0,
            "winner": None,
        }

    def to_move(self, state):
        return None if state["winner"] is not None else state["to_move"]

    def parse_move(self, state, seat, text):
        if text not in ("1", "2"):
            raise MoveError(f'Invalid move "{text}": add 1 or 2')
        return text

    def legal_moves(self, state, seat):
        return ["1", "2"] if self.to_move(state) == seat else []

    def apply_move(self, state, seat, move):
        new = dict(state, to_move=(seat + 1) % state["players"])
        if move != "pass":
            new["total"] = state["total"] + int(move)
            if new["total"] >= state["target"]:
                new["winner"] = seat
        return new

    def outcome(self, state):
        return (
            None
            if state["winner"] is None
            else Outcome((state["winner"],), reason="target reached")
        )

    def can_pass(self, state, seat):
        return True

    def render_board(self, state, perspective):
        return f"Total: {state['total']} of {state['target']}"

    def help_text(self):
        return "Tally: add 1 or 2; reach the target to win."


@hookimpl
def register_games(register):
    register(Tally())
