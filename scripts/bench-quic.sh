#!/usr/bin/env bash
# Times `urldedupd replay` against tshark on a QUIC-heavy capture made by
# scripts/quicbench (CONNS QUIC v1 connections, each a real crypto/tls
# ClientHello in two Initial datagrams, to HOSTS server names), in the
# same run, with peak RSS. tshark derives the Initial keys and decrypts the
# ClientHellos itself; both print the server name of each.
#
# Usage: scripts/bench-quic.sh [CONNS [HOSTS]]   (default 100000 20000)
# Output: a markdown table on stdout, for docs/BENCHMARKS.md.
set -euo pipefail
cd "$(dirname "$0")/.."
need=()
for pair in tshark:tshark capinfos:tshark; do
  command -v "${pair%%:*}" >/dev/null || need+=("${pair#*:}")
done
[ -x /usr/bin/time ] || need+=(time)
if [ ${#need[@]} -gt 0 ]; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi
conns=${1:-100000}
hosts=${2:-20000}
work=$(mktemp -d /var/tmp/urldedupd-bench-quic.XXXXXX)
trap 'rm -rf "$work"' EXIT
go build -o "$work/urldedupd" ./cmd/urldedupd
go build -o "$work/quicbench" ./scripts/quicbench
cap=$work/quic.pcap
"$work/quicbench" -o "$cap" -conns "$conns" -hosts "$hosts"
cat "$cap" > /dev/null
mb=$(du -m "$cap" | cut -f1)
pkts=$(capinfos -c -M "$cap" | awk -F: '/Number of packets/ {gsub(/ /,"",$2); print $2}')

# measure TAG NAME CMD...: a table row, its seconds kept as secs.TAG; the
# tool prints one line per ClientHello (urldedupd --all: new/dup and the
# URL; tshark: the name).
measure() {
  local tag=$1 name=$2; shift 2
  /usr/bin/time -f "%e %M" -o "$work/time" "$@" > "$work/out" 2>/dev/null || true
  read -r secs kb < <(tail -n 1 "$work/time")
  local found; found=$(grep -c . "$work/out" || true)
  awk -v n="$name" -v s="$secs" -v kb="$kb" -v f="$found" -v mb="$mb" -v p="$pkts" 'BEGIN {
    printf "| %s | %.2f | %.0f | %.0f | %.0f | %d | %d |\n", n, s, mb/s, p/s, f/s, f, kb/1024 }'
  echo "$secs" > "$work/secs.$tag"
}

echo "Capture: $conns QUIC v1 connections to $hosts names, $mb MB, $pkts packets; $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); $(date -u +%F)"
echo
echo "| tool | seconds | MB/s | packets/s | ClientHellos/s | ClientHellos found | peak RSS (MiB) |"
echo "|---|---|---|---|---|---|---|"
"$work/urldedupd" --dir "$work/state" init > /dev/null # creating it is not timed
measure new "urldedupd replay --all --proto quic (new state)" "$work/urldedupd" --dir "$work/state" replay --all --proto quic "$cap"
measure dup "urldedupd replay --all --proto quic (second run, all dup)" "$work/urldedupd" --dir "$work/state" replay --all --proto quic "$cap"
measure dry "urldedupd replay --dry-run --all (every protocol)" "$work/urldedupd" --dir "$work/state" replay --dry-run --all "$cap"
measure tshark "tshark -d udp.port==443,quic -Y 'quic && tls.handshake.type==1' -e tls.handshake.extensions_server_name" \
  tshark -n -r "$cap" -d udp.port==443,quic -Y "quic && tls.handshake.type==1" -T fields -e tls.handshake.extensions_server_name
echo
awk -v n="$(cat "$work/secs.new")" -v d="$(cat "$work/secs.dup")" -v r="$(cat "$work/secs.dry")" -v t="$(cat "$work/secs.tshark")" 'BEGIN {
  printf "tshark time / urldedupd time: %.1fx (new state), %.1fx (all dup), %.1fx (--dry-run)\n", t/n, t/d, t/r }'
