#!/usr/bin/python3
"""Sums a heaptrack flame-graph stack file by npucc function (see PROFILING.md).

    heaptrack_print -f FILE.zst --flamegraph-cost-type allocations -F stacks.txt
    tests/bench/heaptrack_sites.py stacks.txt [TOP]

Each stack is charged to its deepest npucc:: frame (callees included), which names the
npucc code responsible better than heaptrack's own list (STL and protobuf frames on top).
Works for every cost type: allocations, temporary, peak, leaked.
"""
import collections
import sys


def main():
    path = sys.argv[1]
    top = int(sys.argv[2]) if len(sys.argv) > 2 else 25
    sites = collections.Counter()
    total = 0
    with open(path, errors="replace") as stacks:
        for line in stacks:
            stack, _, count = line.rstrip("\n").rpartition(" ")
            if not count.isdigit():
                continue
            total += int(count)
            frames = [f for f in stack.split(";") if f]
            ours = [f for f in frames if "npucc::" in f and "npucc::cli::run(" not in f]
            site = ours[-1] if ours else "(no npucc frame) " + (frames[-1] if frames else "")
            sites[site] += int(count)
    print(f"total {total}")
    for site, count in sites.most_common(top):
        print(f"{count:10d}  {site[:200]}")


if __name__ == "__main__":
    main()
