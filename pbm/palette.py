"""The colours of board pictures, "#rrggbb" (pbm.drawing re-exports them for games).

The palette is Okabe-Ito's, safe for colour-blind readers; every seat must differ by a
letter or a shape as well as by colour.
"""

# Okabe & Ito, "Color Universal Design" (2008)
BLACK = "#000000"
ORANGE = "#e69f00"
SKY_BLUE = "#56b4e9"
GREEN = "#009e73"
YELLOW = "#f0e442"
BLUE = "#0072b2"
VERMILLION = "#d55e00"
PURPLE = "#cc79a7"
WHITE = "#ffffff"
# Neutral colours for the board itself.
PAPER = "#ffffff"
CELL = "#efe6cf"
CELL_DARK = "#dccfae"
GRID = "#7a6f5a"
INK = "#222222"
GREY = "#999999"
HIGHLIGHT = YELLOW  # under the cells of the last move
HIGHLIGHT_EDGE = PURPLE
WINNING = GREEN  # around the cells of the line or chain that won
