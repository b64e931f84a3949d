"""No import cycle in the engine or the dashboard, module by module.

Imports are counted as import-linter counts them (grimp: those inside functions and under
``TYPE_CHECKING`` too), so a cycle that only a lazy import hides is still one. CI also runs
the ``acyclic_siblings`` contract (pyproject.toml); this test sees what that one does not: a
package's ``__init__`` and one of its own modules importing each other.
"""

from __future__ import annotations

import grimp

PACKAGES = ("engine", "tui")


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                elif child in on:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_cycle_finder_finds_cycles() -> None:
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e"}, "f": set()}
    assert cycles(edges) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_module_of_the_engine_or_the_dashboard_is_in_an_import_cycle() -> None:
    graph = grimp.build_graph(*PACKAGES, include_external_packages=False)
    ours = set(graph.modules)
    edges = {m: set(graph.find_modules_directly_imported_by(m)) & ours for m in ours}
    assert cycles(edges) == []
