"""One function per pbmserv command, registered with the grammar by its module.

A module is imported when the grammar first meets one of its words (grammar.specs_for), not
all of them for every mail: the mail pipe starts a process per mail, and most of these
modules serve commands that mail does not run. MODULES says which words each module
defines; tests/test_grammar.py keeps it true to what the modules register.
"""

from importlib import import_module

from ..grammar import use_command_loader

MODULES = {
    "accounts": ("add", "change", "delete", "signoff", "signup"),
    "batch": ("multiple",),
    "cleanup": ("cleanup",),
    "export": ("export",),
    "info": ("all", "games", "help", "list", "show", "showas"),
    "invitations": ("decline", "invitations", "invite"),
    "pending": ("boardq", "confirm", "moveq", "qboard", "qmove", "queue", "submit"),
    "play": ("--", "board", "challenge", "move", "mvoe", "pass", "resign", "swap"),
    "previews": ("preview", "replay"),
    "ranking": ("history", "ratings", "standings"),
    "recovery": ("forgot", "reset"),
    "seeks": ("seek", "seeks"),
    "settings": ("digest", "html", "limit", "subjects", "vacation"),
    "tournaments": ("tournament",),
    "votes": ("accept", "propose", "reject", "undo"),
    "watch": ("broadcast", "chat", "message", "notify", "subscribe", "unsubscribe"),
}
_loaded: set[str] = set()
_asked: set[str | None] = set()  # words whose modules are loaded: a writer meets them often


def load_commands(word: str | None = None) -> None:
    """Import the modules defining a word the given one may stand for (itself, or a word
    it abbreviates); every module when word is None."""
    lowered = None if word is None else word.lower()
    if lowered in _asked or None in _asked:
        return
    for module, words in MODULES.items():
        if module in _loaded:
            continue
        if lowered is None or any(w.startswith(lowered) for w in words):
            import_module(f"{__name__}.{module}")
            _loaded.add(module)
    _asked.add(lowered)


use_command_loader(load_commands)
