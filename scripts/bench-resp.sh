#!/usr/bin/env bash
# urldedupd's RESP front end against redis-server on the same machine, in
# one run (issue 22): redis-benchmark, 50 clients, random URLs, against
# `serve --resp-listen` (a fresh keyed state) and redis-server (no
# persistence) doing the nearest native operation, SADD:
#
#   1. single commands: BF.ADD against SADD;
#   2. pipelined (-P 64): BF.ADD against SADD;
#   3. BF.MADD of 100 URLs a command: URLs a second;
#   3b. single commands and BF.MADD with serve's --resp-goroutines: a
#      goroutine for each connection instead of the event loop;
#   4. the same rows again with serve's --flush-interval 0: no journal
#      and no msync, only the kernel's writeback (a power loss can take
#      the last 30 s; a process crash, even kill -9, takes nothing), the
#      nearest to the redis-server measured here, which persists nothing;
#      at millions of random URLs a second every page of the state is
#      dirty again at each flush, so the periodic msync writes the whole
#      state every second;
#   4b. single commands and BF.MADD with --flush-interval 0 and
#      --resp-loops NPROC: an event loop a processor, which decides big
#      batches on every processor;
#   4c. single commands and -P 64 with serve's --checkpoint-interval 0:
#      no journal, every 1 s flush syncs (msync) the shards themselves,
#      as serve did before its journal;
#   5. single commands with the client pinned to one core and the server
#      to the other (taskset), for both servers: on two cores, where
#      client and server share the machine, how the kernel places
#      redis-server's one thread and Go's several weighs on the unpinned
#      row;
#   1b. the servers' own processor time a single command (user and
#      system, from /proc/PID/stat over the single-command row): what a
#      processor of its own would serve, where on two cores the client
#      takes the other;
#   5b. single commands and -P 64 against redis-server with its
#      append-only file fsynced every second (--appendonly yes
#      --appendfsync everysec): the same promise as serve's default 1 s
#      flush, at most about a second of answers lost to a power loss;
#   6. memory: the same DISTINCT URLs (the bench file's distinct lines,
#      scripts/genurls) loaded into each through `redis-cli --pipe`
#      (BF.MADD of 100 into urldedupd, SADD of 100 into redis-server):
#      redis-server's used_memory growth, and urldedupd's state bytes and
#      serve's resident memory, a URL.
#
# RedisBloom is not packaged by Debian, so BF.ADD on redis-server is not
# measured (said in the output).
#
# Usage: scripts/bench-resp.sh          # ROUNDS=3 N=1000000 DISTINCT=10000000
# Output: markdown tables on stdout (medians over the rounds, per-round
# ratios).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${ROUNDS:-3}
n=${N:-1000000}
distinct=${DISTINCT:-10000000}
command -v redis-benchmark >/dev/null && command -v redis-server >/dev/null || {
  apt-get update -qq && apt-get install -y -qq redis-server redis-tools >/dev/null; }

work=$(mktemp -d "${WORK:-/var/tmp}/urldedupd-resp.XXXXXX")
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
go build -o "$work/urldedupd" ./cmd/urldedupd
go build -o "$work/genurls" ./scripts/genurls
freeport() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

start_serve() { # [PREFIX…] -- [SERVE FLAGS…]: a fresh keyed state; sets UPORT and UPID
  local pre=() post=()
  while [ $# -gt 0 ] && [ "$1" != -- ]; do pre+=("$1"); shift; done
  [ $# -gt 0 ] && shift
  post=("$@")
  rm -rf "$work/state"
  "$work/urldedupd" --dir "$work/state" init --layout keyed > /dev/null
  UPORT=$(freeport)
  "${pre[@]}" "$work/urldedupd" --dir "$work/state" serve --events /dev/null --socket "$work/api.sock" --resp-listen "127.0.0.1:$UPORT" "${post[@]}" 2> "$work/serve.log" &
  UPID=$!; pids+=("$UPID")
  for _ in $(seq 1 200); do redis-cli -p "$UPORT" PING >/dev/null 2>&1 && return; sleep 0.05; done
  echo "serve did not start" >&2; cat "$work/serve.log" >&2; exit 1
}
stop_serve() { kill "$UPID"; wait "$UPID" 2>/dev/null || true; }
start_redis() { # [PREFIX…] [-- REDIS FLAGS…]: sets RPORT and RPID; no persistence unless flags say
  local pre=() post=(--appendonly no)
  while [ $# -gt 0 ] && [ "$1" != -- ]; do pre+=("$1"); shift; done
  [ $# -gt 0 ] && { shift; post=("$@"); }
  RPORT=$(freeport)
  rm -rf "$work/redis"; mkdir -p "$work/redis"
  "${pre[@]}" redis-server --port "$RPORT" --dir "$work/redis" --save '' "${post[@]}" --daemonize no > "$work/redis.log" 2>&1 &
  RPID=$!; pids+=("$RPID")
  for _ in $(seq 1 200); do redis-cli -p "$RPORT" PING >/dev/null 2>&1 && return; sleep 0.05; done
  echo "redis-server did not start" >&2; exit 1
}
stop_redis() { kill "$RPID"; wait "$RPID" 2>/dev/null || true; }
cputicks() { awk '{print $14 + $15}' "/proc/$1/stat"; } # user + system clock ticks of a process
cpu_us() { # PID TICKS0: its processor time since TICKS0, in µs a command of a row of $n commands
  python3 -c 'import sys; a = list(map(int, sys.argv[1:])); print((a[0] - a[1]) * 1e6 / a[2] / a[3])' \
    "$(cputicks "$1")" "$2" "$(getconf CLK_TCK)" "$n"
}
rps() { # the requests a second redis-benchmark -q reports ($CLIENT: a prefix, for taskset)
  ${CLIENT:-} redis-benchmark -q "$@" 2>/dev/null | tr '\r' '\n' | sed -n 's/.*: \([0-9.]*\) requests per second.*/\1/p' | tail -1
}

echo "$(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(free -g | awk '/^Mem:/{print $2}') GiB; $(date -u '+%F %H:%M UTC'); load $(cut -d' ' -f1-3 /proc/loadavg); $rounds rounds; $(redis-server --version | cut -d' ' -f1-3); RedisBloom: not packaged by Debian, BF.ADD on redis-server not measured"
echo
raw=$work/raw; : > "$raw"
madd=(BF.MADD urls); for i in $(seq 1 100); do madd+=("http://bench.example/__rand_int__/$i"); done
for r in $(seq 1 "$rounds"); do
  start_serve
  c0=$(cputicks "$UPID")
  echo "$r single urldedupd $(rps -p "$UPORT" -c 50 -n "$n" -r 100000000 BF.ADD urls 'http://bench.example/__rand_int__')" >> "$raw"
  echo "$r single-cpu urldedupd $(cpu_us "$UPID" "$c0")" >> "$raw"
  echo "$r pipe64 urldedupd $(rps -p "$UPORT" -c 50 -n "$((n * 4))" -P 64 -r 100000000 BF.ADD urls 'http://bench.example/__rand_int__')" >> "$raw"
  echo "$r madd100 urldedupd $(rps -p "$UPORT" -c 50 -n "$((n / 20))" -P 4 -r 100000000 "${madd[@]}")" >> "$raw"
  stop_serve
  start_serve env -- --resp-goroutines
  echo "$r single-goroutines urldedupd $(rps -p "$UPORT" -c 50 -n "$n" -r 100000000 BF.ADD urls 'http://bench.example/__rand_int__')" >> "$raw"
  echo "$r madd100-goroutines urldedupd $(rps -p "$UPORT" -c 50 -n "$((n / 20))" -P 4 -r 100000000 "${madd[@]}")" >> "$raw"
  stop_serve
  start_serve env -- --checkpoint-interval 0
  echo "$r single-msync urldedupd $(rps -p "$UPORT" -c 50 -n "$n" -r 100000000 BF.ADD urls 'http://bench.example/__rand_int__')" >> "$raw"
  echo "$r pipe64-msync urldedupd $(rps -p "$UPORT" -c 50 -n "$((n * 4))" -P 64 -r 100000000 BF.ADD urls 'http://bench.example/__rand_int__')" >> "$raw"
  stop_serve
  start_serve env -- --flush-interval 0
  echo "$r single-noflush urldedupd $(rps -p "$UPORT" -c 50 -n "$n" -r 100000000 BF.ADD urls 'http://bench.example/__rand_int__')" >> "$raw"
  echo "$r pipe64-noflush urldedupd $(rps -p "$UPORT" -c 50 -n "$((n * 4))" -P 64 -r 100000000 BF.ADD urls 'http://bench.example/__rand_int__')" >> "$raw"
  echo "$r madd100-noflush urldedupd $(rps -p "$UPORT" -c 50 -n "$((n / 20))" -P 4 -r 100000000 "${madd[@]}")" >> "$raw"
  stop_serve
  start_serve env -- --flush-interval 0 --resp-loops "$(nproc)"
  echo "$r single-loops-noflush urldedupd $(rps -p "$UPORT" -c 50 -n "$n" -r 100000000 BF.ADD urls 'http://bench.example/__rand_int__')" >> "$raw"
  echo "$r madd100-loops-noflush urldedupd $(rps -p "$UPORT" -c 50 -n "$((n / 20))" -P 4 -r 100000000 "${madd[@]}")" >> "$raw"
  stop_serve
  start_serve taskset -c 1 --
  echo "$r single-pinned urldedupd $(CLIENT="taskset -c 0" rps -p "$UPORT" -c 50 -n "$n" -r 100000000 BF.ADD urls 'http://bench.example/__rand_int__')" >> "$raw"
  stop_serve
  start_redis
  c0=$(cputicks "$RPID")
  echo "$r single redis $(rps -p "$RPORT" -c 50 -n "$n" -r 100000000 SADD urls 'http://bench.example/__rand_int__')" >> "$raw"
  echo "$r single-cpu redis $(cpu_us "$RPID" "$c0")" >> "$raw"
  echo "$r pipe64 redis $(rps -p "$RPORT" -c 50 -n "$((n * 4))" -P 64 -r 100000000 SADD urls 'http://bench.example/__rand_int__')" >> "$raw"
  stop_redis
  start_redis -- --appendonly yes --appendfsync everysec
  echo "$r single-aof redis $(rps -p "$RPORT" -c 50 -n "$n" -r 100000000 SADD urls 'http://bench.example/__rand_int__')" >> "$raw"
  echo "$r pipe64-aof redis $(rps -p "$RPORT" -c 50 -n "$((n * 4))" -P 64 -r 100000000 SADD urls 'http://bench.example/__rand_int__')" >> "$raw"
  stop_redis
  start_redis taskset -c 1
  echo "$r single-pinned redis $(CLIENT="taskset -c 0" rps -p "$RPORT" -c 50 -n "$n" -r 100000000 SADD urls 'http://bench.example/__rand_int__')" >> "$raw"
  stop_redis
done

# Memory: the same distinct URLs into each.
"$work/genurls" -n "$distinct" | sort -u -S 1G > "$work/urls.txt"
nd=$(wc -l < "$work/urls.txt")
resp() { # CMD: RESP commands of 100 URLs each, on stdout
  python3 - "$1" "$work/urls.txt" <<'PY'
import sys
cmd, path = sys.argv[1].encode(), sys.argv[2]
out = sys.stdout.buffer
def flush(batch):
    out.write(b"*%d\r\n$%d\r\n%s\r\n$4\r\nurls\r\n" % (len(batch) + 2, len(cmd), cmd))
    for u in batch:
        out.write(b"$%d\r\n%s\r\n" % (len(u), u))
batch = []
for line in open(path, "rb"):
    batch.append(line.rstrip(b"\n"))
    if len(batch) == 100:
        flush(batch); batch = []
if batch:
    flush(batch)
PY
}
start_redis
before=$(redis-cli -p "$RPORT" INFO memory | awk -F: '/^used_memory:/{print $2+0}')
resp SADD | redis-cli -p "$RPORT" --pipe > /dev/null
after=$(redis-cli -p "$RPORT" INFO memory | awk -F: '/^used_memory:/{print $2+0}')
card=$(redis-cli -p "$RPORT" SCARD urls)
stop_redis
start_serve
resp BF.MADD | redis-cli -p "$UPORT" --pipe > /dev/null
items=$(redis-cli -p "$UPORT" BF.CARD urls)
rss=$(awk '/^VmRSS/{print $2*1024}' "/proc/$UPID/status")
stop_serve
state=$(du -sb --apparent-size "$work/state" | cut -f1)

python3 - "$raw" "$nd" "$before" "$after" "$card" "$items" "$rss" "$state" <<'PY'
import statistics as st, sys
rows = [l.split() for l in open(sys.argv[1])]
nd, before, after, card, items, rss, state = map(int, sys.argv[2:])
def col(kind, who):
    return [float(r[3]) for r in rows if r[1] == kind and r[2] == who]
def ratio(kind):
    u = {r[0]: float(r[3]) for r in rows if r[1] == kind and r[2] == "urldedupd"}
    s = {r[0]: float(r[3]) for r in rows if r[1] == kind and r[2] == "redis"}
    return st.median(u[k] / s[k] for k in u if k in s and s[k] > 0)
def ratio_to(kind, base):
    u = {r[0]: float(r[3]) for r in rows if r[1] == kind and r[2] == "urldedupd"}
    s = {r[0]: float(r[3]) for r in rows if r[1] == base and r[2] == "redis"}
    return st.median(u[k] / s[k] for k in u if k in s and s[k] > 0)
f = lambda v: f"{st.median(v):,.0f} ({min(v):,.0f}–{max(v):,.0f})"
print("redis-benchmark, 50 clients, random URLs; requests a second, medians (min–max):")
print()
print("| | urldedupd `BF.ADD` | redis-server `SADD` | urldedupd / redis (median of rounds) |")
print("|---|---|---|---|")
print(f"| single commands | {f(col('single','urldedupd'))} | {f(col('single','redis'))} | {ratio('single'):.2f}× |")
print(f"| `-P 64` | {f(col('pipe64','urldedupd'))} | {f(col('pipe64','redis'))} | {ratio('pipe64'):.2f}× |")
m = [v * 100 for v in col('madd100', 'urldedupd')]
print(f"| `BF.MADD` of 100 URLs, `-P 4` (URLs/s) | {f(m)} | — | |")
print(f"| single commands, serve `--resp-goroutines` (a goroutine a connection, not the event loop) | {f(col('single-goroutines','urldedupd'))} | {f(col('single','redis'))} | {ratio_to('single-goroutines','single'):.2f}× |")
m = [v * 100 for v in col('madd100-goroutines', 'urldedupd')]
print(f"| `BF.MADD` of 100 URLs, `-P 4`, serve `--resp-goroutines` (URLs/s) | {f(m)} | — | |")
print(f"| single commands, serve `--flush-interval 0` | {f(col('single-noflush','urldedupd'))} | {f(col('single','redis'))} | {ratio_to('single-noflush','single'):.2f}× |")
print(f"| `-P 64`, serve `--flush-interval 0` | {f(col('pipe64-noflush','urldedupd'))} | {f(col('pipe64','redis'))} | {ratio_to('pipe64-noflush','pipe64'):.2f}× |")
m = [v * 100 for v in col('madd100-noflush', 'urldedupd')]
print(f"| `BF.MADD` of 100 URLs, `-P 4`, serve `--flush-interval 0` (URLs/s) | {f(m)} | — | |")
print(f"| single commands, serve `--flush-interval 0 --resp-loops NPROC` (a loop a processor) | {f(col('single-loops-noflush','urldedupd'))} | {f(col('single','redis'))} | {ratio_to('single-loops-noflush','single'):.2f}× |")
m = [v * 100 for v in col('madd100-loops-noflush', 'urldedupd')]
print(f"| `BF.MADD` of 100 URLs, `-P 4`, serve `--flush-interval 0 --resp-loops NPROC` (URLs/s) | {f(m)} | — | |")
print(f"| single commands; redis-server `--appendfsync everysec` (both lose at most about a second to a power loss) | {f(col('single','urldedupd'))} | {f(col('single-aof','redis'))} | {ratio_to('single','single-aof'):.2f}× |")
print(f"| `-P 64`; redis-server `--appendfsync everysec` | {f(col('pipe64','urldedupd'))} | {f(col('pipe64-aof','redis'))} | {ratio_to('pipe64','pipe64-aof'):.2f}× |")
print(f"| single commands, serve `--checkpoint-interval 0` (no journal: every 1 s flush syncs the shards); redis-server `everysec` | {f(col('single-msync','urldedupd'))} | {f(col('single-aof','redis'))} | {ratio_to('single-msync','single-aof'):.2f}× |")
print(f"| `-P 64`, serve `--checkpoint-interval 0`; redis-server `everysec` | {f(col('pipe64-msync','urldedupd'))} | {f(col('pipe64-aof','redis'))} | {ratio_to('pipe64-msync','pipe64-aof'):.2f}× |")
cu, cr = col('single-cpu', 'urldedupd'), col('single-cpu', 'redis')
print(f"| processor time of the server a single command (µs; the client's not counted) | {st.median(cu):.2f} ({min(cu):.2f}–{max(cu):.2f}) | {st.median(cr):.2f} ({min(cr):.2f}–{max(cr):.2f}) | with a core of its own: {1e6/st.median(cu):,.0f} vs {1e6/st.median(cr):,.0f} a second |")
print(f"| single commands, client on core 0, server on core 1 | {f(col('single-pinned','urldedupd'))} | {f(col('single-pinned','redis'))} | {ratio('single-pinned'):.2f}× |")
print()
print(f"Memory, {nd:,} distinct URLs loaded into each (redis-cli --pipe, 100 a command):")
print()
print("| | bytes | a URL |")
print("|---|---|---|")
print(f"| redis-server `SADD` (used_memory growth; SCARD {card:,}) | {after - before:,} | {(after - before) / nd:.1f} |")
print(f"| urldedupd keyed state (files; BF.CARD {items:,}) | {state:,} | {state / nd:.1f} |")
print(f"| urldedupd serve, resident (RSS, the mapped state's touched pages included) | {rss:,} | {rss / nd:.1f} |")
PY
