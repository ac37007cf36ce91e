#!/usr/bin/python3
"""Runs a command as a child subreaper and counts the processes it leaves behind.

subreaper.py [--signal INT|TERM [--when GLOB] --after SECONDS [--again SECONDS]] -- COMMAND...

Every descendant that outlives its parent is reparented to this process (PR_SET_CHILD_
SUBREAPER), so once COMMAND has been waited for, any other child here is one that npucc
left unreaped or running. The signal goes SECONDS after GLOB first matches a path (work
has begun), or after the start. Prints "status N" (the shell's convention: 128 + signal for a
death by signal), "stopped_in SECONDS" (from the first signal to the exit) and
"orphans N"; stragglers are killed and reaped.
"""
import ctypes
import glob
import os
import signal
import subprocess
import sys
import time

PR_SET_CHILD_SUBREAPER = 36


def main():
    args = sys.argv[1:]
    sig, after, again, when = None, 0.0, None, None
    while args and args[0] != "--":
        if args[0] == "--signal":
            sig = getattr(signal, "SIG" + args[1])
        elif args[0] == "--after":
            after = float(args[1])
        elif args[0] == "--when":
            when = args[1]
        elif args[0] == "--again":
            again = float(args[1])
        args = args[2:]
    command = args[1:]
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        sys.exit("prctl(PR_SET_CHILD_SUBREAPER) failed")
    child = subprocess.Popen(command)
    sent = None
    if sig is not None:
        while when is not None and not glob.glob(when) and child.poll() is None:
            time.sleep(0.005)
        time.sleep(after)
        sent = time.monotonic()
        child.send_signal(sig)
        if again is not None:
            time.sleep(again)
            child.send_signal(sig)
    status = child.wait()
    stopped = time.monotonic() - sent if sent is not None else 0.0
    # Orphans of orphans need a moment to be reparented and to exit.
    time.sleep(0.5)
    orphans = 0
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if pid == 0:  # alive: still an orphan of the command
            for entry in os.listdir("/proc"):
                if entry.isdigit() and open("/proc/%s/stat" % entry).read().split()[3] == str(os.getpid()):
                    os.kill(int(entry), signal.SIGKILL)
            continue
        orphans += 1
    print("status", 128 - status if status < 0 else status)
    print("stopped_in %.3f" % stopped)
    print("orphans", orphans)


main()
