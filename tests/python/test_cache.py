"""npucc.Cache: its listings, statistics, verification and removals equal what the CLI's
`npucc cache ... --json` reports for the same folder."""

import json
import os
import pathlib

import pytest

import npucc
from conftest import MODEL, OTHER_MODEL, cli


def cli_json(*args):
    return json.loads(cli("cache", *args, "--json").stdout)


def cli_entries(cache_dir):
    """`cache ls --json` by key: an array of entries, or an object holding one in "entries"."""
    document = cli_json("ls", "--cache-dir", cache_dir)
    entries = document["entries"] if isinstance(document, dict) else document
    return {entry["key"]: entry for entry in entries}


def variants_of(value):
    """role -> precision, from "high:float32,low:..." or a list or mapping of them."""
    if isinstance(value, str):
        return dict(item.split(":", 1) for item in value.split(",") if item)
    if isinstance(value, list):
        return {item["role"]: item["precision"] for item in value}
    return dict(value)


def options_of(value):
    return json.loads(value) if isinstance(value, str) else value


@pytest.fixture
def filled(tmp_path, cache_dir):
    """A cache with three entries: two models, one of them in two modes."""
    npucc.compile(MODEL, tmp_path / "a", accelerate_train_mode="fast|step", cache_dir=cache_dir)
    npucc.compile(MODEL, tmp_path / "b", cache_dir=cache_dir)
    npucc.compile(OTHER_MODEL, tmp_path / "c", accelerate_train_mode="fast1|loss", cache_dir=cache_dir)
    npucc.compile(MODEL, tmp_path / "d", cache_dir=cache_dir)  # a hit
    return cache_dir


def test_entries_equal_cache_ls_json(filled):
    ours = {entry.key: entry for entry in npucc.Cache(filled).entries()}
    theirs = cli_entries(filled)
    assert set(ours) == set(theirs) and len(ours) == 3
    for key, entry in ours.items():
        listed = theirs[key]
        for field in ("key", "model", "compiler_version", "state", "problem", "bytes", "created", "last_used"):
            if field in listed:
                assert getattr(entry, field) == listed[field], field
        for field in ("key", "model", "state", "bytes"):
            assert field in listed, f"cache ls --json lost {field}"
        assert entry.variants == variants_of(listed["variants"])
        assert entry.options == options_of(listed["options"])
    assert {entry.model for entry in ours.values()} == {"oww_hello_deepa", "ppocr_cls"}


def test_stats_equal_cache_stats_json(filled):
    stats = npucc.Cache(filled).stats()
    shown = cli_json("stats", "--cache-dir", filled)
    assert stats.path == pathlib.Path(filled)
    assert (stats.entries, stats.bytes, stats.states) == (shown["entries"], shown["bytes"], shown["states"])
    assert (stats.counter("hits"), stats.counter("misses"), stats.counter("stores")) == (
        shown["hits"], shown["misses"], shown["stores"])
    assert (stats.counter("hits"), stats.counter("misses")) == (1, 3)
    npucc.Cache(filled).zero_stats()
    assert npucc.Cache(filled).stats().counter("hits") == 0
    assert cli_json("stats", "--cache-dir", filled)["hits"] == 0


def damage_one_entry(cache_dir):
    graphs = sorted(pathlib.Path(cache_dir, "entries").rglob("high.onnx"))
    os.chmod(graphs[0], 0o644)
    with open(graphs[0], "ab") as file:
        file.write(b"damage")
    return graphs[0]


def problems_of(findings):
    return sorted((finding["kind"], str(finding["path"])) for finding in findings)


def test_verify_equals_cache_verify_json(filled):
    cache = npucc.Cache(filled)
    clean = cache.verify()
    assert clean.ok and clean.entries == 3
    damage_one_entry(filled)
    found = cache.verify()
    assert not found.ok
    shown = cli("cache", "verify", "--cache-dir", filled, "--json", check=False)
    assert shown.returncode == 3
    document = json.loads(shown.stdout)
    assert (found.entries, found.bytes) == (document["entries"], document["bytes"])
    ours = sorted((problem.kind, str(problem.path)) for problem in found.problems)
    assert ours == problems_of(document["findings"])
    fixed = cache.verify(fix=True)
    assert all(problem.fixed for problem in fixed.problems)
    assert cache.verify().ok and len(cache.entries()) == 2


def removed_keys(removal):
    return sorted(entry.key for entry in removal.removed)


def test_purge_and_invalidate_equal_the_cli(filled):
    cache = npucc.Cache(filled)
    everything = cache.purge(all=True, dry_run=True)
    shown = cli_json("purge", "--all", "--dry-run", "--cache-dir", filled)
    assert removed_keys(everything) == sorted(entry["key"] for entry in shown["removed"])
    assert everything.freed == shown["freed_bytes"] and len(everything.removed) == 3
    by_model = cache.invalidate(model="ppocr_cls", dry_run=True)
    shown = cli_json("invalidate", "--model", "ppocr_cls", "--dry-run", "--cache-dir", filled)
    assert removed_keys(by_model) == sorted(entry["key"] for entry in shown["removed"])
    assert len(by_model.removed) == 1
    assert cache.invalidate(dry_run=True).removed == []  # no other compiler version here
    assert len(cache.entries()) == 3  # dry runs removed nothing
    key = by_model.removed[0].key
    assert removed_keys(cache.invalidate(key=key[:8])) == [key]
    assert len(cache.purge(max_size=1).removed) == 2
    assert cache.entries() == []
    assert cache.purge(older_than="1d").removed == [] and cache.purge(older_than=0).removed == []


def test_cache_init_and_the_default_folder(tmp_path, monkeypatch):
    cache = npucc.Cache.init(tmp_path / "new", shared="no")
    assert cache.path == tmp_path / "new" and cache.entries() == []
    assert (tmp_path / "new" / "CACHEDIR.TAG").is_file()
    monkeypatch.setenv("NPUCC_CACHE_DIR", str(tmp_path / "new"))
    assert npucc.Cache().path == tmp_path / "new"
    assert repr(npucc.Cache()) == f"npucc.Cache({str(tmp_path / 'new')!r})"
