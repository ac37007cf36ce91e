#!/usr/bin/python3
"""Flips a file's mode between 0444 and 0664 until a stop file appears: the blob race of
issue 42 (finding 7) without a debug pause (tests/e2e/test_cache_team_auth.sh). Run as the
file's owner; while the file at PATH is someone else's (replaced meanwhile), chmod fails and
the flipper goes on, so the owner can plant a new file under the name and it flips too.

    mode_flipper.py PATH STARTED STOP

Creates STARTED once flipping; leaves the file at 0444."""
import os
import sys


def main():
    path, started, stop = sys.argv[1:4]
    open(started, "w").close()
    rounds = 0
    while not os.path.exists(stop) and rounds < 2000000:  # bounded: a lost stop file ends it
        for mode in (0o664, 0o444) * 100:
            try:
                os.chmod(path, mode)
            except OSError:
                pass
        rounds += 1


if __name__ == "__main__":
    main()
