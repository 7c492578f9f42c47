#!/usr/bin/env bash
# The DSBF layout's speed, in one run (issue 13's targets):
#
#   1. Local files: `urldedupd filter` on LINES URLs (scripts/genurls) into a
#      fresh dsbf state (512 MiB: 256 leaves of 2 MiB, c = 3, fmax 0.01)
#      and into a fresh bitmap, alternating, ROUNDS rounds; the ratio of
#      wall times (target: dsbf within 3× of bitmap).
#   2. The DSBF paper's throughput experiment: H = 1 (no split during the
#      run), c = 3, three Redis servers (a Redis Cluster of 3 masters on
#      loopback, a prefix chosen so the three first-level leaves are on
#      three different masters), batches of 300 (scripts/dsbfbench), with
#      WORKERS batches in flight; the paper measured about 15,000 URLs/s
#      (target: 30× that, 450,000). A single Redis server for reference.
#   3. What the batch lock costs: the same LINES split in 4, filtered by 4
#      processes at once into one fresh state, against 1 process filtering
#      them all; bitmap and keyed decide lock-free, bloom and dsbf hold an
#      OFD lock per batch of 1,024.
#
# Usage: scripts/bench-dsbf.sh   # ROUNDS=3 LINES=10000000 RLINES=3000000 WORKERS=16
# Output: markdown tables on stdout.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${ROUNDS:-3}
lines=${LINES:-10000000}
rlines=${RLINES:-3000000}
workers=${WORKERS:-16}

need=()
command -v redis-server >/dev/null || need+=(redis-server)
command -v redis-cli >/dev/null || need+=(redis-tools)
[ -x /usr/bin/time ] || need+=(time)
command -v bc >/dev/null || need+=(bc)
command -v python3 >/dev/null || need+=(python3)
if [ ${#need[@]} -gt 0 ]; then
  apt-get update -qq && apt-get install -y -qq "${need[@]}" >/dev/null
fi

work=$(mktemp -d /var/tmp/urldedupd-dsbf.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
go build -o "$work/urldedupd" ./cmd/urldedupd
go build -o "$work/genurls" ./scripts/genurls
go build -o "$work/dsbfbench" ./scripts/dsbfbench
"$work/genurls" -n "$lines" > "$work/urls.txt"
head -n "$rlines" "$work/urls.txt" > "$work/rurls.txt"
cat "$work/urls.txt" > /dev/null

echo "$(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); $(date -u '+%F %H:%M UTC'); load $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "Local files: \`filter\` on $lines lines into a fresh state (seconds, wall clock of the whole command)"
echo
echo "| round | bitmap | dsbf (c 3, fmax 0.01, 512 MiB) | dsbf / bitmap |"
echo "|---|---|---|---|"
secs() { /usr/bin/time -f "%e" -o "$work/t" "$@" > /dev/null 2>&1; cat "$work/t"; }
ratios=()
for r in $(seq "$rounds"); do
  rm -rf "$work/b" "$work/d"
  "$work/urldedupd" --dir "$work/b" init > /dev/null
  "$work/urldedupd" --dir "$work/d" init --layout dsbf > /dev/null
  b=$(secs "$work/urldedupd" --dir "$work/b" filter "$work/urls.txt")
  d=$(secs "$work/urldedupd" --dir "$work/d" filter "$work/urls.txt")
  ratio=$(echo "$d / $b" | bc -l)
  ratios+=("$ratio")
  printf '| %d | %s | %s | %.2f |\n' "$r" "$b" "$d" "$ratio"
done
rm -rf "$work/b" "$work/d"
printf '\nMedian dsbf/bitmap: %.2f\n\n' "$(printf '%s\n' "${ratios[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')"

echo "The batch lock: 4 processes at once, each a quarter of the $lines lines, against 1 process on all (seconds, wall)"
echo
echo "| layout | 1 process | 4 processes | 4 / 1 |"
echo "|---|---|---|---|"
split -n l/4 -d "$work/urls.txt" "$work/part."
for layout in bitmap keyed bloom dsbf; do
  rm -rf "$work/s"; "$work/urldedupd" --dir "$work/s" init --layout "$layout" > /dev/null
  one=$(secs "$work/urldedupd" --dir "$work/s" filter "$work/urls.txt")
  rm -rf "$work/s"; "$work/urldedupd" --dir "$work/s" init --layout "$layout" > /dev/null
  s0=$(date +%s%N)
  for p in "$work"/part.*; do "$work/urldedupd" --dir "$work/s" filter "$p" > /dev/null & done
  wait
  four=$(echo "($(date +%s%N) - $s0) / 1000000000" | bc -l)
  printf '| %s | %s | %.2f | %.2f |\n' "$layout" "$one" "$four" "$(echo "$four / $one" | bc -l)"
done
rm -rf "$work/s" "$work"/part.*
echo

# Redis: 3 masters, no replicas, no persistence (the paper's servers kept
# the filter in memory).
# A free port under 55536 (a cluster node also listens on port + 10000).
port() { python3 -c '
import random, socket
for _ in range(1000):
    p = random.randint(20000, 55535)
    s, b = socket.socket(), socket.socket()
    try:
        s.bind(("127.0.0.1", p)); b.bind(("127.0.0.1", p + 10000)); print(p); break
    except OSError: pass
    finally: s.close(); b.close()'; }
start() { # start DIR PORT [cluster]
  mkdir -p "$1"
  local extra=()
  [ "${3:-}" = cluster ] && extra=(--cluster-enabled yes --cluster-config-file nodes.conf)
  redis-server --bind 127.0.0.1 --port "$2" --dir "$1" --save "" --appendonly no --protected-mode no "${extra[@]}" > "$1/log" 2>&1 &
  pids+=($!)
  for _ in $(seq 400); do redis-cli -p "$2" ping 2>/dev/null | grep -q PONG && return; sleep 0.05; done
  echo "redis-server on $2 did not start:" >&2; cat "$1/log" >&2; exit 1
}
ports=()
for i in 1 2 3; do p=$(port); ports+=("$p"); start "$work/r$i" "$p" cluster; done
redis-cli --cluster create "127.0.0.1:${ports[0]}" "127.0.0.1:${ports[1]}" "127.0.0.1:${ports[2]}" --cluster-replicas 0 --cluster-yes > "$work/create.log" 2>&1
for _ in $(seq 200); do redis-cli -p "${ports[0]}" cluster info | grep -q cluster_state:ok && break; sleep 0.1; done
# A prefix whose leaves 00, 01, 02 sit on three different masters.
prefix=""
for i in $(seq 0 999); do
  s=""
  for l in 00 01 02; do
    slot=$(redis-cli -p "${ports[0]}" cluster keyslot "dsbf$i:$l")
    s+=" $(redis-cli -p "${ports[0]}" cluster nodes | awk -v slot="$slot" '$3 ~ /master/ {for (f = 9; f <= NF; f++) {split($f, r, "-"); if (slot >= r[1] && slot <= (r[2] == "" ? r[1] : r[2])) print $2}}')"
  done
  if [ "$(echo $s | tr ' ' '\n' | sort -u | wc -l)" = 3 ]; then prefix="dsbf$i"; break; fi
done
[ -n "$prefix" ] || { echo "no prefix spreads the leaves over 3 masters" >&2; exit 1; }
cluster="redis-cluster://127.0.0.1:${ports[0]},127.0.0.1:${ports[1]},127.0.0.1:${ports[2]}"
single_port=$(port); start "$work/single" "$single_port"
single="redis://127.0.0.1:$single_port/0"

echo "DSBF throughput: $rlines URLs (scripts/genurls), H = 1, c = 3, 2 MiB leaves, fmax 0.01, batches of 300, $workers in flight (scripts/dsbfbench)"
echo
echo "| round | 3 Redis servers (cluster, one leaf each) | 1 Redis server | local files |"
echo "|---|---|---|---|"
for r in $(seq "$rounds"); do
  for p in "${ports[@]}" "$single_port"; do redis-cli -p "$p" flushall > /dev/null; done
  rm -rf "$work/d"
  "$work/urldedupd" --backend "$cluster" --redis-prefix "$prefix" init --layout dsbf --children 3 > /dev/null
  "$work/urldedupd" --backend "$single" init --layout dsbf --children 3 > /dev/null
  "$work/urldedupd" --dir "$work/d" init --layout dsbf --children 3 > /dev/null
  c=$("$work/dsbfbench" -state "$cluster" -prefix "$prefix" -urls "$work/rurls.txt" -batch 300 -workers "$workers")
  s=$("$work/dsbfbench" -state "$single" -urls "$work/rurls.txt" -batch 300 -workers "$workers")
  l=$("$work/dsbfbench" -state "$work/d" -urls "$work/rurls.txt" -batch 300 -workers "$workers")
  echo "$c" > "$work/last-cluster"
  rate() { sed -E 's/.* ([0-9]+) URLs\/s.*/\1/' <<< "$1"; }
  printf '| %d | %s | %s | %s |\n' "$r" "$(rate "$c")" "$(rate "$s")" "$(rate "$l")"
done
echo
echo "Last cluster run: $(cat "$work/last-cluster")"
