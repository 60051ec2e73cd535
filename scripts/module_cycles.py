#!/usr/bin/env python3
"""The largest import cycle among the top-level modules of a Rust module folder.

Each top-level module (a `NAME.rs` or a `NAME/` folder) depends on another when any of
its files names it by an absolute path, `PREFIX::NAME` (in a `use`, a grouped
`use PREFIX::{...}` or inline in code), or as `super::NAME` from the module's own top
file; comments are left out. The cycles are the
strongly connected components of that graph (Tarjan). Fails when the largest has more
than --max modules.

  python3 scripts/module_cycles.py src/tui --prefix crate::tui --max 8
  python3 scripts/module_cycles.py crates/core/src --prefix crate --max 1
"""
import argparse
import os
import re
import sys


def modules(root):
    """Top-level module name -> the files it holds."""
    found = {}
    for name in os.listdir(root):
        path = os.path.join(root, name)
        if name in ("mod.rs", "lib.rs", "main.rs") or name.startswith("."):
            continue
        if name.endswith(".rs"):
            found.setdefault(name[:-3], []).append(path)
        elif os.path.isdir(path):
            for folder, _, files in os.walk(path):
                found.setdefault(name, []).extend(
                    os.path.join(folder, f) for f in files if f.endswith(".rs"))
    return found


def names_after(prefix, text):
    """The first path segments named after `prefix::` (grouped imports included)."""
    pattern = re.escape(prefix) + r"::(\{[^;]*?\}|\w+)"
    for match in re.finditer(pattern, text):
        group = match.group(1)
        if group.startswith("{"):
            yield from re.findall(r"(?:^|[{,]\s*)(\w+)", group)
        else:
            yield group


def graph(root, prefix):
    found = modules(root)
    edges = {name: set() for name in found}
    for name, files in found.items():
        for path in files:
            with open(path, encoding="utf-8") as f:
                text = re.sub(r"(?m)^\s*//.*$", "", f.read())
            named = list(names_after(prefix, text))
            # `super::` names the root's modules from a top-level file or folder module.
            depth = os.path.relpath(path, root).count(os.sep)
            if depth == 0 or (depth == 1 and path.endswith("mod.rs")):
                named += names_after("super", text)
            edges[name].update(n for n in named if n in found and n != name)
    return edges


def cycles(edges):
    """Strongly connected components, largest first."""
    index, low, stack, on, found = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            found.append(sorted(component))

    sys.setrecursionlimit(10_000)
    for v in sorted(edges):
        if v not in index:
            visit(v)
    return sorted(found, key=len, reverse=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root")
    parser.add_argument("--prefix", required=True)
    parser.add_argument("--max", type=int, required=True)
    args = parser.parse_args()
    edges = graph(args.root, args.prefix)
    largest = cycles(edges)[0]
    size = len(largest) if len(largest) > 1 else 0
    print(f"{args.root}: {len(edges)} top-level modules, largest import cycle "
          f"{size} (at most {args.max}): {', '.join(largest) if size else 'none'}")
    return 0 if size <= args.max else 1


if __name__ == "__main__":
    sys.exit(main())
