#!/usr/bin/env bash
# API throughput and latency of `urldedupd serve` on its Unix socket, for
# batches of 1, 100 and 10,000 URLs, driven by scripts/apiload.
# Usage: scripts/bench-api.sh [SECONDS]   (default 5 per row)
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-5}
work=$(mktemp -d /var/tmp/urldedupd-api.XXXXXX)
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
go build -o "$work/urldedupd" ./cmd/urldedupd
go build -o "$work/apiload" ./scripts/apiload
"$work/urldedupd" --dir "$work/state" init > /dev/null
"$work/urldedupd" --dir "$work/state" serve --log-format json --events /dev/null 2> "$work/serve.log" &
pid=$!
for _ in $(seq 100); do [ -S "$work/state/api.sock" ] && break; sleep 0.1; done
echo "$(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); $(date -u +%F); ${secs}s per row"
echo
echo "| batch | connections | requests | requests/s | URLs/s | p50 | p99 | errors |"
echo "|---|---|---|---|---|---|---|---|"
"$work/apiload" -socket "$work/state/api.sock" -batch 1 -c 16 -d "${secs}s"
"$work/apiload" -socket "$work/state/api.sock" -batch 100 -c 8 -d "${secs}s"
"$work/apiload" -socket "$work/state/api.sock" -batch 10000 -c 4 -d "${secs}s" -pool 4000000
