#!/usr/bin/env bash
# The highest packet rate `urldedupd capture` sustains on a veth with zero
# kernel drops, for 1 and 2 workers (--workers: sockets in an AF_PACKET
# fanout group, an engine each): tcpreplay sends a capture from the client
# namespace at rising rates (and at top speed) while capture listens on
# the server's end; each row reads capture's own summary, and the CPU time
# capture used (utime + stime from /proc, read just before it is stopped)
# per packet it saw.
#
# Usage: scripts/bench-live.sh CAPTURE.pcap   (e.g. from make-bench-capture.sh)
# WORKERS="1 2" (the default) and RATES="100000 200000 300000 400000 600000 topspeed" choose the rows.
# Needs root, iproute2, tcpreplay.
set -euo pipefail
cap=${1:?usage: bench-live.sh CAPTURE.pcap}
cd "$(dirname "$0")/.."
command -v tcpreplay >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tcpreplay >/dev/null; }
. scripts/netns.sh
work=$(mktemp -d /var/tmp/urldedupd-live.XXXXXX)
cpid=
cleanup() {
  [ -n "$cpid" ] && kill "$cpid" 2>/dev/null && wait "$cpid" 2>/dev/null
  netns_down
  rm -rf "$work"
}
trap cleanup EXIT
go build -o "$work/urldedupd" ./cmd/urldedupd
netns_up
if_c=${if_s%a}b
"$work/urldedupd" --dir "$work/state" init > /dev/null
pkts=$(capinfos -c -M "$cap" 2>/dev/null | awk -F: '/Number of packets/ {gsub(/ /,"",$2); print $2}')
echo "Capture: $cap ($pkts packets); $(nproc) cores; $(date -u +%F)"
echo
echo "| workers | tcpreplay rate | achieved packets/s | Mbit/s | packets seen | requests | kernel drops | CPU µs/packet |"
echo "|---|---|---|---|---|---|---|---|"
tck=$(getconf CLK_TCK)
for workers in ${WORKERS:-1 2}; do
for rate in ${RATES:-100000 200000 300000 400000 600000 topspeed}; do
  rm -rf "$work/state"; "$work/urldedupd" --dir "$work/state" init > /dev/null
  ip netns exec "$ns_s" "$work/urldedupd" --dir "$work/state" capture --iface "$if_s" --workers "$workers" --all -o "$work/out" 2> "$work/err" &
  cpid=$!
  for _ in $(seq 50); do grep -q capturing "$work/err" && break; sleep 0.1; done
  if [ "$rate" = topspeed ]; then args=(--topspeed); else args=(--pps="$rate"); fi
  ip netns exec "$ns_c" tcpreplay -q -i "$if_c" "${args[@]}" "$cap" > "$work/tr" 2>&1 || true
  sleep 1
  # ip netns exec execs the command: $cpid is capture's own pid.
  read -r ut st < <(awk '{print $14, $15}' "/proc/$cpid/stat")
  kill -INT "$cpid"; wait "$cpid" || true; cpid=
  achieved=$(grep -o 'Rated: [0-9.]* Bps, [0-9.]* Mbps, [0-9.]* pps' "$work/tr" | awk '{print $6 " " $4}')
  read -r pps mbps <<< "$achieved"
  sum=$(tail -n 2 "$work/err" | grep packets)
  seen=$(sed -E 's/.*packets ([0-9]+).*/\1/' <<< "$sum")
  reqs=$(sed -E 's/.*requests ([0-9]+).*/\1/' <<< "$sum")
  drops=$(sed -E 's/.*kernel drops ([0-9]+).*/\1/' <<< "$sum")
  cpu=$(awk -v t=$((ut + st)) -v k="$tck" -v n="$seen" 'BEGIN { if (n > 0) printf "%.2f", t / k * 1e6 / n; else print "?" }')
  echo "| $workers | $rate | ${pps:-?} | ${mbps:-?} | $seen | $reqs | $drops | $cpu |"
done
done
