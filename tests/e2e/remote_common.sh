# Sourced by tests/e2e/test_remote_cache_*.sh, after cache_common.sh: free ports, servers
# on loopback that are killed at exit, and a listener that accepts and never answers.
SERVER_PIDS=()
stop_servers() {
  local pid i
  # SIGTERM first: nginx's master stops and reaps its workers, redis saves nothing (no
  # dump configured) and exits; -9 for one still there after 5 s. Each is waited for.
  for pid in "${SERVER_PIDS[@]}"; do
    kill -TERM "$pid" 2>/dev/null || true  # honest: cleanup: the server may be gone already
  done
  for pid in "${SERVER_PIDS[@]}"; do
    for i in $(seq 50); do
      case "$(ps -o stat= -p "$pid" 2>/dev/null)" in "" | Z*) break ;; esac
      sleep 0.1
    done
    kill -9 $(ps -o pid= --ppid "$pid" 2>/dev/null) "$pid" 2>/dev/null || true  # honest: cleanup: what is still there after 5 s
    wait "$pid" 2>/dev/null || true  # honest: cleanup: reaps the server, its status is not a check
  done
  SERVER_PIDS=()
}
trap 'status=$?; stop_servers; if [ $status -eq 0 ]; then rm -rf "$WORK"; else echo "kept $WORK" >&2; fi' EXIT

free_port() {
  $PY -c "import socket; s=socket.socket(); s.bind(('127.0.0.1',0)); print(s.getsockname()[1])"
}

# wait_port PORT: until something listens there (at most 10 s).
wait_port() {
  local i
  for i in $(seq 100); do
    if $PY -c "import socket,sys; socket.create_connection(('127.0.0.1',int(sys.argv[1])),0.2)" "$1" 2>/dev/null; then
      return 0
    fi
    sleep 0.1
  done
  fail "nothing listens on port $1"
}

# start_redis: a redis-server on a free loopback port, killed at exit; sets PORT and URL
# (database 3).
start_redis() {
  local redis
  redis=$(command -v redis-server || echo /usr/bin/redis-server)
  [ -x "$redis" ] || fail "redis-server is not installed (scripts/install-test-deps installs it)"
  PORT=$(free_port)
  mkdir -p "$WORK/redis"
  "$redis" --port "$PORT" --bind 127.0.0.1 --save '' --appendonly no --dir "$WORK/redis" \
    --daemonize no --logfile "$WORK/redis/log" &
  SERVER_PIDS+=($!)
  disown $!
  wait_port "$PORT"
  URL="redis://127.0.0.1:$PORT/3"
}

# start_silent_listener PORT: accepts connections and never answers (a hung server).
start_silent_listener() {
  $PY -c "
import socket, sys, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(('127.0.0.1', int(sys.argv[1]))); s.listen(16)
held = []
while True:
    c, _ = s.accept(); held.append(c)
" "$1" &
  SERVER_PIDS+=($!)
  disown $! # killed at exit without a "Killed" line
  wait_port "$1"
}

# start_slow_relay PORT TARGET_PORT MARK: forwards to TARGET_PORT, answers at 256 KiB/s (a
# slow network, so a test can kill the server side mid-transfer); creates the file MARK
# once it has sent 300 KB of one answer.
start_slow_relay() {
  $PY -c "
import socket, sys, threading, time
def pump(src, dst, rate):
    sent = 0
    try:
        while True:
            data = src.recv(16384 if rate else 65536)
            if not data:
                break
            dst.sendall(data)
            sent += len(data)
            if rate and sent > 300000:
                open(sys.argv[3], 'w').close()
            if rate:
                time.sleep(len(data) / rate)
    except OSError:
        pass
    for s in (src, dst):
        try: s.shutdown(socket.SHUT_RDWR)
        except OSError: pass
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(('127.0.0.1', int(sys.argv[1]))); s.listen(16)
while True:
    c, _ = s.accept()
    u = socket.create_connection(('127.0.0.1', int(sys.argv[2])))
    threading.Thread(target=pump, args=(c, u, 0), daemon=True).start()
    threading.Thread(target=pump, args=(u, c, 262144), daemon=True).start()
" "$1" "$2" "$3" &
  RELAY_PID=$!
  SERVER_PIDS+=($RELAY_PID)
  disown $RELAY_PID
  wait_port "$1"
}

# compile_all_outputs_equal DIR1 DIR2: every file byte-identical.
outputs_equal() {
  local file
  [ "$(ls "$1")" = "$(ls "$2")" ] || fail "$1 and $2 hold different files"
  for file in "$1"/*; do
    cmp -s "$file" "$2/$(basename "$file")" || fail "$file differs from $2/$(basename "$file")"
  done
}

# stat_of DIR NAME: a remote counter from `cache stats --json`.
remote_stat() {
  "$NPUCC" cache stats --json --cache-dir "$1" >"$WORK/stats.json"
  json_get "$WORK/stats.json" "d['remote']['$2']"
}

# no_temporaries CACHE: nothing left in the cache's tmp/ (staging folders, partial files).
no_temporaries() {
  [ -z "$(find "$1/tmp" -mindepth 1 2>/dev/null | head -1)" ] ||
    fail "$1/tmp holds leftovers: $(find "$1/tmp" -mindepth 1 | head -3)"
}

# warnings_in FILE: how many "npucc: warning:" lines.
warnings_in() {
  grep -c "npucc: warning:" "$1" || true  # honest: grep -c prints 0 and exits 1 when there is none: the count is checked
}
