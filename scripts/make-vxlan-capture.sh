#!/usr/bin/env bash
# Makes the project's capture of a VXLAN tunnel on a port that is not
# VXLAN's from real traffic: two network namespaces joined by a veth pair
# (scripts/netns.sh) are the underlay; in each, the kernel's VXLAN device
# (VNI 42, UDP port 9999 instead of 4789) carries an overlay, 10.9.0.0/24,
# over which curl asks scripts/httpserver.py for a few pages. tcpdump
# records the underlay.
# Needs root, iproute2 (and the kernel's vxlan), tcpdump, curl, python3.
#
# Usage: scripts/make-vxlan-capture.sh CAPDIR
# Writes CAPDIR/vxlan-9999.pcap and CAPDIR/vxlan-9999.urls (the records it
# must yield, "URL ENCAP").
set -euo pipefail
caps=${1:?usage: make-vxlan-capture.sh CAPDIR}
mkdir -p "$caps"
here=$(cd "$(dirname "$0")" && pwd)
. "$here/netns.sh"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  netns_down
}
trap cleanup EXIT
netns_up
if_c=${if_s%-a}-b
ip -n "$ns_s" link add vx0 type vxlan id 42 dstport 9999 local 192.0.2.1 remote 192.0.2.2 dev "$if_s"
ip -n "$ns_c" link add vx0 type vxlan id 42 dstport 9999 local 192.0.2.2 remote 192.0.2.1 dev "$if_c"
ip -n "$ns_s" addr add 10.9.0.1/24 dev vx0
ip -n "$ns_c" addr add 10.9.0.2/24 dev vx0
ip -n "$ns_s" link set vx0 up
ip -n "$ns_c" link set vx0 up
ip netns exec "$ns_s" python3 "$here/httpserver.py" 10.9.0.1 8080 >/dev/null 2>&1 & pids+=($!)
wait_listen 8080
ip netns exec "$ns_s" tcpdump -q -U -n -i "$if_s" -s 0 -w "$caps/vxlan-9999.pcap" udp port 9999 2>/dev/null & rec=$!
pids+=($rec)
wait_pcap "$caps/vxlan-9999.pcap"
sleep 0.3
urls=(http://10.9.0.1:8080/overlay/one "http://10.9.0.1:8080/overlay/two?x=1" http://10.9.0.1:8080/overlay/three)
for u in "${urls[@]}"; do
  ip netns exec "$ns_c" curl -s --max-time 5 "$u" >/dev/null || true
done
sleep 1
kill -INT $rec
wait $rec 2>/dev/null || true
printf '%s vxlan/ethernet\n' "${urls[@]}" > "$caps/vxlan-9999.urls"
echo "wrote $caps/vxlan-9999.pcap and $caps/vxlan-9999.urls"
