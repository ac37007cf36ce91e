"""Compiles and cache operations release the GIL: compiles in two threads run side by
side into one cache, and Python code runs while a compile is inside the library."""

import fcntl
import faulthandler
import threading
import time

import pytest

import npucc
from conftest import MODEL, OTHER_MODEL


@pytest.fixture(autouse=True)
def watchdog():
    """A compile that kept the GIL while blocked would hang this process: end it instead."""
    faulthandler.dump_traceback_later(240, exit=True)
    yield
    faulthandler.cancel_dump_traceback_later()


def run_in_threads(calls):
    """Runs each call in its own thread, all started together; their results, in order."""
    results = [None] * len(calls)
    errors = []
    start = threading.Barrier(len(calls))

    def run(index, call):
        start.wait()
        try:
            results[index] = call()
        except BaseException as error:  # reported below, in the test's thread
            errors.append(error)

    threads = [threading.Thread(target=run, args=(i, call)) for i, call in enumerate(calls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors
    return results


def test_two_threads_compile_into_one_cache(tmp_path, cache_dir):
    def compile_into(model, name):
        return lambda: npucc.compile(model, tmp_path / name, accelerate_train_mode="fast|step",
                                     cache_dir=cache_dir)

    first = run_in_threads([compile_into(MODEL, "a"), compile_into(OTHER_MODEL, "b")])
    assert [result.cache for result in first] == ["miss", "miss"]
    again = run_in_threads([compile_into(MODEL, "c"), compile_into(OTHER_MODEL, "d")])
    assert [result.cache for result in again] == ["hit", "hit"]
    assert [result.key for result in again] == [result.key for result in first]
    for result in first + again:
        assert all(path.is_file() for path in result.graphs.values())
    assert npucc.Cache(cache_dir).verify().ok
    # The same model from two threads at once: one entry, both outputs complete.
    same = run_in_threads([compile_into(MODEL, f"same{i}") for i in range(2)] +
                          [lambda: npucc.compile(MODEL, tmp_path / "e", cache_dir=cache_dir)])
    assert {result.key for result in same[:2]} == {first[0].key}
    assert len(npucc.Cache(cache_dir).entries()) == 3


def blocked_then_released(cache_dir, call):
    """Holds the cache's statistics lock while `call` runs in a thread and runs Python code
    meanwhile: the call cannot end while the lock is held (a cache operation waits for it, a
    compile tries it for a second before it skips the statistics). A call that kept the GIL
    would let this thread run only before it entered the library and after it left: a few
    rounds of the loop at most, never five while it is alive. Five rounds take some 25 ms,
    far inside the compile's second even on a loaded machine. The lock is tried without
    blocking (issue 30: no member can stall another), so /proc/locks shows no waiter."""
    (cache_dir / "lock").mkdir(exist_ok=True)
    lock_file = cache_dir / "lock" / "stats"
    with open(lock_file, "a+") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        results = []
        thread = threading.Thread(target=lambda: results.append(call()))
        thread.start()
        ran = 0
        while ran < 40 and thread.is_alive():
            ran += 1
            time.sleep(0.005)
        fcntl.flock(held, fcntl.LOCK_UN)
    assert ran >= 5, f"Python ran {ran} rounds while the call was inside the library"
    thread.join()
    assert results, "the call failed"
    return results[0]


def test_a_compile_lets_other_python_threads_run(tmp_path, cache_dir):
    result = blocked_then_released(cache_dir, lambda: npucc.compile(MODEL, tmp_path / "out", cache_dir=cache_dir))
    assert result.cache == "miss"
    assert len(npucc.Cache(cache_dir).entries()) == 1


def test_a_cache_operation_lets_other_python_threads_run(cache_dir):
    cache = npucc.Cache(cache_dir)
    blocked_then_released(cache_dir, lambda: cache.zero_stats())
    assert cache.stats().counter("zeroed") > 0


def test_threads_that_end_leave_the_checker_to_the_others(tmp_path):
    """The ONNX checker runs in a worker process forked by the first compile. Forked by a
    thread other than the main one, it must outlive that thread: a worker killed when its
    thread ended failed the request another thread had in flight ("ONNX crashed")."""
    for round in range(10):
        calls = [lambda i=i: npucc.compile(OTHER_MODEL, tmp_path / f"r{round}-{i}", no_cache=True)
                 for i in range(3)]
        assert [result.cache for result in run_in_threads(calls)] == ["disabled"] * 3
