#!/usr/bin/env bash
# Makes the capture for scripts/bench-replay.sh from real traffic: the
# netns pair of scripts/netns.sh, scripts/httpload serving in one namespace
# and loading from the other (N requests over CONNS keep-alive
# connections, a quarter of them pipelining 10 deep), recorded by tcpdump
# on the server's veth. Needs root, iproute2, tcpdump, Go.
#
# Usage: scripts/make-bench-capture.sh OUT.pcap [N] [CONNS]
set -euo pipefail
out=${1:?usage: make-bench-capture.sh OUT.pcap [N] [CONNS]}
n=${2:-500000} conns=${3:-5000}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/netns.sh"
bin=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  netns_down
  rm -rf "$bin"
}
trap cleanup EXIT
(cd "$here/.." && go build -o "$bin/httpload" ./scripts/httpload)
netns_up
ip netns exec "$ns_s" "$bin/httpload" serve 192.0.2.1:8080 & pids+=($!)
ip netns exec "$ns_s" tcpdump -q -n -i "$if_s" -s 0 -B 262144 -w "$out" tcp port 8080 2>/dev/null & pids+=($!)
wait_listen 8080
wait_pcap "$out"
sleep 0.3
ip netns exec "$ns_c" "$bin/httpload" load -addr 192.0.2.1:8080 -n "$n" -c "$conns" -pipelined 0.25
sleep 1
kill -INT "${pids[1]}"; wait "${pids[1]}" 2>/dev/null || true
echo "wrote $out: $(du -h "$out" | cut -f1)" >&2
