"""The package's import graph: arrows point down.

* No import cycle inside ``pysdcmicro`` (every import counts, those inside functions too):
  the algorithm cores sit below the pipeline, the pipeline below the facade, the public
  method functions above it, and the registry is a leaf.
* The front ends (``pysdcmicro.cli``, ``pysdcmicro.bridges``) sit on top: no other module
  of the package imports them.

The graph comes from grimp (installed with import-linter).
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

grimp = pytest.importorskip("grimp", reason="grimp (installed with import-linter) builds the import graph")

import pysdcmicro  # noqa: E402

PACKAGE = "pysdcmicro"
FRONT_ENDS = ("pysdcmicro.cli", "pysdcmicro.bridges")

@pytest.fixture(scope="module")
def graph():
    root = Path(pysdcmicro.__file__).resolve().parent
    g = grimp.build_graph(PACKAGE, include_external_packages=False, cache_dir=None)
    # the graph must be of the package under test, not of another copy on sys.path
    assert any(Path(m.__file__).resolve().parent == root for m in [sys.modules[PACKAGE]])
    return g


def _strongly_connected(g) -> list[list[str]]:
    """Tarjan's algorithm, iterative: the components of more than one module."""
    adj = {m: sorted(g.find_modules_directly_imported_by(m)) for m in sorted(g.modules)}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    counter = 0
    for start in adj:
        if start in index:
            continue
        work = [(start, iter(adj[start]))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(adj[w])))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def _one_cycle(g, component: list[str]) -> str:
    """One cycle through the component, as ``a -> b -> ... -> a`` with line numbers."""
    members = set(component)
    a = component[0]
    b = next(m for m in sorted(g.find_modules_directly_imported_by(a)) if m in members)
    back = g.find_shortest_chain(importer=b, imported=a) or (b, a)
    chain = (a,) + tuple(back)
    steps = []
    for importer, imported in zip(chain, chain[1:]):
        lines = sorted({d["line_number"] for d in g.get_import_details(importer=importer, imported=imported)})
        steps.append(f"{importer} -> {imported} (line {', '.join(map(str, lines))})")
    return "; ".join(steps)


def test_no_import_cycle(graph):
    components = _strongly_connected(graph)
    assert not components, "import cycles in the package:\n" + "\n".join(
        f"  {len(c)} modules: {_one_cycle(graph, c)}" for c in components)




def _front_end_of(module: str) -> str | None:
    return next((f for f in FRONT_ENDS if module == f or module.startswith(f + ".")), None)


def _may_import_front_ends(module: str) -> bool:
    # the front ends themselves, and `python -m pysdcmicro` (the command line's entry)
    return _front_end_of(module) is not None or module == "pysdcmicro.__main__"


def _source_imports(root: Path):
    """(importer, imported) for every import statement of the package's files, resolved to
    absolute names: it sees imports of modules the graph does not hold (a front end that
    lives outside the package directory)."""
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root.parent).with_suffix("")
        parts = list(rel.parts)
        is_init = parts[-1] == "__init__"
        if is_init:
            parts = parts[:-1]
        module = ".".join(parts)
        package = parts if is_init else parts[:-1]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    yield module, alias.name
            elif isinstance(node, ast.ImportFrom):
                base = package[:len(package) - node.level + 1] if node.level else []
                name = ".".join(base + ([node.module] if node.module else []))
                yield module, name
                for alias in node.names:
                    yield module, f"{name}.{alias.name}"


def _front_end_imports(graph) -> set[tuple[str, str]]:
    """(importer, front end) for every module below the front ends that imports one."""
    found = set()
    for module in graph.modules:
        if _may_import_front_ends(module):
            continue
        for imported in graph.find_modules_directly_imported_by(module):
            front = _front_end_of(imported)
            if front is not None:
                found.add((module, front))
    root = Path(pysdcmicro.__file__).resolve().parent
    for module, imported in _source_imports(root):  # also a front end outside the package directory
        front = _front_end_of(imported)
        if front is not None and not _may_import_front_ends(module):
            found.add((module, front))
    return found


def test_front_ends_are_on_top(graph):
    bad = _front_end_imports(graph)
    assert not bad, "modules below the front ends import them:\n" + "\n".join(
        f"  {a} imports {b}" for a, b in sorted(bad))




def test_registry_is_a_leaf(graph):
    """The registry imports no method module: methods register when their package is imported."""
    assert graph.find_modules_directly_imported_by("pysdcmicro._registry") <= {"pysdcmicro._errors"}


ALGORITHMS = ("pysdcmicro.constructive", "pysdcmicro.univariate", "pysdcmicro.local_search",
              "pysdcmicro.optimization")
ABOVE_THE_CORES = {"pysdcmicro", "pysdcmicro._api", "pysdcmicro._methods", "pysdcmicro._pipeline"}


@pytest.mark.parametrize("package", ALGORITHMS + ("pysdcmicro.large",))
def test_cores_and_large_path_never_import_the_layers_above(graph, package):
    """Algorithm cores and the large-data path call down (a core imports the cores it uses; the
    large path runs blocks through pysdcmicro._solve), never the pipeline, the facade or the
    method functions. Only ``pysdcmicro.large``'s own ``__init__`` names its public front
    (built in pysdcmicro._methods) lazily."""
    bad = sorted(_upward_imports(graph, package))
    assert not bad, "\n".join(f"{a} imports {b}" for a, b in bad)


def _upward_imports(graph, package: str) -> set[tuple[str, str]]:
    found = set()
    for module in {package, *graph.find_descendants(package)}:
        if module == "pysdcmicro.large":
            continue
        for imported in graph.find_modules_directly_imported_by(module):
            if imported in ABOVE_THE_CORES:
                found.add((module, imported))
    return found




def test_cycle_check_can_fail():
    """The check finds a cycle in a graph that has one, and names it."""
    g = grimp.ImportGraph()
    for m in ("p", "p.a", "p.b", "p.c"):
        g.add_module(m)
    g.add_import(importer="p.a", imported="p.b", line_number=1, line_contents="from . import b")
    g.add_import(importer="p.b", imported="p.c", line_number=2, line_contents="from . import c")
    g.add_import(importer="p.c", imported="p.a", line_number=3, line_contents="from . import a")
    (component,) = _strongly_connected(g)
    assert component == ["p.a", "p.b", "p.c"]
    assert _one_cycle(g, component) == "p.a -> p.b (line 1); p.b -> p.c (line 2); p.c -> p.a (line 3)"
