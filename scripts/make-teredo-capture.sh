#!/usr/bin/env bash
# Makes the project's Teredo capture from real traffic: miredo-server
# (Debian's miredo-server, two addresses) and two miredo clients (Debian's
# miredo) in network namespaces on one bridge; each client qualifies with
# the server (port 3544) and gets its Teredo address; curl in one asks
# scripts/httpserver.py in the other for a few pages over IPv6, which the
# clients carry between their own ephemeral UDP ports: Teredo on ports
# that are not 3544, found only by content. tcpdump records the first
# client's link. The addresses are 11.0.0.0/24 (miredo wants global
# unicast IPv4), inside the namespaces only.
# Needs root, iproute2, tcpdump, curl, python3, miredo, miredo-server.
#
# Usage: scripts/make-teredo-capture.sh CAPDIR
# Writes CAPDIR/teredo.pcap and CAPDIR/teredo.urls ("URL ENCAP").
set -euo pipefail
caps=${1:?usage: make-teredo-capture.sh CAPDIR}
mkdir -p "$caps"
rm -f "$caps/teredo.pcap"
here=$(cd "$(dirname "$0")" && pwd)
id=udt$$
br=$id-br srv=$id-s ca=$id-a cb=$id-b
tmp=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  for n in "$br" "$srv" "$ca" "$cb"; do ip netns del "$n" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT
for n in "$br" "$srv" "$ca" "$cb"; do ip netns add "$n"; done
ip -n "$br" link add br0 type bridge
ip -n "$br" link set br0 up
i=0
for n in "$srv" "$ca" "$cb"; do
  i=$((i + 1))
  ip link add "$id-v$i" type veth peer name "$id-p$i"
  ip link set "$id-v$i" netns "$n"
  ip link set "$id-p$i" netns "$br"
  ip -n "$br" link set "$id-p$i" master br0
  ip -n "$br" link set "$id-p$i" up
  ip -n "$n" link set lo up
  ip -n "$n" link set "$id-v$i" up
done
ip -n "$srv" addr add 11.0.0.1/24 dev "$id-v1"
ip -n "$srv" addr add 11.0.0.2/24 dev "$id-v1"
ip -n "$ca" addr add 11.0.0.20/24 dev "$id-v2"
ip -n "$cb" addr add 11.0.0.30/24 dev "$id-v3"
printf 'ServerBindAddress 11.0.0.1\nServerBindAddress2 11.0.0.2\n' > "$tmp/server.conf"
printf 'RelayType client\nInterfaceName teredo\nServerAddress 11.0.0.1\n' > "$tmp/client.conf"
ip netns exec "$srv" miredo-server -f -c "$tmp/server.conf" -p "$tmp/server.pid" >/dev/null 2>&1 & pids+=($!)
sleep 0.5
ip netns exec "$ca" miredo -f -c "$tmp/client.conf" -p "$tmp/a.pid" >/dev/null 2>&1 & pids+=($!)
ip netns exec "$cb" miredo -f -c "$tmp/client.conf" -p "$tmp/b.pid" >/dev/null 2>&1 & pids+=($!)
addr=
for _ in $(seq 100); do # qualification, bounded: 20 s
  addr=$(ip -n "$cb" -6 addr show dev teredo 2>/dev/null | awk '/scope global/ {print $2}' | cut -d/ -f1 || true)
  a=$(ip -n "$ca" -6 addr show dev teredo 2>/dev/null | awk '/scope global/ {print $2}' || true)
  [ -n "$addr" ] && [ -n "$a" ] && break
  sleep 0.2
done
[ -n "$addr" ] || { echo "the Teredo clients did not qualify" >&2; exit 1; }
ip netns exec "$cb" python3 "$here/httpserver.py" :: 8080 >/dev/null 2>&1 & pids+=($!)
for _ in $(seq 100); do ip netns exec "$cb" ss -ltnH "sport = :8080" | grep -q LISTEN && break; sleep 0.1; done
ip netns exec "$ca" tcpdump -q -U -n -i "$id-v2" -s 0 -w "$caps/teredo.pcap" udp 2>/dev/null & rec=$!
pids+=($rec)
for _ in $(seq 100); do [ "$(stat -c %s "$caps/teredo.pcap" 2>/dev/null || echo 0)" -ge 24 ] && break; sleep 0.1; done
sleep 0.3
urls=("http://[$addr]:8080/teredo/one" "http://[$addr]:8080/teredo/two?x=1" "http://[$addr]:8080/teredo/three")
for u in "${urls[@]}"; do
  ip netns exec "$ca" curl -s -g --max-time 10 -o /dev/null "$u"
done
sleep 1
kill -INT $rec
wait $rec 2>/dev/null || true
printf '%s teredo\n' "${urls[@]}" > "$caps/teredo.urls"
echo "wrote $caps/teredo.pcap and $caps/teredo.urls"
