#!/usr/bin/env python3
"""The layering of src/ and cli/, read from their #include "..." lines.

Every file belongs to the folder it is in (src/cache/remote/x.cpp: cache/remote; cli/*:
cli), and `#include "a/b/c.h"` names folder a/b. Three rules, each failure one line naming
the include that breaks it:
  - no cycle between folders (a subfolder is a folder of its own: cache/remote may include
    cache, but then cache may not include cache/remote);
  - the storage layer, src/cache and its subfolders, includes nothing of src/ but model/,
    util/ and itself: it stores entries and knows nothing of how they are compiled;
  - the runtime floor, src/runtime (running a graph in ONNX Runtime's process), includes
    nothing of src/ but util/ and itself: it runs serialised graphs on tensors and knows
    nothing of how they were made or what is compared.
Public headers (include/npucc/, "npucc/...") are not a src/ folder: they declare the
library's types and every layer may use them.

Usage: check_layers.py [ROOT]   (ROOT holds src/ and cli/; default: this repository)
Exit status 0 when both rules hold, 1 otherwise.
"""

import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')
SOURCE_SUFFIXES = (".cpp", ".h", ".inc")
STORAGE = "cache"
STORAGE_MAY_INCLUDE = ("model", "util")
RUNTIME = "runtime"
RUNTIME_MAY_INCLUDE = ("util",)
PUBLIC = "npucc"


def folder_of_file(root, path):
    """src/cache/remote/x.cpp -> cache/remote; cli/app.cpp -> cli."""
    relative = os.path.relpath(os.path.dirname(path), root).replace(os.sep, "/")
    return relative[len("src/"):] if relative.startswith("src/") else relative


def folder_of_include(including_folder, name):
    """The folder an include names, or None for a public header."""
    if "/" not in name:
        return including_folder  # a header beside the including file
    folder = name.rsplit("/", 1)[0]
    if folder.split("/")[0] == PUBLIC:
        return None
    return folder


def read_includes(root):
    """[(file, line number, include, from folder, to folder)] for every quoted include."""
    found = []
    for top in ("src", "cli"):
        for directory, _, files in os.walk(os.path.join(root, top)):
            for file_name in sorted(files):
                if not file_name.endswith(SOURCE_SUFFIXES):
                    continue
                path = os.path.join(directory, file_name)
                folder = folder_of_file(root, path)
                with open(path, encoding="utf-8", errors="replace") as source:
                    for number, line in enumerate(source, 1):
                        match = INCLUDE.match(line)
                        if not match:
                            continue
                        target = folder_of_include(folder, match.group(1))
                        if target is not None:
                            relative = os.path.relpath(path, root).replace(os.sep, "/")
                            found.append((relative, number, match.group(1), folder, target))
    return found


def in_storage(folder):
    return folder == STORAGE or folder.startswith(STORAGE + "/")


def storage_violations(includes):
    out = []
    for path, number, name, source, target in includes:
        if in_storage(source) and not in_storage(target) and target not in STORAGE_MAY_INCLUDE:
            out.append('%s:%d: #include "%s": the storage layer (src/%s) includes only %s and '
                       'itself, not %s/' % (path, number, name, STORAGE,
                                            ", ".join(f + "/" for f in STORAGE_MAY_INCLUDE),
                                            target))
    return out


def strongly_connected(nodes, edges):
    """Tarjan's algorithm, iterative: the components of more than one folder."""
    index = {}
    low = {}
    stack = []
    on_stack = set()
    components = []
    counter = [0]
    for start in sorted(nodes):
        if start in index:
            continue
        work = [(start, iter(sorted(edges.get(start, ()))))]
        index[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            advanced = False
            for successor in successors:
                if successor not in index:
                    index[successor] = low[successor] = counter[0]
                    counter[0] += 1
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, iter(sorted(edges.get(successor, ())))))
                    advanced = True
                    break
                if successor in on_stack:
                    low[node] = min(low[node], index[successor])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    components.append(sorted(component))
    return components


def cycle_through(first, component, edges):
    """A shortest cycle from `first` back to it inside `component` (breadth first)."""
    members = set(component)
    previous = {}
    frontier = [first]
    while frontier:
        following = []
        for node in frontier:
            for successor in sorted(edges.get(node, ())):
                if successor not in members:
                    continue
                if successor == first:
                    path = [node]
                    while path[-1] != first:
                        path.append(previous[path[-1]])
                    return list(reversed(path)) + [first]
                if successor not in previous:
                    previous[successor] = node
                    following.append(successor)
        frontier = following
    return [first, first]


def runtime_violations(includes):
    out = []
    for path, number, name, source, target in includes:
        inside = lambda folder: folder == RUNTIME or folder.startswith(RUNTIME + "/")
        if inside(source) and not inside(target) and target not in RUNTIME_MAY_INCLUDE:
            out.append('%s:%d: #include "%s": the runtime floor (src/%s) includes only %s and '
                       'itself, not %s/' % (path, number, name, RUNTIME,
                                            ", ".join(f + "/" for f in RUNTIME_MAY_INCLUDE),
                                            target))
    return out


def cycle_violations(includes):
    edges = {}
    example = {}
    for path, number, name, source, target in includes:
        if source == target:
            continue
        edges.setdefault(source, set()).add(target)
        example.setdefault((source, target), '%s:%d includes "%s"' % (path, number, name))
    nodes = set(edges) | {t for targets in edges.values() for t in targets}
    out = []
    for component in strongly_connected(nodes, edges):
        cycle = cycle_through(component[0], component, edges)
        steps = [example[(a, b)] for a, b in zip(cycle, cycle[1:])]
        out.append("cycle between src/ folders %s: %s" % (" -> ".join(cycle), "; ".join(steps)))
    return out


def main(argv):
    root = argv[1] if len(argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
    if not os.path.isdir(os.path.join(root, "src")):
        print("check_layers: %s has no src/ folder: pass the repository root" % root,
              file=sys.stderr)
        return 2
    includes = read_includes(root)
    problems = (cycle_violations(includes) + storage_violations(includes) +
                runtime_violations(includes))
    for problem in problems:
        print("check_layers: " + problem, file=sys.stderr)
    if problems:
        return 1
    folders = {source for _, _, _, source, _ in includes}
    print("check_layers: %d includes of %d folders: no cycle, storage includes only %s, "
          "runtime only %s" % (len(includes), len(folders), ", ".join(STORAGE_MAY_INCLUDE),
                               ", ".join(RUNTIME_MAY_INCLUDE)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
