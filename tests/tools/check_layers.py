#!/usr/bin/env python3
"""The layering of src/ and cli/, read from their #include "..." lines.

Every file belongs to the folder it is in (src/cache/remote/x.cpp: cache/remote; cli/*:
cli), and `#include "a/b/c.h"` names folder a/b. Four rules, each failure one line naming
the include that breaks it:
  - no cycle between folders (a subfolder is a folder of its own: cache/remote may include
    cache, but then cache may not include cache/remote);
  - the storage layer, src/cache and its subfolders, includes nothing of src/ but model/,
    util/ and itself: it stores entries and knows nothing of how they are compiled, and
    no chain of its includes reaches ONNX or protobuf headers;
  - the runtime floor, src/runtime (running a graph in ONNX Runtime's process), includes
    nothing of src/ but util/ and itself: it runs serialised graphs on tensors and knows
    nothing of how they were made or what is compared;
  - the public types (npucc/compile.h, train_mode.h, memory_plan.h, cache_key.h: options,
    results, keys) include nothing of src/ but model/, util/ and each other, so every
    layer above storage may take them without reaching up;
  - the pictures, src/report, include nothing of src/ but util/ and itself: they draw a
    document npucc wrote (drift.json) and know nothing of how it was measured, so the
    compile, inspect and the CLI may all call them;
  - the cached compile, src/pipeline, includes nothing of precision/: the rewrite's
    overflow counts reach it as compiler/overflow_counts.h and util/file_observer.h, so
    it knows how to read input files, not what the rewrite counts in them.
  - the key, src/key (what decides which entry a request gets), includes only the floors
    below it (KEY_MAY_INCLUDE) and itself, and src/compiler never includes it: the compile
    makes the output, the cached compile above both asks the key where to store it.
  - the writers, src/output (graphs, weights, the manifest, the output folder), include
    nothing of src/ but api, model/, runtime/, util/ and themselves, and never the key:
    they write what the compile hands them and decide nothing of what it is.
Public headers (include/npucc/, "npucc/...") each stand on the floor of the src/ folder
that implements them (PUBLIC_FLOORS: npucc/cache_config.h is cache, npucc/cache.h is
pipeline), so including one is including that folder, and the headers' own includes are
checked as that folder's. A public header missing from the table is a failure of its own:
the floor of a new header is a decision, not a default.

Usage: check_layers.py [ROOT]   (ROOT holds src/ and cli/; default: this repository)
Exit status 0 when every rule holds, 1 otherwise.
"""

import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')
SYSTEM_INCLUDE = re.compile(r'^\s*#\s*include\s*<([^>]+)>')
# What the storage layer must not reach, through any chain of quoted includes: parsing
# models is model/'s business, and a cache that pulled in protobuf would rebuild with it.
STORAGE_NEVER_REACHES = ("onnx/", "google/protobuf/")
SOURCE_SUFFIXES = (".cpp", ".h", ".inc")
STORAGE = "cache"
STORAGE_MAY_INCLUDE = ("model", "util")
API = "api"
API_MAY_INCLUDE = ("model", "util")
PIPELINE = "pipeline"
PIPELINE_NEVER_INCLUDES = ("precision",)
KEY = "key"
# The floors the key stands on: storage (the digest cache), the model, the public types,
# and what its option rules consult (the samples' digest, the runtime's identity, the
# opset and pass tables, the low graph's opset).
KEY_MAY_INCLUDE = ("accuracy", "api", "cache", "model", "opset", "passes", "precision",
                   "runtime", "util")
KEY_NEVER_INCLUDED_BY = ("compiler", "output")
OUTPUT = "output"
# What the writers stand on: the graphs and weights they are handed (model/), the public
# types (api), the runtime's graph source (a graph written for ONNX Runtime's process) and util.
OUTPUT_MAY_INCLUDE = ("api", "model", "runtime", "util")
RUNTIME = "runtime"
RUNTIME_MAY_INCLUDE = ("util",)
REPORT = "report"
REPORT_MAY_INCLUDE = ("util",)
PUBLIC = "npucc"
PUBLIC_FLOORS = {
    "error.h": "util",
    "file_identity.h": "util",
    "setting_source.h": "util",
    "version.h": "util",
    "model.h": "model",
    # The types every layer above storage shares (options, results, keys): a floor of
    # their own, "api", which includes only util/, model/ and itself; compile() itself is
    # in compiler/, but precision/ and check/ below it take CompileOptions.
    "memory_plan.h": "api",
    "train_mode.h": "api",
    "compile.h": "api",
    "cache_key.h": "api",
    "cache_config.h": "cache",
    "cache_maintenance.h": "cache",
    "config.h": "config",
    "compile_request.h": "config",
    "cache.h": "pipeline",
    "inspect.h": "inspect",
    "schedule.h": "schedule",
}


def folder_of_file(root, path):
    """src/cache/remote/x.cpp -> cache/remote; cli/app.cpp -> cli."""
    relative = os.path.relpath(os.path.dirname(path), root).replace(os.sep, "/")
    return relative[len("src/"):] if relative.startswith("src/") else relative


def public_floor(header):
    """The src/ folder a public header stands on; KeyError when the table lacks it."""
    return PUBLIC_FLOORS[header]


def folder_of_include(including_folder, name):
    """The folder an include names (a public header: the folder it stands on)."""
    if "/" not in name:
        return including_folder  # a header beside the including file
    folder, header = name.rsplit("/", 1)
    if folder == PUBLIC:
        return public_floor(header)
    return folder


def source_files(root):
    """[(path, folder)] of every source of src/ and cli/ and every public header."""
    files = []
    for top in ("src", "cli"):
        for directory, _, names in os.walk(os.path.join(root, top)):
            for file_name in sorted(names):
                if file_name.endswith(SOURCE_SUFFIXES):
                    path = os.path.join(directory, file_name)
                    files.append((path, folder_of_file(root, path)))
    public = os.path.join(root, "include", PUBLIC)
    for file_name in sorted(os.listdir(public)) if os.path.isdir(public) else []:
        header = file_name[:-len(".in")] if file_name.endswith(".h.in") else file_name
        if header.endswith(".h"):
            files.append((os.path.join(public, file_name), public_floor(header)))
    return files


def read_includes(root):
    """[(file, line number, include, from folder, to folder)] for every quoted include."""
    found = []
    for path, folder in source_files(root):
        with open(path, encoding="utf-8", errors="replace") as source:
            for number, line in enumerate(source, 1):
                match = INCLUDE.match(line)
                if match:
                    relative = os.path.relpath(path, root).replace(os.sep, "/")
                    target = folder_of_include(folder, match.group(1))
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


def resolve_include(root, including_path, name):
    """The file a quoted include names: beside the includer, under src/ or include/."""
    for base in (os.path.dirname(including_path), os.path.join(root, "src"),
                 os.path.join(root, "include")):
        candidate = os.path.join(base, name)
        if os.path.isfile(candidate):
            return os.path.normpath(candidate)
    return None


def heavy_include_of(root, path, seen):
    """(chain, system header) of the first STORAGE_NEVER_REACHES header `path` reaches."""
    if path in seen:
        return None
    seen.add(path)
    with open(path, encoding="utf-8", errors="replace") as source:
        lines = source.readlines()
    for line in lines:
        system = SYSTEM_INCLUDE.match(line)
        if system and system.group(1).startswith(STORAGE_NEVER_REACHES):
            return [], system.group(1)
    for line in lines:
        quoted = INCLUDE.match(line)
        target = quoted and resolve_include(root, path, quoted.group(1))
        found = target and heavy_include_of(root, target, seen)
        if found:
            return [quoted.group(1)] + found[0], found[1]
    return None


def storage_reach_violations(root):
    out = []
    for path, folder in source_files(root):
        if not in_storage(folder):
            continue
        found = heavy_include_of(root, path, set())
        if found:
            relative = os.path.relpath(path, root).replace(os.sep, "/")
            out.append("%s reaches <%s> through %s: the storage layer never includes ONNX or "
                       "protobuf" % (relative, found[1], " -> ".join(found[0]) or "itself"))
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


def floor_violations(includes, folder, allowed, what):
    """Includes from src/FOLDER (named `what`, plural) of anything but itself and `allowed`."""
    out = []
    for path, number, name, source, target in includes:
        if source == folder and target not in (folder,) + allowed:
            out.append('%s:%d: #include "%s": %s (src/%s) include only %s and themselves, '
                       'not %s/' % (path, number, name, what, folder,
                                    ", ".join(f + "/" for f in allowed), target))
    return out


def pipeline_violations(includes):
    out = []
    for path, number, name, source, target in includes:
        if source == PIPELINE and target in PIPELINE_NEVER_INCLUDES:
            out.append('%s:%d: #include "%s": the cached compile (src/%s) does not include %s/: '
                       'what it needs of the compile comes through compiler/' % (
                           path, number, name, PIPELINE, target))
    return out


def key_violations(includes):
    out = []
    for path, number, name, source, target in includes:
        if source == KEY and target != KEY and target not in KEY_MAY_INCLUDE:
            out.append('%s:%d: #include "%s": the key (src/%s) includes only the floors below it '
                       '(%s) and itself, not %s/' % (path, number, name, KEY,
                                                    ", ".join(f + "/" for f in KEY_MAY_INCLUDE),
                                                    target))
        if source in KEY_NEVER_INCLUDED_BY and target == KEY:
            out.append('%s:%d: #include "%s": src/%s never includes the key (src/%s): the '
                       'cached compile asks the key, the compile makes the output' % (
                           path, number, name, source, KEY))
    return out


def api_violations(includes):
    out = []
    for path, number, name, source, target in includes:
        if source == API and target not in (API,) + API_MAY_INCLUDE:
            out.append('%s:%d: #include "%s": the public types (%s) include only %s and each '
                       'other, not %s/' % (path, number, name,
                                           ", ".join(sorted(h for h, f in PUBLIC_FLOORS.items()
                                                            if f == API)),
                                           ", ".join(f + "/" for f in API_MAY_INCLUDE), target))
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
    try:
        includes = read_includes(root)
    except KeyError as unknown:
        print("check_layers: include/npucc/%s: a public header without a floor: add it to "
              "PUBLIC_FLOORS in %s with the src/ folder that implements it"
              % (unknown.args[0], os.path.relpath(__file__)), file=sys.stderr)
        return 1
    problems = (cycle_violations(includes) + storage_violations(includes) +
                runtime_violations(includes) + api_violations(includes) +
                pipeline_violations(includes) +
                floor_violations(includes, REPORT, REPORT_MAY_INCLUDE, "the pictures") +
                key_violations(includes) +
                floor_violations(includes, OUTPUT, OUTPUT_MAY_INCLUDE, "the writers") +
                storage_reach_violations(root))
    for problem in problems:
        print("check_layers: " + problem, file=sys.stderr)
    if problems:
        return 1
    folders = {source for _, _, _, source, _ in includes}
    print("check_layers: %d includes of %d folders: no cycle, storage includes only %s, "
          "runtime only %s, report only %s, the public types only %s, pipeline none of %s, "
          "key only %s and not included by %s" % (
              len(includes), len(folders), ", ".join(STORAGE_MAY_INCLUDE),
              ", ".join(RUNTIME_MAY_INCLUDE), ", ".join(REPORT_MAY_INCLUDE),
              ", ".join(API_MAY_INCLUDE), ", ".join(PIPELINE_NEVER_INCLUDES),
              ", ".join(KEY_MAY_INCLUDE), ", ".join(KEY_NEVER_INCLUDED_BY)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
