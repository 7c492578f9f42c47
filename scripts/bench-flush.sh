#!/usr/bin/env bash
# What a flush writes, and what it costs (docs/BENCHMARKS.md, "Flushes
# write pages, not shards"): `serve --resp-listen` on a fresh keyed state
# in a directory on disk (WORK, /var/tmp by default: not tmpfs), with the
# default --flush-interval 1s.
#
#   1. light load: RATES new URLs a second (bursts of BF.MADD through
#      redis-cli once a second) for SECS seconds; the bytes serve dirtied
#      (write_bytes of /proc/PID/io: what the kernel writes back for it)
#      and the sectors the state's disk wrote, a second;
#   2. heavy load: redis-benchmark, 50 clients, random URLs: BF.MADD of
#      100 (-P 4) and single BF.ADD, with --flush-interval 1s and 0, and
#      redis-server's SADD (no persistence) in the same rounds.
#
# With BASE=/path/to/another/urldedupd every row is measured for both
# binaries, alternated.
#
# Usage: [BASE=old-binary] [ROUNDS=3] [RATES="100 1000 10000"] [SECS=10] scripts/bench-flush.sh
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${ROUNDS:-3}
rates=${RATES:-100 1000 10000}
secs=${SECS:-10}
command -v redis-benchmark >/dev/null && command -v redis-server >/dev/null || {
  apt-get update -qq && apt-get install -y -qq redis-server redis-tools >/dev/null; }
work=$(mktemp -d "${WORK:-/var/tmp}/urldedupd-flush.XXXXXX")
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
[ "$(stat -f -c %T "$work")" != tmpfs ] || { echo "$work is on tmpfs, which writes nothing back: set WORK to a directory on disk" >&2; exit 2; }
go build -o "$work/new" ./cmd/urldedupd
bins=(new)
if [ -n "${BASE:-}" ]; then cp "$BASE" "$work/base"; bins=(base new); fi
dev=$(basename "$(df --output=source "$work" | tail -1)")
[ -r "/sys/block/$dev/stat" ] || dev=$(lsblk -no pkname "/dev/$dev" 2>/dev/null | head -1)
freeport() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
start_serve() { # BIN FLUSH: a fresh keyed state; sets PORT and SPID
  rm -rf "$work/state"
  "$work/$1" --dir "$work/state" init --layout keyed > /dev/null
  PORT=$(freeport)
  "$work/$1" --dir "$work/state" serve --events /dev/null --socket "$work/api.sock" --resp-listen "127.0.0.1:$PORT" --flush-interval "$2" 2> "$work/serve.log" &
  SPID=$!; pids+=("$SPID")
  for _ in $(seq 1 200); do redis-cli -p "$PORT" PING >/dev/null 2>&1 && return; sleep 0.05; done
  echo "serve did not start" >&2; cat "$work/serve.log" >&2; exit 1
}
stop() { kill "$1"; wait "$1" 2>/dev/null || true; }
wbytes() { awk '/^write_bytes:/{print $2}' "/proc/$1/io"; }
sectors() { awk '{print $7}' "/sys/block/$dev/stat"; }
rps() { redis-benchmark -q "$@" 2>/dev/null | tr '\r' '\n' | sed -n 's/.*: \([0-9.]*\) requests per second.*/\1/p' | tail -1; }
echo "$(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); kernel $(uname -r); $(stat -f -c %T "$work") on $dev; $(date -u '+%F %H:%M UTC'); load $(cut -d' ' -f1-3 /proc/loadavg); $rounds rounds"
echo
echo "| binary | new URLs a second | serve dirtied, MB a second | disk wrote, MB a second |"
echo "|---|---|---|---|"
for rate in $rates; do
  for b in "${bins[@]}"; do
    start_serve "$b" 1s
    sleep 1.5
    w0=$(wbytes "$SPID"); s0=$(sectors)
    for t in $(seq 1 "$secs"); do
      t0=$(date +%s%N)
      awk -v t="$t" -v n="$rate" -v b="$b" 'BEGIN { for (i = 0; i < n; i += 100) { printf "BF.MADD urls"; for (j = i; j < i + 100 && j < n; j++) printf " http://light.example/%s/%d/%d", b, t, j; print "" } }' \
        | redis-cli -p "$PORT" > /dev/null
      t1=$(date +%s%N); left=$(( 1000000000 - (t1 - t0) )); [ "$left" -gt 0 ] && sleep "0.$(printf '%09d' "$left")"
    done
    sleep 1.2 # the last flush
    w1=$(wbytes "$SPID"); s1=$(sectors)
    stop "$SPID"
    echo "| $b | $rate | $(( (w1 - w0) / secs / 1000000 )).$(( (w1 - w0) / secs / 100000 % 10 )) | $(( (s1 - s0) * 512 / secs / 1000000 )) |"
  done
done
echo
madd=(BF.MADD urls); for i in $(seq 1 100); do madd+=("http://bench.example/__rand_int__/$i"); done
echo "| round | binary | --flush-interval | BF.MADD of 100, URLs a second | single BF.ADD a second | redis-server SADD a second |"
echo "|---|---|---|---|---|---|"
for r in $(seq 1 "$rounds"); do
  rport=$(freeport)
  redis-server --port "$rport" --save '' --appendonly no > "$work/redis.log" 2>&1 & rpid=$!; pids+=("$rpid")
  for _ in $(seq 1 200); do redis-cli -p "$rport" PING >/dev/null 2>&1 && break; sleep 0.05; done
  sadd=$(rps -p "$rport" -c 50 -n 200000 -r 100000000 SADD urls 'http://bench.example/__rand_int__')
  stop "$rpid"
  for fl in 1s 0; do
    for b in "${bins[@]}"; do
      start_serve "$b" "$fl"
      m=$(rps -p "$PORT" -c 50 -n 150000 -P 4 -r 100000000 "${madd[@]}")
      s=$(rps -p "$PORT" -c 50 -n 200000 -r 100000000 BF.ADD urls 'http://bench.example/__rand_int__')
      stop "$SPID"
      echo "| $r | $b | $fl | $(python3 -c "print(round($m*100))") | $s | $sadd |"
    done
  done
done
