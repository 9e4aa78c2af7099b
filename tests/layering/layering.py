#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The module graph of srt, read from its #include lines, and the check that keeps it.

Every quoted #include of the production code (libsrt, proxy, srt-cli, srt-poller, srt-mcp, bench,
examples) is resolved to the file it names and both ends are mapped to their module. The
check fails on an edge that the checked-in table (edges.txt) does not list, on a table row
that no include uses any more, and on a quoted include that names no file of the tree.

  layering.py check [--root DIR] [--table FILE]   exit 1 and say why on any difference
  layering.py graph [--root DIR]                  the edges with their include counts
  layering.py dot   [--root DIR]                  the same as a Graphviz digraph

Tests may include anything they test and are not checked; examples may see only the public
API, which the table says like any other edge.
"""
import argparse
import os
import re
import subprocess
import sys

# Production code roots: (folder, how its modules are named).
CHECKED = ("libsrt/", "proxy/", "srt-cli/", "srt-poller/", "srt-mcp/", "bench/", "examples/")
SOURCE = re.compile(r".*\.(h|hh|cc|c|S|h\.in|inc)$")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')

# The folders a quoted include is looked up in after the including file's own folder. The
# order does not matter for correctness: a name that two roots hold is an error below.
INCLUDE_ROOTS = (
    "libsrt/include",
    "libsrt/init_protocol",
    "libsrt/src",
    "proxy/include",
    "proxy/src",
    "srt-cli",
    "srt-poller/src",
    "srt-mcp/src",
    "bench",
    "tests",
)


def module_of(path):
    """The module a file belongs to: its second-level folder for the libraries, a fixed name
    for the programs."""
    parts = path.split("/")
    if path == "libsrt/include/srt/result.h":
        # Result/Error alone: what every floor speaks. Apart from the rest of the API, so that
        # the table shows who knows the settings and the sandbox (the proxy must not).
        return "api/result"
    if path.startswith("libsrt/include/"):
        return "api"
    if path.startswith("libsrt/init_protocol/"):
        return "init_protocol"
    if path.startswith("libsrt/src/"):
        return parts[2] if len(parts) > 3 else "facade"
    if path.startswith("proxy/include/"):
        return "proxy/api"
    if path.startswith("proxy/src/"):
        return "proxy/" + (parts[2] if len(parts) > 3 else "limits")
    if path.startswith("srt-cli/init/"):
        return "srt-init"
    if path.startswith("srt-cli/"):
        return "srt-cli"
    if path.startswith("srt-poller/src/"):
        return "poller/" + parts[2]
    if path.startswith("srt-mcp/src/"):
        return "mcp/" + parts[2]
    if path.startswith("bench/"):
        return "bench"
    if path.startswith("examples/"):
        return "examples"
    if path.startswith("tests/"):
        return "tests"  # only the benchmarks borrow from it (its fake control plane)
    return None


def tracked_sources(root):
    out = subprocess.run(["git", "-C", root, "ls-files", "--cached", "--others",
                          "--exclude-standard"], check=True, capture_output=True,
                         text=True).stdout.split("\n")
    return sorted(p for p in out if SOURCE.match(p) and os.path.exists(os.path.join(root, p)))


def resolve(root, files, including, name):
    """The tracked file that `#include "name"` in `including` names, or None. A generated
    header (x.h from x.h.in) resolves to its template."""
    candidates = [os.path.normpath(os.path.join(os.path.dirname(including), name))]
    candidates += [os.path.normpath(os.path.join(r, name)) for r in INCLUDE_ROOTS]
    found = []
    for c in candidates:
        for variant in (c, c + ".in"):
            if variant in files and variant not in found:
                found.append(variant)
    if not found:
        return None, []
    return found[0], found


def edges(root):
    files = set(tracked_sources(root))
    graph = {}
    problems = []
    for path in sorted(files):
        if not path.startswith(CHECKED):
            continue
        src = module_of(path)
        with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
            for lineno, line in enumerate(f, 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                target, found = resolve(root, files, path, m.group(1))
                if target is None:
                    problems.append(f"{path}:{lineno}: #include \"{m.group(1)}\" names no "
                                    "file of the tree")
                    continue
                if len(found) > 1:
                    problems.append(f"{path}:{lineno}: #include \"{m.group(1)}\" could be "
                                    f"any of {', '.join(found)}")
                dst = module_of(target)
                if dst != src:
                    graph.setdefault((src, dst), []).append(f"{path}:{lineno}")
    return graph, problems


def read_table(path):
    table = {}
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            m = re.fullmatch(r"(\S+)\s*->\s*(\S+)", line)
            if not m:
                raise SystemExit(f"{path}:{lineno}: expected 'module -> module', got {line!r}")
            table[(m.group(1), m.group(2))] = lineno
    return table


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("mode", choices=("check", "graph", "dot"))
    ap.add_argument("--root", default=os.path.normpath(os.path.join(here, "..", "..")))
    ap.add_argument("--table", default=os.path.join(here, "edges.txt"))
    args = ap.parse_args()
    graph, problems = edges(args.root)
    if args.mode == "graph":
        for (a, b), where in sorted(graph.items()):
            print(f"{a} -> {b}  # {len(where)}")
        for p in problems:
            print("problem:", p, file=sys.stderr)
        return 0
    if args.mode == "dot":
        print("digraph srt {\n  rankdir=BT;\n  node [shape=box];")
        for (a, b), where in sorted(graph.items()):
            print(f'  "{a}" -> "{b}" [label="{len(where)}"];')
        print("}")
        return 0
    table = read_table(args.table)
    for (a, b), where in sorted(graph.items()):
        if (a, b) not in table:
            problems.append(f"{a} -> {b} is not in {os.path.relpath(args.table, args.root)}: "
                            + ", ".join(where[:5]) + (" ..." if len(where) > 5 else ""))
    for (a, b), lineno in sorted(table.items(), key=lambda kv: kv[1]):
        if (a, b) not in graph:
            problems.append(f"{os.path.relpath(args.table, args.root)}:{lineno}: {a} -> {b} "
                            "is used by no include any more: remove the row")
    for p in problems:
        print("layering:", p)
    if problems:
        print(f"layering: {len(problems)} problem(s)")
        return 1
    print(f"layering: {len(graph)} module edges, all in the table")
    return 0


if __name__ == "__main__":
    sys.exit(main())
