#!/usr/bin/python3
"""Swaps two paths back and forth until a stop file appears: the race of issue 30 without
npucc's debug pause, for an npucc built before the hook (tests/e2e/test_cache_team.sh,
NPUCC_TEAM_RACE_TRIES). renameat2(RENAME_EXCHANGE) swaps atomically, so a sweep that
checked FOLDER a moment ago may now reach LINK under FOLDER's name, and back.

    swap_flipper.py FOLDER LINK STARTED STOP

Creates STARTED once swapping; swaps an even number of times per round, so both paths are
back in place when it exits (unless the sweep removed one of them meanwhile)."""
import ctypes
import os
import sys

AT_FDCWD = -100
RENAME_EXCHANGE = 2


def main():
    folder, link, started, stop = (os.fsencode(a) for a in sys.argv[1:5])
    libc = ctypes.CDLL(None, use_errno=True)
    open(started, "w").close()
    rounds = 0
    while not os.path.exists(stop) and rounds < 200000:  # bounded: a lost stop file ends it
        for _ in range(200):
            libc.renameat2(AT_FDCWD, folder, AT_FDCWD, link, RENAME_EXCHANGE)
        rounds += 1


if __name__ == "__main__":
    main()
