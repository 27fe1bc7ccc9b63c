"""The pictures of the game specs (docs/spec/games/hexgrid.md, docs/spec/games/knightvision.md,
docs/spec/games/lox.md, docs/spec/games/uknight.md), verbatim: the geometry tests and the game tests
compare drawings with them."""

KNIGHT_PICTURE_9X9 = """\
       a b c d e f g h i
   1   . . . . - . . . -   1
    2   . . . . - N N - .   2
     3   . . . N - . - N .   3
      4   . . N . - - . N .   4
       5   - - - - * - - - -   5
        6   . N . - - . N . .   6
         7   . N - . - N . . .   7
          8   . - N N - . . . .   8
           9   - . . . - . . . .   9
                a b c d e f g h i
"""

KNIGHT_PICTURE_BASE5 = """\
 A B C D E F G H I
     9   . . . . .   9
    8   . . N N . .   8
   7   . N . . . N .   7
  6   . N . . . . N .   6
 5   . . . . * . . . .   5
  4   . N . . . . N .   4
   3   . N . . . N .   3
    2   . . N N . .   2
     1   . . . . .   1
          A B C D E F G H I
"""

EMPTY_9X9 = """\
       a b c d e f g h i
   1   . . . . . . . . .   1
    2   . . . . . . . . .   2
     3   . . . . . . . . .   3
      4   . . . . . . . . .   4
       5   . . . . . . . . .   5
        6   . . . . . . . . .   6
         7   . . . . . . . . .   7
          8   . . . . . . . . .   8
           9   . . . . . . . . .   9
                a b c d e f g h i
"""

NAMED_BASE5 = """\
            I9
         H9    I8
      G9    H8    I7
   F9    G8    H7    I6
E9    F8    G7    H6    I5
   E8    F7    G6    H5
D8    E7    F6    G5    H4
   D7    E6    F5    G4
C7    D6    E5    F4    G3
   C6    D5    E4    F3
B6    C5    D4    E3    F2
   B5    C4    D3    E2
A5    B4    C3    D2    E1
   A4    B3    C2    D1
      A3    B2    C1
         A2    B1
            A1
"""

EMPTY_BASE5 = """\
 A B C D E F G H I
     9   . . . . .   9
    8   . . . . . .   8
   7   . . . . . . .   7
  6   . . . . . . . .   6
 5   . . . . . . . . .   5
  4   . . . . . . . .   4
   3   . . . . . . .   3
    2   . . . . . .   2
     1   . . . . .   1
          A B C D E F G H I
"""

KV1 = """\
       a b c d e f g h i
   1   . . . . . . . . .   1
    2   . . . . . o o . .   2
     3   . . b o . . . o .   3
      4   . . o . . . . o .   4
       5   . . . . w . . . .   5
        6   . o . . . . o . .   6
         7   . o . . . o . . .   7
          8   . . o o . . . . .   8
           9   . . . . . . . . .   9
                a b c d e f g h i
"""

KV2 = """\
       a b c d e f g h i
   1   . . . . . . . . .   1
    2   . . . . . w . . .   2
     3   . . . . . . . . .   3
      4   . . w . . . . . .   4
       5   . . . . . . . . .   5
        6   . . . . . . w . .   6
         7   . . . . . . . . .   7
          8   . . . . . . . . .   8
           9   b . . . . . . . .   9
                a b c d e f g h i
"""

KV5 = """\
       a b c d e f g h i
   1   w . . . . . . . .   1
    2   . . b . . . . . .   2
     3   . b . . . . . . .   3
      4   . . . . . . . . .   4
       5   . . . . . . . . .   5
        6   . . . . . . . . .   6
         7   . . . . . . . . .   7
          8   . . . . . . . . .   8
           9   . . . . . . . . .   9
                a b c d e f g h i
"""

LX1 = """\
       a b c d e f g h i j k
   1   . . . . . . . . . . .   1
    2   . . . . . R . . . . .   2
     3   . . . . . . . . . . .   3
      4   . . . . . . . . . . .   4
       5   . . . . . . . . . . .   5
        6   . R . . . . . . . R .   6
         7   . . . . . . . . . . .   7
          8   . . . . . . . . . . .   8
           9   . . . . . R . . . . .   9
           10   . . . . . . . . . . .   10
            11   . . . . . . . . . . .   11
                  a b c d e f g h i j k
"""

LX2 = """\
       a b c d e f g h i j k
   1   . . . . . . . . . . .   1
    2   . . . . . R . . . . .   2
     3   . . . . . . . . . . .   3
      4   . . . . . . . . . . .   4
       5   . . . . . . . . . . .   5
        6   . R . . . . . . . R .   6
         7   . . . . . B . . . . .   7
          8   . . . . . . . . . . .   8
           9   . . . . . R . . . . .   9
           10   . . . . . . . . . . .   10
            11   . . . . . . . . . . .   11
                  a b c d e f g h i j k
"""

LX3 = """\
       a b c d e f g h i j k
   1   . . . . . . . . . . .   1
    2   . . . . . R . . . . .   2
     3   . . . . . . . . . . .   3
      4   . . . . . . . . . . .   4
       5   . . . . . . . . . . .   5
        6   . R . . . B . . . R .   6
         7   . . . . . . . . . . .   7
          8   . . . . . . . . . . .   8
           9   . . . . . R . . . . .   9
           10   . . . . . . . . . . .   10
            11   . . . . . . . . . . .   11
                  a b c d e f g h i j k
"""

UK_START_BASE6 = """\
A B C D E F G H I J K
     11   . b . . w .   11
    10   w . . . . . b   10
    9   . . . . . . . .   9
   8   . . . . . . . . .   8
  7   b . . . . . . . . w   7
 6   . . . . . . . . . . .   6
  5   w . . . . . . . . b   5
   4   . . . . . . . . .   4
    3   . . . . . . . .   3
     2   b . . . . . w   2
      1   . w . . b .   1
           A B C D E F G H I J K
"""

UK_START_BASE5 = """\
 A B C D E F G H I
     9   . b . w .   9
    8   w . . . . b   8
   7   . . . . . . .   7
  6   b . . . . . . w   6
 5   . . . . . . . . .   5
  4   w . . . . . . b   4
   3   . . . . . . .   3
    2   b . . . . w   2
     1   . w . b .   1
          A B C D E F G H I
"""

UK2 = """\
 A B C D E F G H I
     9   . . . . b   9
    8   . . . . . .   8
   7   . . . . . . .   7
  6   . . . . . . . .   6
 5   . . . . . . . . .   5
  4   . . . . . . w .   4
   3   . w . . . . .   3
    2   . . w . . .   2
     1   . . . . .   1
          A B C D E F G H I
"""

UK5 = """\
 A B C D E F G H I
     9   . . . . w   9
    8   . . . . . .   8
   7   . . . . . . .   7
  6   . . . . . . . .   6
 5   . . . . . . . . .   5
  4   . b b . . . . .   4
   3   . . . b . . .   3
    2   . . . b . .   2
     1   w . . . .   1
          A B C D E F G H I
"""
