#!/usr/bin/python3
"""Interrupts one npucc command at many moments, as a user, a shell and a CI runner do.

interrupt_anytime.py --runs N --via timeout|group|alone --signal INT|TERM|HUP
                     --work DIR [--keep-going 1] -- NPUCC compile ... {out} ... {cache} ...

First the command runs once whole (its time spreads the delays: no assertion is made on
it). Then for run i of N it runs again, with a fresh DIR/i/tmp as TMPDIR and {out},
{cache} replaced by DIR/i/out and DIR/i/cache, and gets the signal about (i - 0.5) / N of
that time after it started:
  timeout  `timeout -s SIG --preserve-status DELAY command`: timeout signals npucc, then its
           whole process group (npucc gets the signal twice, its children once);
  group    the command in a session of its own (setsid), the signal to its process group;
  alone    the signal to npucc's pid only.
Except with timeout, whose clock is its own, the signal never comes before npucc has
installed its handlers (SIGINT's seen caught in /proc/PID/status: before that, in exec and
the dynamic loader, nothing can catch it); a timeout run whose signal may have come before them need
not print the line, but the rest holds for it too. Each run that the signal reached (exit
status not 0) must show:
  - exit status 128 + the signal's number;
  - standard error holding one line, "npucc: interrupted: K of 1 compiled", and no other;
  - no process left behind (this script is their subreaper: an orphan is reparented here);
  - nothing in the run's TMPDIR; nothing in {cache}/tmp; no staging folder beside {out},
    and {out} absent or whole (a manifest.json whose files are all there).
A run that ended first (status 0) must have left {out} whole and TMPDIR empty. Prints a
line per run and "interrupted K of N"; exit status 1 at the first broken run (with
--keep-going 1, after every run, each broken one named), or when no run was interrupted
(the test would have checked nothing).
"""
import ctypes
import glob
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

PR_SET_CHILD_SUBREAPER = 36
INTERRUPTED = re.compile(r"^npucc: interrupted: [01] of 1 compiled$")


class RunBroken(Exception):
    pass


def fail(message):
    raise RunBroken(message)


def orphans_left():
    """Reaps every process reparented here; the pids of those that were still running."""
    left = []
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return left
        if pid != 0:
            left.append(pid)  # ended unreaped by its parent: left behind all the same
            continue
        for entry in os.listdir("/proc"):
            try:
                if entry.isdigit() and open("/proc/%s/stat" % entry).read().split(")")[-1].split()[1] == str(os.getpid()):
                    left.append(int(entry))
                    os.kill(int(entry), signal.SIGKILL)
            except OSError:
                pass
        time.sleep(0.01)


def handlers_installed(pid):
    """Whether npucc (pid) has installed its interrupt handlers yet, SIGINT's standing for
    all (/proc's SigCgt; the others come with it, and a build that forgets one must still
    be signalled): before that, in exec and the dynamic loader, a signal can only take its
    default action."""
    try:
        # `timeout`'s child shows timeout's own handlers between its fork and its exec:
        # only npucc's count (its name is npucc once it has exec'ed).
        if open("/proc/%d/comm" % pid).read().strip() != "npucc":
            return False
        for line in open("/proc/%d/status" % pid):
            if line.startswith("SigCgt:"):
                return int(line.split()[1], 16) & (1 << (signal.SIGINT - 1)) != 0
    except OSError:
        pass
    return False


def npucc_pid(child, via):
    if via != "timeout":
        return child.pid
    try:  # timeout's one child
        children = open("/proc/%d/task/%d/children" % (child.pid, child.pid)).read().split()
    except OSError:
        return None
    return int(children[0]) if children else None


def await_handlers(child, via, until):
    """Polls until npucc has installed its handlers (True), or until `until` or its end."""
    while time.monotonic() < until and child.poll() is None:
        pid = npucc_pid(child, via)
        if pid is not None and handlers_installed(pid):
            return True
        time.sleep(0.001)
    return False


def run_once(command, env, via, sig, delay):
    """Runs command, signalled `delay` seconds after its start (None: never), and never
    before npucc installed its handlers unless `timeout` sends it (timeout's clock, which
    started first, is not ours): its exit status (128 + N for a death by signal N),
    standard error, and whether the handlers were seen in place before the signal."""
    if via == "timeout" and delay is not None:
        command = ["timeout", "-s", sig.name[3:], "--preserve-status", "%.3f" % delay] + command
    started = time.monotonic()
    child = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                             text=True, start_new_session=(via == "group"))
    ready = True
    if delay is not None:
        deadline = started + delay
        ready = await_handlers(child, via, deadline if via == "timeout" else float("inf"))
    if delay is not None and via != "timeout" and ready:
        try:
            child.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            if via == "group":
                os.killpg(child.pid, sig)
            else:
                os.kill(child.pid, sig)
    _, err = child.communicate()
    status = child.returncode
    return (128 - status if status < 0 else status), err, ready


def check_out(out, where):
    left = glob.glob(out.rstrip("/") + ".tmp.*")
    if left:
        fail(where + ": staging left beside the output folder: %s" % left)
    if not os.path.exists(out):
        return
    manifest_path = os.path.join(out, "manifest.json")
    if not os.path.isfile(manifest_path):
        fail(where + ": %s holds no manifest.json: %s" % (out, sorted(os.listdir(out))))
    for graph in json.load(open(manifest_path))["graphs"]:
        for entry in [graph] + graph.get("external_data", []):
            if not os.path.isfile(os.path.join(out, entry["file"])):
                fail(where + ": the manifest lists %s, which is missing" % entry["file"])


def check_run(run_dir, status, err, sig, orphans, where, ready=True):
    """The checks of one run; whether the signal reached it. A signal that may have come
    before the handlers (`timeout` runs only: not `ready`) may end npucc without its line,
    but must leave nothing either."""
    if orphans:
        fail(where + ": processes left behind: %s" % orphans)
    tmp_left = sorted(os.listdir(os.path.join(run_dir, "tmp")))
    if tmp_left:
        fail(where + ": TMPDIR holds %s" % tmp_left)
    check_out(os.path.join(run_dir, "out"), where)
    cache_left = glob.glob(os.path.join(run_dir, "cache", "tmp", "*"))
    if cache_left:
        fail(where + ": the cache's tmp/ holds %s" % cache_left)
    if status == 0:
        if not os.path.isfile(os.path.join(run_dir, "out", "manifest.json")):
            fail(where + ": exit 0 without an output")
        return False
    lines = err.splitlines()
    if not ready and status == 128 + sig.value and not lines:
        return False
    if status != 128 + sig.value or len(lines) != 1 or not INTERRUPTED.match(lines[0]):
        fail(where + ": exit status %d (want %d), standard error %r (want the one "
             "'npucc: interrupted' line)" % (status, 128 + sig.value, err))
    return True


def parse_args(argv):
    args = {"runs": 20, "via": "timeout", "signal": "INT", "work": None, "keep-going": "0"}
    while argv and argv[0] != "--":
        args[argv[0][2:]] = argv[1]
        argv = argv[2:]
    if args["via"] not in ("timeout", "group", "alone") or not args["work"]:
        sys.exit(__doc__)
    return args, argv[1:]


def prepare(work, i, command):
    run_dir = os.path.join(work, str(i))
    shutil.rmtree(run_dir, ignore_errors=True)
    os.makedirs(os.path.join(run_dir, "tmp"))
    os.makedirs(os.path.join(run_dir, "cache"))  # an empty folder becomes a cache on first use
    words = [w.replace("{out}", os.path.join(run_dir, "out")).replace("{cache}", os.path.join(run_dir, "cache"))
             for w in command]
    return run_dir, words, dict(os.environ, TMPDIR=os.path.join(run_dir, "tmp"))


def run_all(args, command, sig):
    """The runs; how many the signal reached and the failures (the first one only, unless
    --keep-going)."""
    runs = int(args["runs"])
    run_dir, words, env = prepare(args["work"], 0, command)
    started = time.monotonic()
    status, err, _ = run_once(words, env, args["via"], sig, None)
    whole = time.monotonic() - started
    if status != 0:
        fail("the uninterrupted run exited %d: %s" % (status, err.strip()))
    check_run(run_dir, status, err, sig, orphans_left(), "the uninterrupted run")
    interrupted, failures = 0, []
    for i in range(1, runs + 1):
        delay = whole * (i - 0.5) / runs
        run_dir, words, env = prepare(args["work"], i, command)
        status, err, ready = run_once(words, env, args["via"], sig, delay)
        where = "run %d (%s SIG%s after %.3f s%s)" % (
            i, args["via"], args["signal"], delay, "" if ready else ", maybe before the handlers")
        try:
            interrupted += check_run(run_dir, status, err, sig, orphans_left(), where, ready)
        except RunBroken as broken:
            failures.append(str(broken))
            print("FAIL: %s" % broken)
            if args["keep-going"] != "1":
                break
            continue
        print("%s: exit %d %s" % (where, status, err.strip()))
        shutil.rmtree(run_dir, ignore_errors=True)
    return interrupted, failures


def main():
    args, command = parse_args(sys.argv[1:])
    if ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        sys.exit("prctl(PR_SET_CHILD_SUBREAPER) failed")
    try:
        interrupted, failures = run_all(args, command, getattr(signal, "SIG" + args["signal"]))
    except RunBroken as broken:
        interrupted, failures = 0, [str(broken)]
    print("interrupted %d of %s, broken %d" % (interrupted, args["runs"], len(failures)))
    if failures:
        sys.exit(1)
    if interrupted == 0:
        sys.exit("FAIL: no run was interrupted: the runs ended before their signals")


main()
