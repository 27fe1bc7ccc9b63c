"""Draw the sample board-mail pictures of docs/pictures/<game>-mail.png again, from seeded
random games, so that a change to a game's picture can be shown in the README as it now
looks:

    .venv/bin/python tools/mail_pictures.py

Each picture is the PNG an HTML board mail carries (pbm.pictures.board_png), spectator view,
the last move highlighted: a game in its middle, or for Knight Line its end, with the
winning line outlined.
"""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from games.knightline import KnightLine  # noqa: E402
from games.knightpanic import KnightPanic  # noqa: E402
from games.knightvision import KnightVision  # noqa: E402
from games.lox import Lox  # noqa: E402
from games.uknight import Uknight  # noqa: E402
from pbm.pictures import board_png  # noqa: E402
from pbm.testing import random_game  # noqa: E402

# file name: (game, options, seed, plies; None plays to the end)
SAMPLES = {
    "knightline-mail.png": (KnightLine(), {}, 2, None),
    "knightpanic-mail.png": (KnightPanic(), {}, 3, 6),
    "knightpanic-3d-mail.png": (KnightPanic(), {"3d": True}, 3, 12),
    "knightvision-mail.png": (KnightVision(), {}, 1, 60),
    "lox-mail.png": (Lox(), {"size": "11", "control": True}, 1, 40),
    "uknight-mail.png": (Uknight(), {}, 2, 60),
}


def main() -> None:
    folder = ROOT / "docs" / "pictures"
    for name, (game, raw, seed, plies) in SAMPLES.items():
        options = game.parse_options(raw, 2)
        moves, state = random_game(game, options, 2, seed, max_plies=plies or 2000)
        (folder / name).write_bytes(board_png(game, state, None, moves[-1]))
        print(f"{folder / name}: {game.display_name} after {len(moves)} plies")


if __name__ == "__main__":
    main()
