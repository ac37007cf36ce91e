#!/usr/bin/env bash
# Issue 42, finding 6: a remote that trickles never holds a compile past --remote-timeout,
# the transfer's total deadline. A server on loopback answers every request, then sends a
# few bytes a second for as long as the client listens: a valid bundle's head (HTTP 200,
# and a Redis value), an endless HTTP 500 body, endless HTTP headers. Each compile with
# --remote-timeout 2 must end with one warning and the local compile's graphs, within the
# deadline plus a margin for the compile itself (a bound on the hang, not a benchmark:
# under `timeout 60`, a build without the deadline never ends).
#
# Proof that each check can fail (2026-12-06): main's binary (bd1ceee), which set only a
# 1 B/s low-speed limit over HTTP, read an error page's body to its end, and bounded each
# Redis read alone, was still waiting after 60 s in all four modes (http-bundle, http-500,
# redis-bundle, redis-60g); this branch gave up within 0.3-2.4 s and compiled locally.
# (Headers trickled at 3 B/s were already cut off by main: not a check here.)
source "$(dirname "$0")/cache_common.sh"
source "$(dirname "$0")/remote_common.sh"

MODEL="$TESTDATA/models/ppocr_cls.onnx"
DEADLINE=2
MARGIN_MS=25000 # the local compile after the remote gave up, on a loaded machine

# start_trickler PORT MODE: a server that, per connection, reads the request and answers
# as MODE says: the answer's head at once, then its body at 3 bytes a second, until the
# client goes (a server whose headers trickle was cut off before: libcurl's low-speed
# limit counts body bytes only).
#   http-bundle  200, the Content-Length of a bundle of a 900 KB entry.npucc; its head, zeros
#   http-500     500, Content-Length 100 MB; "x"s
#   redis-bundle the same as a value ("$900097": the head, 900000 bytes, the digest); the bundle head and zeros (database 0: the GET is the first
#                command)
#   redis-60g    a 60 GB value; the bundle head declaring a 60 GB entry.npucc
start_trickler() {
  $PY - "$1" "$2" <<'EOF' &
import hashlib, socket, struct, sys, threading, time
port, mode = int(sys.argv[1]), sys.argv[2]
def bundle_head(size):
    row = struct.pack(">H", 11) + b"entry.npucc" + struct.pack(">Q", size) + b"\0" * 32
    return b"NPUCCBD2" + struct.pack(">I", 1) + row
def whole(size):  # the object's size: its head, one file of `size` bytes, the digest
    return len(bundle_head(size)) + size + 32
def answer():  # the head, sent at once; the body, trickled
    if mode == "http-bundle":
        return b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % whole(900000), bundle_head(900000) + b"\0" * 10**6
    if mode == "http-500":
        return b"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 100000000\r\n\r\n", b"x" * 10**6
    if mode == "redis-bundle":
        return b"$%d\r\n" % whole(900000), bundle_head(900000) + b"\0" * 10**6
    if mode == "redis-60g":
        return b"$%d\r\n" % whole(60 * 10**9), bundle_head(60 * 10**9) + b"\0" * 10**6
def serve(c):
    try:
        c.recv(65536)  # the request (or the first command)
        head, data = answer()
        c.sendall(head)
        for i in range(0, len(data), 3):
            c.sendall(data[i:i + 3])
            time.sleep(1)
    except OSError:
        pass
    finally:
        c.close()
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", port)); s.listen(16)
while True:
    c, _ = s.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
EOF
  SERVER_PIDS+=($!)
  disown $!
  wait_port "$1"
}

# The graphs a local compile gives, to compare with.
"$NPUCC" -q cache init "$WORK/ref"
expect_status 0 "$NPUCC" compile "$MODEL" -o "$WORK/out-ref" --cache-dir "$WORK/ref"

# check_trickle MODE: a compile against MODE's trickler (started below) ends in time, with
# one warning and the local graphs.
check_trickle() {
  local mode=$1 url=${URLS[$1]} rc start elapsed
  "$NPUCC" -q cache init "$WORK/c-$mode"
  start=$(now_ms)
  set +e
  timeout -k 5 60 "$NPUCC" compile "$MODEL" -o "$WORK/out-$mode" --cache-dir "$WORK/c-$mode" \
    --remote-cache "$url" --remote-timeout "$DEADLINE" --remote-connect-timeout 1 \
    >"$WORK/out-$mode.txt" 2>"$WORK/err-$mode.txt"
  rc=$?; set -e
  elapsed=$(($(now_ms) - start))
  [ "$rc" != 124 ] && [ "$rc" != 137 ] ||
    fail "$mode: the compile was still waiting on the trickling remote after 60 s (--remote-timeout $DEADLINE)"
  [ "$rc" = 0 ] || { cat "$WORK/err-$mode.txt"; fail "$mode: compile exited $rc"; }
  [ "$(warnings_in "$WORK/err-$mode.txt")" = 1 ] || { cat "$WORK/err-$mode.txt"; fail "$mode: want exactly one warning"; }
  contains "$WORK/err-$mode.txt" "remote cache"
  outputs_equal "$WORK/out-ref" "$WORK/out-$mode"
  # honest: a bound on a hang (the deadline plus a wide margin), not a speed measurement
  [ "$elapsed" -lt $((DEADLINE * 1000 + MARGIN_MS)) ] ||
    fail "$mode: took ${elapsed} ms with --remote-timeout $DEADLINE"
  no_temporaries "$WORK/c-$mode"
  pass "$mode: a trickling remote was given up on within the deadline; compiled locally in ${elapsed} ms"
}

# One trickler per mode, started here (the exit trap stops them); each check runs in a
# subshell, so that every mode is tried and reported before the suite fails.
declare -A URLS
for mode in http-bundle http-500 redis-bundle redis-60g; do
  port=$(free_port)
  start_trickler "$port" "$mode"
  case $mode in
  http-*) URLS[$mode]="http://127.0.0.1:$port/cache" ;;
  *) URLS[$mode]="redis://127.0.0.1:$port/0" ;;
  esac
done
failed=()
for mode in "${!URLS[@]}"; do
  (check_trickle "$mode") || failed+=("$mode")
done
[ ${#failed[@]} = 0 ] || fail "held past the deadline, or not compiled: ${failed[*]}"
