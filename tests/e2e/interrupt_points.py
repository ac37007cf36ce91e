#!/usr/bin/python3
"""Interrupts one npucc command at each of its test points in turn (util/test_point.h).

interrupt_points.py --out DIR [--cache CACHE] [--setup "ARGS"] [--first]
                    [--each-name [--skip-names FILE]] [--record FILE] -- NPUCC compile ...

For N = 1, 2, ... the command runs with NPUCC_TEST_STOP_AT=N; once it has stopped at its
Nth point (the note file appears: an observable state, not a delay) it gets SIGINT (odd
N) or SIGTERM (even N), and is waited for. Then:
  - it exited 130/143 with "npucc: interrupted:", and left no process behind (this script
    is their subreaper: an orphan would be reparented here);
  - DIR is absent (--first: a first compile) or holds one whole compile: a manifest.json
    whose every file is there with the size and SHA-256 it lists, and no other file named
    like npucc's;
  - no staging folder is left beside DIR, nor in CACHE/tmp;
  - the same command, run again without --force, succeeds.
Before each run, --first removes DIR; --setup runs npucc with ARGS (shell words) to put
an earlier compile there. The loop ends at the first N the command does not reach (it
then completes). With --each-name, one traced run (NPUCC_TEST_TRACE) lists the points and
only the first N of each name is tried, less the names listed in --skip-names FILE (those
another run covered). Each point is printed as "N NAME | what npucc said"; --record FILE
appends the names; a summary line says "points N distinct D". Exit status 1 on the first
broken state.
"""
import ctypes
import glob
import hashlib
import json
import os
import shlex
import signal
import subprocess
import sys
import time

PR_SET_CHILD_SUBREAPER = 36
NPUCC_NAMES = {"manifest.json", "weights.data"} | {
    role + suffix for role in ("high", "low", "emulation") for suffix in (".onnx", ".onnx.data")}


def fail(message):
    print("FAIL: " + message, file=sys.stderr)
    sys.exit(1)


def sha256_of(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def check_whole(out, first, where):
    if not os.path.exists(out):
        if first:
            return
        fail(where + ": the earlier compile in %s is gone" % out)
    manifest_path = os.path.join(out, "manifest.json")
    if not os.path.isfile(manifest_path):
        fail(where + ": %s has no manifest.json: %s" % (out, sorted(os.listdir(out))))
    manifest = json.load(open(manifest_path))
    listed = {"manifest.json"}
    for graph in manifest["graphs"]:
        for entry in [graph] + graph.get("external_data", []):
            path = os.path.join(out, entry["file"])
            listed.add(entry["file"])
            if not os.path.isfile(path):
                fail(where + ": the manifest lists %s, which is missing" % entry["file"])
            if os.path.getsize(path) != entry["bytes"] or sha256_of(path) != entry["sha256"]:
                fail(where + ": %s is not the file the manifest lists" % entry["file"])
    extra = (set(os.listdir(out)) & NPUCC_NAMES) - listed
    if extra:
        fail(where + ": files no manifest lists: %s" % sorted(extra))


def check_no_staging(out, cache, where):
    left = glob.glob(os.path.abspath(out).rstrip("/") + ".tmp.*")
    if cache:
        left += glob.glob(os.path.join(cache, "tmp", "*"))
    if left:
        fail(where + ": staging left behind: %s" % left)


def reap_orphans(where):
    orphans = []
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if pid == 0:  # alive: an orphan still running
            for entry in os.listdir("/proc"):
                try:
                    if entry.isdigit() and open("/proc/%s/stat" % entry).read().split()[3] == str(os.getpid()):
                        orphans.append(int(entry))
                        os.kill(int(entry), signal.SIGKILL)
                except OSError:
                    pass
            time.sleep(0.01)
            continue
        orphans.append(pid)
    if orphans:
        fail(where + ": processes left behind: %s" % orphans)


def run_quiet(command, where):
    done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:
        fail(where + ": %s exited %d: %s" % (" ".join(command), done.returncode, done.stderr.strip()))


def stop_at(n, command, note):
    """Runs command stopped at its nth point; returns (point or None, status, stderr)."""
    if os.path.exists(note):
        os.unlink(note)
    env = dict(os.environ, NPUCC_TEST_STOP_AT=str(n), NPUCC_TEST_STOP_NOTE=note)
    child = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    while not os.path.exists(note) and child.poll() is None:
        time.sleep(0.002)
    point = None
    if child.poll() is None:
        while True:  # created, then written: wait for the whole line
            text = open(note).read()
            if text.endswith("\n"):
                break
            time.sleep(0.002)
        point = text.split()[0]
        child.send_signal(signal.SIGINT if n % 2 else signal.SIGTERM)
    _, err = child.communicate()
    return point, child.returncode, err


def trace_names(command, out, first, setup):
    """Runs the command once with NPUCC_TEST_TRACE: the names of its points, in order."""
    trace = out.rstrip("/") + ".trace"
    if os.path.exists(trace):
        os.unlink(trace)
    if first:
        subprocess.run(["rm", "-rf", out], check=True)
    if setup:
        run_quiet([command[0]] + setup, "setup before the trace")
    done = subprocess.run(command, env=dict(os.environ, NPUCC_TEST_TRACE=trace),
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:
        fail("the traced run exited %d: %s" % (done.returncode, done.stderr.strip()))
    names = open(trace).read().split() if os.path.exists(trace) else []
    os.unlink(trace) if os.path.exists(trace) else None
    return names


def ordinals_to_try(args, command, out, first, setup):
    """Every ordinal (1, 2, ... until one is not reached), or with --each-name the first
    ordinal of each point name a trace shows, less the names in --skip-names FILE."""
    if not args["each_name"]:
        return None
    skip = set(open(args["skip"]).read().split()) if args["skip"] and os.path.exists(args["skip"]) else set()
    ordinals = []
    for n, name in enumerate(trace_names(command, out, first, setup), 1):
        if name not in skip:
            skip.add(name)
            ordinals.append(n)
    return ordinals


def parse_args(argv):
    args = {"out": None, "cache": None, "setup": None, "first": False, "each_name": False,
            "skip": None, "record": None}
    while argv and argv[0] != "--":
        flag = argv[0]
        if flag in ("--first", "--each-name"):
            args[flag[2:].replace("-", "_")] = True
            argv = argv[1:]
            continue
        value = argv[1]
        if flag == "--setup":
            value = shlex.split(value)
        args[{"--skip-names": "skip", "--record": "record"}.get(flag, flag[2:])] = value
        argv = argv[2:]
    return args, argv[1:]


def interrupt_one(n, command, args, note):
    """Interrupts the command at its nth point and checks what it left; the point's name,
    or None when the command did not reach it (it then completed)."""
    out, first = args["out"], args["first"]
    if first:
        subprocess.run(["rm", "-rf", out], check=True)
    if args["setup"]:
        run_quiet([command[0]] + args["setup"], "setup before point %d" % n)
    point, status, err = stop_at(n, command, note)
    where = "point %d (%s)" % (n, point or "not reached")
    reap_orphans(where)
    if point is None:
        if status != 0:
            fail(where + ": the command exited %d: %s" % (status, err.strip()))
        check_whole(out, False, where)
        return None
    want = 130 if n % 2 else 143
    if status != want or "npucc: interrupted:" not in err:
        fail(where + ": exited %d, want %d with 'npucc: interrupted:': %s" % (status, want, err.strip()))
    check_whole(out, first, where)
    check_no_staging(out, args["cache"], where)
    print("%d %s | %s" % (n, point, err.strip()))
    run_quiet(command, where + ", run again")
    check_whole(out, False, where + ", run again")
    return point


def main():
    args, command = parse_args(sys.argv[1:])
    if ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        sys.exit("prctl(PR_SET_CHILD_SUBREAPER) failed")
    note = args["out"].rstrip("/") + ".stopped"
    ordinals = ordinals_to_try(args, command, args["out"], args["first"], args["setup"])
    points = []
    for n in (ordinals if ordinals is not None else range(1, 10000)):
        point = interrupt_one(n, command, args, note)
        if point is None and ordinals is None:
            break
        if point is not None:
            points.append(point)
    if os.path.exists(note):
        os.unlink(note)
    if args["record"]:
        with open(args["record"], "a") as f:
            f.writelines(p + "\n" for p in points)
    print("points %d distinct %d" % (len(points), len(set(points))))
    if not points:
        fail("the command reached no test point: was npucc built with them?")


main()
