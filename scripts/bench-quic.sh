#!/usr/bin/env bash
# Times `urldedupd replay` against tshark on a QUIC-heavy capture made by
# scripts/quicbench (CONNS QUIC v1 connections, each a real crypto/tls
# ClientHello in two Initial datagrams, to HOSTS server names), in the
# same run, with peak RSS. tshark derives the Initial keys and decrypts the
# ClientHellos itself; both print the server name of each.
#
# Usage: scripts/bench-quic.sh [CONNS [HOSTS]]   (default 100000 20000)
# ROUNDS=N (default 3) runs every tool N times, taking turns, and reports
# the median (the machine may be shared: a sub-second run is at the mercy
# of a burst of load, which tshark's seconds average out); each round's
# seconds and CPU seconds are printed too. With BASE=/path/to/an/older/
# urldedupd, its --dry-run is run right before this build's each round,
# for a before/after in one run.
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
rounds=${ROUNDS:-3}
work=$(mktemp -d /var/tmp/urldedupd-bench-quic.XXXXXX)
trap 'rm -rf "$work"' EXIT
go build -o "$work/urldedupd" ./cmd/urldedupd
go build -o "$work/quicbench" ./scripts/quicbench
cap=$work/quic.pcap
"$work/quicbench" -o "$cap" -conns "$conns" -hosts "$hosts"
cat "$cap" > /dev/null
mb=$(du -m "$cap" | cut -f1)
pkts=$(capinfos -c -M "$cap" | awk -F: '/Number of packets/ {gsub(/ /,"",$2); print $2}')

# measure TAG CMD...: runs CMD once, its output lines (one per ClientHello:
# urldedupd --all prints new/dup and the URL, tshark the name) counted;
# appends "seconds cpu-seconds peak-KiB found" to $work/runs.TAG.
measure() {
  local tag=$1; shift
  /usr/bin/time -f "%e %U %S %M" -o "$work/time" "$@" > "$work/out" 2>/dev/null || true
  read -r secs user sys kb < <(tail -n 1 "$work/time")
  local found; found=$(grep -c . "$work/out" || true)
  echo "$secs $(awk -v u="$user" -v s="$sys" 'BEGIN {print u+s}') $kb $found" >> "$work/runs.$tag"
}

# row TAG NAME: a table row from the median seconds of TAG's rounds (and
# their median CPU seconds, largest peak RSS); the median kept as med.TAG.
row() {
  local tag=$1 name=$2
  sort -n "$work/runs.$tag" | awk -v n="$name" -v mb="$mb" -v p="$pkts" '
    { s[NR]=$1; kb = ($3 > kb ? $3 : kb); f=$4; all = all (NR > 1 ? " / " : "") $1 }
    END { m = s[int((NR+1)/2)]
          printf "| %s | %.2f | %.0f | %.0f | %.0f | %d | %d |\n", n, m, mb/m, p/m, f/m, f, kb/1024 }'
  sort -n "$work/runs.$tag" | awk '{s[NR]=$1} END {print s[int((NR+1)/2)]}' > "$work/med.$tag"
  sort -n -k2 "$work/runs.$tag" | awk '{c[NR]=$2} END {print c[int((NR+1)/2)]}' > "$work/cpu.$tag"
}

tags=(new dup dry tshark)
[ -n "${BASE:-}" ] && tags+=(base)
for round in $(seq "$rounds"); do
  # A new state each round (creating it is not timed); the tools in turn.
  rm -rf "$work/state"
  "$work/urldedupd" --dir "$work/state" init > /dev/null
  measure new "$work/urldedupd" --dir "$work/state" replay --all --proto quic "$cap"
  measure dup "$work/urldedupd" --dir "$work/state" replay --all --proto quic "$cap"
  [ -n "${BASE:-}" ] && measure base "$BASE" --dir "$work/state" replay --dry-run --all "$cap"
  measure dry "$work/urldedupd" --dir "$work/state" replay --dry-run --all "$cap"
  measure tshark tshark -n -r "$cap" -d udp.port==443,quic -Y "quic && tls.handshake.type==1" -T fields -e tls.handshake.extensions_server_name
done

echo "Capture: $conns QUIC v1 connections to $hosts names, $mb MB, $pkts packets; $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); $(date -u +%F); median of $rounds rounds, the tools taking turns"
echo
echo "| tool | seconds | MB/s | packets/s | ClientHellos/s | ClientHellos found | peak RSS (MiB) |"
echo "|---|---|---|---|---|---|---|"
row new "urldedupd replay --all --proto quic (new state)"
row dup "urldedupd replay --all --proto quic (second run, all dup)"
[ -n "${BASE:-}" ] && row base "BASE urldedupd replay --dry-run --all (before)"
row dry "urldedupd replay --dry-run --all (every protocol)"
row tshark "tshark -d udp.port==443,quic -Y 'quic && tls.handshake.type==1' -e tls.handshake.extensions_server_name"
echo
for t in "${tags[@]}"; do
  echo "$t seconds, each round: $(awk '{printf "%s%s", (NR > 1 ? " / " : ""), $1}' "$work/runs.$t"); CPU (user+sys) seconds: $(awk '{printf "%s%s", (NR > 1 ? " / " : ""), $2}' "$work/runs.$t")"
done
echo
awk -v n="$(cat "$work/med.new")" -v d="$(cat "$work/med.dup")" -v r="$(cat "$work/med.dry")" -v t="$(cat "$work/med.tshark")" \
  -v cr="$(cat "$work/cpu.dry")" -v ct="$(cat "$work/cpu.tshark")" 'BEGIN {
  printf "tshark time / urldedupd time (medians): %.1fx (new state), %.1fx (all dup), %.1fx (--dry-run); CPU time, --dry-run: %.1fx\n", t/n, t/d, t/r, ct/cr }'
