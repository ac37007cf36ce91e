#!/usr/bin/env bash
# The compile cache through the real binary: hits and misses, explain, ls, stats,
# invalidate, purge, populate, bypass, configuration errors.
source "$(dirname "$0")/cache_common.sh"
C="$WORK/cache"
M="$TESTDATA/models/ppocrv4_det.onnx"

# An explicitly configured folder that does not exist is an error naming it and the fix.
expect_status 1 "$NPUCC" compile "$M" -o "$WORK/o0" --cache-dir "$C"
contains "$WORK/err" "$C"
contains "$WORK/err" "npucc cache init"
[ ! -e "$WORK/o0" ] || fail "output written despite the cache error"
NPUCC_CACHE_DIR="$C" expect_status 1 "$NPUCC" compile "$M" -o "$WORK/o0"
contains "$WORK/err" "NPUCC_CACHE_DIR"
expect_status 0 "$NPUCC" cache init "$C"
[ -f "$C/CACHEDIR.TAG" ] || fail "no CACHEDIR.TAG"
pass "explicit cache folder must exist; cache init creates it"

# The seed's flow (Ascend: create the configured folder, and it is used): an empty folder
# named by --cache-dir or an options file's graph_compiler_cache_dir becomes a cache at its
# first compile, which says so; listing it before writes nothing and says what will.
E="$WORK/build_cache_dir"; mkdir "$E"
expect_status 1 "$NPUCC" cache ls --cache-dir "$E"
contains "$WORK/err" "not an npucc cache yet: $E (an empty folder: the first compile or populate that uses it makes it one"
[ -z "$(ls -A "$E")" ] || fail "cache ls wrote into an empty folder"
expect_status 0 "$NPUCC" compile "$TESTDATA/models/ppocr_cls.onnx" -o "$WORK/oe" --cache-dir "$E"
contains "$WORK/out" "cache: made $E an npucc cache (the folder was empty)"
contains "$WORK/out" "cache: miss: new key"
expect_status 0 "$NPUCC" cache verify --cache-dir "$E"
expect_status 0 "$NPUCC" compile "$TESTDATA/models/ppocr_cls.onnx" -o "$WORK/oe" --cache-dir "$E"
contains "$WORK/out" "cache: hit"
grep -q "made .* an npucc cache" "$WORK/out" && fail "the second compile says it made the cache again"
E2="$WORK/seed_dir"; mkdir "$E2"
printf '{"graph_compiler_cache_dir": "%s"}\n' "$E2" >"$WORK/seed.json"
expect_status 0 "$NPUCC" compile "$TESTDATA/models/ppocr_cls.onnx" -o "$WORK/oe2" --options "$WORK/seed.json"
contains "$WORK/out" "cache: made $E2 an npucc cache (the folder was empty)"
E3="$WORK/populate_dir"; mkdir "$E3"
expect_status 0 "$NPUCC" cache populate "$TESTDATA/models/ppocr_cls.onnx" --cache-dir "$E3"
contains "$WORK/out" "populate: 1 compiled"
contains "$WORK/out" "cache: made $E3 an npucc cache (the folder was empty)"
expect_status 0 "$NPUCC" cache populate "$TESTDATA/models/ppocr_cls.onnx" --cache-dir "$E3"
grep -q "made .* an npucc cache" "$WORK/out" && fail "the second populate says it made the cache again"
# clean is purge's alias: its help says so rather than naming only purge.
expect_status 0 "$NPUCC" cache clean --help
contains "$WORK/out" "Usage: npucc cache purge|clean "
# A missing folder is still refused, with a way on that works; so is a folder of other files.
expect_status 1 "$NPUCC" cache ls --cache-dir "$WORK/nosuch"
contains "$WORK/err" "$WORK/nosuch: the cache folder (--cache-dir) does not exist"
grep -q -- "--no-cache" "$WORK/err" && fail "cache ls suggests --no-cache, which it does not take"
mkdir "$WORK/models"; cp "$TESTDATA/models/ppocr_cls.onnx" "$WORK/models/"
expect_status 1 "$NPUCC" compile "$WORK/models/ppocr_cls.onnx" -o "$WORK/of" --cache-dir "$WORK/models"
contains "$WORK/err" "not an npucc cache: $WORK/models (it is not empty and npucc did not make it a cache; point --cache-dir at a new or empty folder)"
grep -q "cache init" "$WORK/err" && fail "the hint for a used folder leads to cache init, which refuses it"
[ "$(ls -A "$WORK/models")" = ppocr_cls.onnx ] || fail "a refused compile wrote into the models folder"
pass "an empty configured cache folder becomes a cache at its first compile, and says so"

# The default folder is created on first use.
expect_status 0 "$NPUCC" compile "$TESTDATA/models/ppocr_cls.onnx" -o "$WORK/od"
[ -f "$XDG_CACHE_HOME/npucc/CACHEDIR.TAG" ] || fail "default cache folder not created"
pass "default cache folder created with CACHEDIR.TAG"

# Miss, then hit: same bytes, a small fraction of the time. CPU time is compared (the
# machine may be loaded), less what any npucc process costs (`npucc --version`: ~20 ms, but
# ~0.3 s in a sanitizer build, where it would otherwise decide the ratio); wall times are
# printed.
t0=$(now_ms); expect_status 0 "$NPUCC" compile "$M" -o "$WORK/o1" --cache-dir "$C"; t1=$(now_ms)
contains "$WORK/out" "cache: miss: new key"
expect_status 0 "$NPUCC" compile "$M" -o "$WORK/o2" --graph-compiler-cache-dir "$C"; t2=$(now_ms)
contains "$WORK/out" "cache: hit"
echo "wall: miss $((t1 - t0)) ms, hit $((t2 - t1)) ms"
# A hit into the folder the miss wrote (the README's main command, run twice): its files are
# links to the same cache files, which rename() onto each other leaves in the staging folder.
expect_status 0 "$NPUCC" compile "$M" -o "$WORK/o1" --cache-dir "$C"
contains "$WORK/out" "cache: hit"
[ -z "$(find "$WORK" -maxdepth 1 -name 'o1.tmp.*')" ] || fail "a staging folder was left beside o1"
cmp "$WORK/o1/high.onnx" "$WORK/o2/high.onnx" || fail "high.onnx differs on a hit into its own folder"
pass "a hit into the folder an earlier compile of the same model wrote"

miss=0; hit=0; process=0
for i in 1 2 3; do
  "$NPUCC" -q cache invalidate --model ppocrv4_det --cache-dir "$C" >/dev/null
  miss=$((miss + $(cpu_ms "$NPUCC" compile "$M" -o "$WORK/m$i" --cache-dir "$C")))
  hit=$((hit + $(cpu_ms "$NPUCC" compile "$M" -o "$WORK/h$i" --cache-dir "$C")))
  process=$((process + $(cpu_ms "$NPUCC" --version)))
done
echo "cpu (3 runs): miss ${miss} ms, hit ${hit} ms, a process that does nothing ${process} ms"
# honest: a hit costing a fraction of a miss is the cache's purpose; CPU time, not wall, over 3 runs
[ $(((hit - process) * 3)) -lt $((miss - process)) ] ||
  fail "hit (${hit} ms CPU) is not a small fraction of the miss (${miss} ms), beyond the ${process} ms of any npucc process"
for f in high.onnx manifest.json; do cmp "$WORK/o1/$f" "$WORK/o2/$f" || fail "$f differs on a hit"; done
[ "$(json_get "$WORK/o2/manifest.json" "d['cache_key']")" = "$(json_get "$WORK/o1/manifest.json" "d['cache_key']")" ] \
  || fail "manifest cache keys differ"
pass "second compile is a hit with identical files (CPU: miss ${miss} ms, hit ${hit} ms over 3 runs)"

# What changes the output changes the key.
expect_status 0 "$NPUCC" compile "$M" -o "$WORK/o3" --cache-dir "$C" --passes topological_sort,topological_sort
contains "$WORK/out" "cache: miss: new key"
cp "$M" "$WORK/changed.onnx"
$PY - "$WORK/changed.onnx" <<'PYEOF'
import sys, onnx
m = onnx.load(sys.argv[1]); m.doc_string = (m.doc_string or "") + "x"; onnx.save(m, sys.argv[1])
PYEOF
expect_status 0 "$NPUCC" compile "$WORK/changed.onnx" -o "$WORK/o4" --cache-dir "$C"
contains "$WORK/out" "cache: miss: new key"
cp "$M" "$WORK/samebytes.onnx"
expect_status 0 "$NPUCC" compile "$WORK/samebytes.onnx" -o "$WORK/o5" --cache-dir "$C"
contains "$WORK/out" "cache: hit"
pass "an option or a model byte gives a miss; the same bytes elsewhere hit"

# explain shows each component; the options component differs between the two.
# (The default cache, which holds no entry of $M: exit 3, not a hit.)
expect_status 3 "$NPUCC" cache explain "$M" --json
cp "$WORK/out" "$WORK/e1.json"
expect_status 3 "$NPUCC" cache explain "$M" --passes topological_sort,topological_sort --json
cp "$WORK/out" "$WORK/e2.json"
[ "$(json_get "$WORK/e1.json" "d['key']")" = "$(json_get "$WORK/o1/manifest.json" "d['cache_key']")" ] \
  || fail "explain's key differs from the compile's"
[ "$(json_get "$WORK/e1.json" "[c['digest'] for c in d['components'] if c['name']=='options'][0]")" != \
  "$(json_get "$WORK/e2.json" "[c['digest'] for c in d['components'] if c['name']=='options'][0]")" ] \
  || fail "explain: options digest did not change"
[ "$(json_get "$WORK/e1.json" "[c['digest'] for c in d['components'] if c['name']=='model'][0]")" = \
  "$(sha256sum "$M" | cut -d' ' -f1)" ] || fail "explain: model digest is not the file's SHA-256"
pass "cache explain shows which component differs"

# External data is part of the key: one changed byte in the data file is a miss.
mkdir -p "$WORK/ext"
$PY "$(dirname "$0")/make_external_matmul_model.py" "$WORK/ext/m.onnx"
expect_status 0 "$NPUCC" compile "$WORK/ext/m.onnx" -o "$WORK/x1" --cache-dir "$C"
contains "$WORK/out" "cache: miss: new key"
expect_status 0 "$NPUCC" compile "$WORK/ext/m.onnx" -o "$WORK/x2" --cache-dir "$C"
contains "$WORK/out" "cache: hit"
$PY -c "import sys; p=sys.argv[1]; b=bytearray(open(p,'rb').read()); b[100]^=1; open(p,'wb').write(b)" "$WORK/ext/weights.bin"
expect_status 0 "$NPUCC" compile "$WORK/ext/m.onnx" -o "$WORK/x3" --cache-dir "$C"
contains "$WORK/out" "cache: miss: new key"
expect_status 3 "$NPUCC" cache explain "$WORK/ext/m.onnx"
contains "$WORK/out" "1 file(s), 16384 bytes"
expect_status 0 "$NPUCC" cache invalidate --model m --cache-dir "$C"
contains "$WORK/out" "removed 2 entries"
pass "external data is part of the key"

# --no-cache neither reads nor writes.
expect_status 0 "$NPUCC" compile "$M" -o "$WORK/o6" --cache-dir "$WORK/nonexistent" --no-cache
contains "$WORK/out" "cache: disabled"

# ls, stats.
expect_status 0 "$NPUCC" cache ls --cache-dir "$C" --json
[ "$(json_get "$WORK/out" "len(d['entries'])")" = 3 ] || fail "ls: want 3 entries"
[ "$(json_get "$WORK/out" "sorted(set(e['state'] for e in d['entries']))")" = "['ok']" ] || fail "ls states"
expect_status 0 "$NPUCC" cache ls --cache-dir "$C" --model changed
contains "$WORK/out" "changed"
[ "$(grep -c ppocrv4_det "$WORK/out" || true)" = 0 ] || fail "ls --model did not filter"  # honest: grep -c prints 0 and exits 1 when there is none: the count is checked
contains "$WORK/out" "^1 entry matches --model changed (3 in the cache)$"
# --model takes a glob; one that matches nothing says so, with the cache's count.
expect_status 0 "$NPUCC" cache ls --cache-dir "$C" --model 'ppocr*' --json
[ "$(json_get "$WORK/out" "sorted(set(e['model'] for e in d['entries']))")" = "['ppocrv4_det']" ] ||
  fail "ls --model 'ppocr*': $(cat "$WORK/out")"
expect_status 0 "$NPUCC" cache ls --cache-dir "$C" --model 'ch?nge[a-z]'
contains "$WORK/out" "changed"
expect_status 0 "$NPUCC" cache ls --cache-dir "$C" --model 'zz*'
contains "$WORK/out" "^0 entries match --model zz\* (3 in the cache)$"
expect_status 0 "$NPUCC" cache ls --cache-dir "$C" --sort size --reverse
contains "$WORK/out" "KEY"
expect_status 0 "$NPUCC" cache stats --cache-dir "$C" --zero --json
[ "$(json_get "$WORK/out" "d['hits'] + d['misses']")" = 0 ] || fail "stats --zero"
"$NPUCC" -q compile "$M" -o "$WORK/s1" --cache-dir "$C" --input-shape "x:1,3,64,64"
"$NPUCC" -q compile "$M" -o "$WORK/s2" --cache-dir "$C" --input-shape "x:1,3,64,64"
"$NPUCC" -q compile "$M" -o "$WORK/s3" --cache-dir "$C"
expect_status 0 "$NPUCC" cache stats --cache-dir "$C" --json
[ "$(json_get "$WORK/out" "(d['hits'], d['misses'], d['stores'], d['entries'])")" = "(2, 1, 1, 4)" ] \
  || { cat "$WORK/out"; fail "stats after one miss and two hits"; }
expect_status 0 "$NPUCC" cache stats --cache-dir "$C"
contains "$WORK/out" "hits                 2"
pass "ls (filter, sort, json) and stats (zero)"

# A model with a custom op compiles but is not stored; stats counts the bypass.
$PY "$(dirname "$0")/make_custom_op_model.py" "$WORK/custom.onnx"
expect_status 0 "$NPUCC" compile "$WORK/custom.onnx" -o "$WORK/oc" --cache-dir "$C"
contains "$WORK/out" "cache: bypass: custom op com.acme::Magic"
contains "$WORK/out" "magic_node"
expect_status 0 "$NPUCC" cache stats --cache-dir "$C" --json
[ "$(json_get "$WORK/out" "d['bypass_reasons'].get('custom-op', 0)")" = 1 ] || fail "bypass not counted"
[ "$(json_get "$WORK/out" "d['entries']")" = 4 ] || fail "bypassed model was stored"
pass "custom op: compiled, not stored, bypass counted"

# Typos get suggestions.
expect_status 2 "$NPUCC" cache lss --cache-dir "$C"
contains "$WORK/err" 'did you mean "ls"'
expect_status 2 "$NPUCC" cache
contains "$WORK/err" "commands:"
pass "unknown cache subcommands get a suggestion"

# Populate: a folder, twice; the second run compiles nothing.
P="$WORK/pcache"; mkdir -p "$WORK/models/sub"
cp "$TESTDATA/models/ppocr_cls.onnx" "$TESTDATA/models/oww_hello_deepa.onnx" "$WORK/models/"
cp "$TESTDATA/models/silero_vad_legacy.onnx" "$WORK/models/sub/"
expect_status 0 "$NPUCC" cache init "$P"
expect_status 0 "$NPUCC" cache populate -j 2 "$WORK/models" --cache-dir "$P"
contains "$WORK/out" "populate: 3 compiled, 0 already cached, 0 bypassed, 0 failed"
expect_status 0 "$NPUCC" cache populate -j 2 "$WORK/models" --cache-dir "$P" --json
[ "$(json_get "$WORK/out" "(d['compiled'], d['cached'])")" = "(0, 3)" ] || fail "second populate compiled something"
echo "not a model" > "$WORK/models/broken.onnx"
expect_status 1 "$NPUCC" cache populate "$WORK/models" --cache-dir "$P"
contains "$WORK/out" "0 compiled, 3 already cached, 0 bypassed, 1 failed"
contains "$WORK/err" "broken.onnx"
rm "$WORK/models/broken.onnx"
expect_status 0 "$NPUCC" compile "$WORK/models/ppocr_cls.onnx" -o "$WORK/o7" --cache-dir "$P"
contains "$WORK/out" "cache: hit"
pass "populate -j 2 twice: second run compiles nothing; failures exit non-zero"

# Size limit after each store, and purge.
expect_status 0 "$NPUCC" cache ls --cache-dir "$P" --json
total=$(json_get "$WORK/out" "sum(e['bytes'] for e in d['entries'])")
expect_status 0 "$NPUCC" compile "$WORK/models/oww_hello_deepa.onnx" -o "$WORK/o8" --cache-dir "$P" --max-size "$total" --passes topological_sort,topological_sort
expect_status 0 "$NPUCC" cache stats --cache-dir "$P" --json
[ "$(json_get "$WORK/out" "d['bytes'] <= $total")" = True ] || fail "--max-size not enforced"
[ "$(json_get "$WORK/out" "d['evictions'] >= 1")" = True ] || fail "no eviction counted"
expect_status 0 "$NPUCC" cache purge --cache-dir "$P" --all --dry-run
contains "$WORK/out" "would remove"
expect_status 0 "$NPUCC" cache ls --cache-dir "$P" --json
[ "$(json_get "$WORK/out" "len(d['entries']) > 0")" = True ] || fail "dry run removed entries"
expect_status 0 "$NPUCC" cache clean --cache-dir "$P" --older-than 1d
contains "$WORK/out" "removed 0 entries"
expect_status 0 "$NPUCC" cache purge --cache-dir "$P" --all --json
expect_status 0 "$NPUCC" cache ls --cache-dir "$P" --json
[ "$(json_get "$WORK/out" "len(d['entries'])")" = 0 ] || fail "purge --all left entries"
expect_status 2 "$NPUCC" cache purge --cache-dir "$P" --max-size 10X
pass "max size enforced after a store; purge --dry-run, --older-than, --all"

# With --link-mode hardlink, outputs share the entry's inodes (a miss links what it wrote,
# a hit links the entry's files), except external data: ONNX Runtime refuses a data file
# with more than one hard link, so those are copies, on a miss and on a hit alike, with the
# writer's checksum. (The default, copies, is test_cache_link_mode.sh's.)
X="$WORK/xcache"
"$NPUCC" cache init "$X" >/dev/null
for run in miss hit; do
  rm -rf "$WORK/x-$run"
  expect_status 0 "$NPUCC" compile "$M" -o "$WORK/x-$run" --cache-dir "$X" --external-data \
    --link-mode hardlink
  contains "$WORK/out" "cache: $run"
  [ "$(stat -c %h "$WORK/x-$run/high.onnx")" -ge 2 ] || fail "$run: high.onnx not linked to the entry"
  [ "$(stat -c %h "$WORK/x-$run/high.onnx.data")" = 1 ] || fail "$run: external data has several hard links"
done
cmp "$WORK/x-miss/high.onnx.data" "$WORK/x-hit/high.onnx.data" || fail "external data differs between miss and hit"
expect_status 0 "$NPUCC" cache verify --cache-dir "$X"
pass "outputs linked to the entry, external data copied (one link each)"

# A cached compile writes its graphs while the key is hashed, assuming the weights not yet
# read do not overflow float16. A weight that does (in external data, read for the key)
# makes it build and write the low graph again: the same files as a compile without the
# cache, the weight's consumer kept in float32 and reported.
O="$WORK/ocache"
"$NPUCC" cache init "$O" >/dev/null
$PY - "$WORK/overflow" <<'PYEOF'
import os, sys, numpy as np, onnx
from onnx import helper, numpy_helper, TensorProto
os.makedirs(sys.argv[1], exist_ok=True)
big = np.full((512, 512), 1.0, np.float32); big[7, 9] = 1e6   # past float16's 65504
small = np.random.default_rng(1).standard_normal((512, 512)).astype(np.float32)
nodes = [helper.make_node("MatMul", ["x", "big"], ["t"]), helper.make_node("MatMul", ["t", "small"], ["u"]),
         helper.make_node("Add", ["u", "u"], ["y"])]
g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 512])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 512])],
                      [numpy_helper.from_array(small, "small"), numpy_helper.from_array(big, "big")])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]); m.ir_version = 8
onnx.save(m, sys.argv[1] + "/m.onnx", save_as_external_data=True, all_tensors_to_one_file=True,
          location="m.onnx.data", size_threshold=1024)
PYEOF
expect_status 0 "$NPUCC" compile "$WORK/overflow/m.onnx" -o "$WORK/ov-cached" --cache-dir "$O" \
  --accelerate-train-mode "fast|step|0.9" -v
contains "$WORK/out" "cache: miss"
contains "$WORK/err" "a weight overflows the low type: rewriting the low graph"
# Without the cache, the graphs are written while the model file is hashed for the manifest
# and its weights counted: the same assumption, the same rewrite.
expect_status 0 "$NPUCC" compile "$WORK/overflow/m.onnx" -o "$WORK/ov-plain" --no-cache \
  --accelerate-train-mode "fast|step|0.9" -v
contains "$WORK/err" "a weight overflows the low type: rewriting the low graph"
for f in high.onnx low.onnx weights.data; do cmp "$WORK/ov-cached/$f" "$WORK/ov-plain/$f" || fail "$f differs from --no-cache"; done
for d in ov-cached ov-plain; do
  [ "$(json_get "$WORK/$d/manifest.json" "d['model']['sha256']")" = \
    "$(sha256sum "$WORK/overflow/m.onnx" | cut -d' ' -f1)" ] || fail "$d: the manifest's model digest"
done
[ "$(json_get "$WORK/ov-cached/manifest.json" \
    "[c['name'] for c in d['precision_report']['constants']['kept_float32'] if c['reason'] == 'overflow']")" = "['big']" ] \
  || fail "the overflowing weight is not reported"
cmp -s "$WORK/ov-cached/high.onnx" "$WORK/ov-cached/low.onnx" && fail "no node of the low graph is float16"
# Both graphs refer to one weights.data holding each weight once; both are valid ONNX.
$PY - "$WORK/ov-cached" <<'PYEOF' || fail "shared weights"
import os, sys, onnx
d = sys.argv[1]
weight = 512 * 512 * 4
assert 2 * weight <= os.path.getsize(f"{d}/weights.data") < 2 * weight + 1024, os.path.getsize(f"{d}/weights.data")
refs = {}
for n in ("high", "low"):
    m = onnx.load(f"{d}/{n}.onnx")
    onnx.checker.check_model(f"{d}/{n}.onnx", full_check=True)
    assert {t.name for t in m.graph.initializer} == {"big", "small"}
    bare = onnx.load(f"{d}/{n}.onnx", load_external_data=False)
    refs[n] = {t.name: [(e.key, e.value) for e in t.external_data] for t in bare.graph.initializer}
assert refs["high"] == refs["low"], refs
PYEOF
pass "overflow past the assumption: low graph rebuilt, same files as --no-cache, shared weights"
