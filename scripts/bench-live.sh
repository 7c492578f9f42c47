#!/usr/bin/env bash
# The highest packet rate `urldedupd capture` sustains on a veth with zero
# kernel drops: tcpreplay sends a capture from the client namespace at
# rising rates (and at top speed) while capture listens on the server's
# end; each row reads capture's own summary.
#
# Usage: scripts/bench-live.sh CAPTURE.pcap   (e.g. from make-bench-capture.sh)
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
echo "| tcpreplay rate | achieved packets/s | Mbit/s | packets seen | requests | kernel drops |"
echo "|---|---|---|---|---|---|"
for rate in 100000 200000 400000 topspeed; do
  rm -rf "$work/state"; "$work/urldedupd" --dir "$work/state" init > /dev/null
  ip netns exec "$ns_s" "$work/urldedupd" --dir "$work/state" capture --iface "$if_s" --all -o "$work/out" 2> "$work/err" &
  cpid=$!
  for _ in $(seq 50); do grep -q capturing "$work/err" && break; sleep 0.1; done
  if [ "$rate" = topspeed ]; then args=(--topspeed); else args=(--pps="$rate"); fi
  ip netns exec "$ns_c" tcpreplay -q -i "$if_c" "${args[@]}" "$cap" > "$work/tr" 2>&1 || true
  sleep 1
  kill -INT "$cpid"; wait "$cpid" || true; cpid=
  achieved=$(grep -o 'Rated: [0-9.]* Bps, [0-9.]* Mbps, [0-9.]* pps' "$work/tr" | awk '{print $6 " " $4}')
  read -r pps mbps <<< "$achieved"
  sum=$(tail -n 2 "$work/err" | grep packets)
  seen=$(sed -E 's/.*packets ([0-9]+).*/\1/' <<< "$sum")
  reqs=$(sed -E 's/.*requests ([0-9]+).*/\1/' <<< "$sum")
  drops=$(sed -E 's/.*kernel drops ([0-9]+).*/\1/' <<< "$sum")
  echo "| $rate | ${pps:-?} | ${mbps:-?} | $seen | $reqs | $drops |"
done
