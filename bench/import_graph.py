"""The import graph of ``ancha``, type-checking imports included: modules per layer, imports
that run back up the layers, and the circles (strongly connected components) with their sizes.

    python bench/import_graph.py [--src DIR]

The layers are the import-linter contract's (``pyproject.toml``), with ``ancha.world`` split
into its core, its tools and its kernel. Not a benchmark: it measures structure, and
``tests/project/test_import_graph.py`` keeps what it shows true.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

import grimp

LAYERS: tuple[tuple[str, ...], ...] = (
    ("ancha.cli", "ancha.vendor"),
    ("ancha.runner", "ancha.console"),
    ("ancha.results",),
    ("ancha.server",),
    ("ancha.checks",),
    ("ancha.world",),  # the world core: environment, people, rules, predicates, registry
    ("ancha.world.tools",),
    ("ancha.world.kernel",),
    ("ancha.scene",),
    ("ancha.config",),
    ("ancha",),  # the top-level leaf modules (durations, errors)
)
TOOLS_PACKAGE = "ancha.world.tools"


def layer_of(module: str) -> int:
    """The index of the most specific layer holding ``module``."""
    best, depth = len(LAYERS) - 1, -1
    for index, names in enumerate(LAYERS):
        for name in names:
            if (module == name or module.startswith(name + ".")) and name.count(".") > depth:
                best, depth = index, name.count(".")
    return best


def layer_name(index: int) -> str:
    names = LAYERS[index]
    if names == ("ancha.world",):
        return "ancha.world (core)"
    if names == ("ancha",):
        return "ancha (leaf modules)"
    return " | ".join(names)


def build(src: Path | None = None) -> grimp.ImportGraph:
    if src is not None:
        sys.path.insert(0, str(src))
    return grimp.build_graph("ancha", include_external_packages=False, exclude_type_checking_imports=False,
                             cache_dir=None)


def upward_imports(graph: grimp.ImportGraph) -> list[tuple[str, str]]:
    """Imports from a lower layer to a higher one (``importer``, ``imported``)."""
    found = []
    for importer in graph.modules:
        for imported in graph.find_modules_directly_imported_by(importer):
            if layer_of(importer) > layer_of(imported):
                found.append((importer, imported))
    return sorted(found)


def circles(graph: grimp.ImportGraph) -> list[set[str]]:
    """Strongly connected components of more than one module, largest first (Tarjan, iterative)."""
    modules = sorted(graph.modules)
    edges = {m: sorted(graph.find_modules_directly_imported_by(m)) for m in modules}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[set[str]] = []
    counter = 0
    for root in modules:
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            node, i = work.pop()
            if i == 0:
                index[node] = low[node] = counter
                counter += 1
                stack.append(node)
                on_stack.add(node)
            recurse = False
            for j in range(i, len(edges[node])):
                nxt = edges[node][j]
                if nxt not in index:
                    work.append((node, j + 1))
                    work.append((nxt, 0))
                    recurse = True
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            if recurse:
                continue
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(component)
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
    return sorted(found, key=len, reverse=True)


def tool_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[3] if module.startswith(TOOLS_PACKAGE + ".") and len(parts) > 3 else None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--src", type=Path, default=None, help="a checkout's src/ folder (default: the installed ancha)")
    args = parser.parse_args()
    graph = build(args.src)
    per_layer = Counter(layer_of(m) for m in graph.modules)
    up = upward_imports(graph)
    up_from = Counter(layer_of(a) for a, _ in up)
    print(f"{'layer':<28} {'modules':>8} {'imports back up':>16}")
    for index in range(len(LAYERS)):
        print(f"{layer_name(index):<28} {per_layer.get(index, 0):>8} {up_from.get(index, 0):>16}")
    print(f"{'total':<28} {len(graph.modules):>8} {len(up):>16}")
    print()
    found = circles(graph)
    print(f"circles: {len(found)}" + (f"; sizes {', '.join(str(len(c)) for c in found)}" if found else ""))
    for component in found:
        places = Counter(tool_of(m) and f"{TOOLS_PACKAGE}.{tool_of(m)}" or layer_name(layer_of(m)) for m in component)
        print(f"  {len(component):>3} modules: " + ", ".join(f"{name} {n}" for name, n in places.most_common()))
    cross = [(a, b) for a, b in up if tool_of(a) is not None]
    print(f"tool modules importing above the kernel: {len(cross)}")
    for a, b in cross[:10]:
        print(f"  {a} -> {b}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
