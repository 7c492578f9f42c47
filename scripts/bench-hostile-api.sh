#!/usr/bin/env bash
# `urldedupd serve` under hostile API clients, at full scale, with its
# default limits: 64 connections that each start a maximum-size upload
# (32 MiB - 1 bytes), send all but the last byte and stall, and 1,000
# connections that send a body at 1 byte a second, while scripts/apiload
# sends normal requests (one URL, then batches of 100) on the Unix socket.
# Reports serve's peak RssAnon (sampled from /proc every 100 ms), its
# RssAnon after the hostile clients are gone, what they were answered,
# and the latency of the normal requests.
# Usage: scripts/bench-hostile-api.sh [SECONDS]   (default 12 per apiload row:
# both rows run within the 30 s the body timeout gives the hostile clients)
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-12}
work=$(mktemp -d /var/tmp/urldedupd-hostile.XXXXXX)
pid= sampler= stall= slow=
cleanup() {
	for p in $stall $slow $sampler; do kill "$p" 2>/dev/null || true; done
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
go build -o "$work/urldedupd" ./cmd/urldedupd
go build -o "$work/apiload" ./scripts/apiload
"$work/urldedupd" --dir "$work/state" init > /dev/null
"$work/urldedupd" --dir "$work/state" serve --log-format json --events /dev/null 2> "$work/serve.log" &
pid=$!
sock=$work/state/api.sock
for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.1; done
rss() { awk '/^RssAnon:/ {print $2}' "/proc/$pid/status"; }
before=$(rss)
( while kill -0 "$pid" 2>/dev/null; do rss; sleep 0.1; done ) > "$work/rss" &
sampler=$!

# The hostile clients give up after their body timeout (30 s) has surely
# passed; apiload runs while they hold their connections.
python3 scripts/hostileclient.py stall --addr "$sock" --conns 64 --size $(((32 << 20) - 1)) --duration 45 > "$work/stall" &
stall=$!
python3 scripts/hostileclient.py slowloris --addr "$sock" --conns 1000 --size 1000 --duration 45 > "$work/slow" &
slow=$!
for _ in $(seq 600); do
	[ "$(head -1 "$work/stall" 2>/dev/null)" = ready ] && [ "$(head -1 "$work/slow" 2>/dev/null)" = ready ] && break
	sleep 0.1
done
echo "$(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); $(date -u +%F); ${secs}s per row"
echo "hostile: 64 stalled uploads of $(((32 << 20) - 1)) bytes, 1,000 connections sending a body at 1 byte/s"
echo
echo "| batch | connections | requests | requests/s | URLs/s | p50 | p99 | errors |"
echo "|---|---|---|---|---|---|---|---|"
"$work/apiload" -socket "$sock" -batch 1 -c 4 -d "${secs}s" || true
"$work/apiload" -socket "$sock" -batch 100 -c 2 -d "${secs}s" || true
wait "$stall" "$slow"
stall= slow=
sleep 5
after=$(rss)
kill "$sampler" 2>/dev/null || true
sampler=
peak=$(sort -n "$work/rss" | tail -1)
echo
echo "stalled uploads: $(tail -1 "$work/stall")"
echo "slowloris:       $(tail -1 "$work/slow")"
echo
echo "| serve RssAnon | MiB |"
echo "|---|---|"
echo "| before | $((before / 1024)) |"
echo "| peak under attack | $((peak / 1024)) |"
echo "| 5 s after the clients are gone | $((after / 1024)) |"
