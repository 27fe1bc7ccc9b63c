"""The layers of pbm import one way: no module under pbm/ may, through any chain of imports,
import itself again. Every import statement counts, those inside functions too: a deferred
import is still a dependency, only a later one."""

import ast
from pathlib import Path

import pbm

PACKAGE_DIR = Path(pbm.__file__).resolve().parent


def _modules() -> dict[str, Path]:
    modules = {}
    for path in PACKAGE_DIR.rglob("*.py"):
        parts = ("pbm",) + path.relative_to(PACKAGE_DIR).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        modules[".".join(parts)] = path
    return modules


def _ancestors(name: str) -> list[str]:
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


def import_graph() -> dict[str, set[str]]:
    """Module -> the pbm modules it imports. Importing a.b.c runs the packages a and a.b
    first, so those count too, unless the importer lives inside them (then they are
    already being imported)."""
    modules = _modules()
    graph = {name: set() for name in modules}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - node.level + 1]
                    source = ".".join(base + ([node.module] if node.module else []))
                else:
                    source = node.module or ""
                targets = [source] + [f"{source}.{alias.name}" for alias in node.names]
            else:
                continue
            for target in targets:
                if target not in modules:
                    continue
                own = set(_ancestors(name))
                for needed in _ancestors(target) + [target]:
                    if needed != name and needed not in own and needed in modules:
                        graph[name].add(needed)
    return graph


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on_stack, cycles = {}, {}, [], set(), []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in sorted(graph[node]):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return cycles


def test_the_checker_sees_every_kind_of_import():
    graph = import_graph()
    assert "pbm.boards" in graph["pbm.cleanup"]  # from .boards import ... at the top
    assert "pbm.mailout" in graph["pbm.cleanup"]  # from .mailout import ... in a function
    assert "pbm.commands" in graph["pbm.dispatch"]  # from . import commands
    assert "pbm.commands.play" in graph["pbm.commands.votes"]  # a sibling in a package
    assert "pbm.commands" not in graph["pbm.commands.votes"]  # its own package runs already


def test_the_checker_finds_a_cycle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert import_cycles(graph) == [["a", "b", "c"]]


def test_no_import_cycle_inside_pbm():
    cycles = import_cycles(import_graph())
    assert cycles == [], "import cycles: " + "; ".join(" <-> ".join(c) for c in cycles)
