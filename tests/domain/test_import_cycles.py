"""No import cycles inside a package: a module can be read, tested and
changed knowing only what it imports (every import counts, those inside a
function or under TYPE_CHECKING too)."""

from __future__ import annotations

import grimp
import pytest

#: The packages held to it.
PACKAGES = ["domain", "eventstore", "service"]


def cycles(graph: grimp.ImportGraph, package: str) -> list[list[str]]:
    """The strongly connected sets of more than one module of ``package``
    (Tarjan's algorithm over the direct imports)."""
    modules = sorted(m for m in graph.modules if m.startswith(f"{package}."))
    inside = set(modules)
    edges = {
        m: sorted(inside & graph.find_modules_directly_imported_by(m)) for m in modules
    }
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for imported in edges[module]:
            if imported not in index:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in stack:
                low[module] = min(low[module], index[imported])
        if low[module] == index[module]:
            component = []
            while True:
                top = stack.pop()
                component.append(top)
                if top == module:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for module in modules:
        if module not in index:
            visit(module)
    return found


@pytest.mark.parametrize("package", PACKAGES)
def test_no_import_cycle_inside_the_package(package: str) -> None:
    assert cycles(grimp.build_graph(package, cache_dir=None), package) == []


def test_a_cycle_is_found() -> None:
    graph = grimp.ImportGraph()
    for importer, imported in [("p.a", "p.b"), ("p.b", "p.c"), ("p.c", "p.a")]:
        graph.add_import(
            importer=importer, imported=imported, line_number=1, line_contents=""
        )
    graph.add_import(importer="p.d", imported="p.a", line_number=1, line_contents="")
    assert cycles(graph, "p") == [["p.a", "p.b", "p.c"]]
