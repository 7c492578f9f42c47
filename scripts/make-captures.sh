#!/usr/bin/env bash
# Makes the project's test captures from real traffic: two network
# namespaces joined by a veth pair, a real HTTP/1.1 server in one
# (scripts/httpserver.py), real clients in the other (curl with keep-alive
# over IPv4 and IPv6, and scripts/rawclient.py for what curl will not send),
# recorded by tcpdump. Every address is inside the namespaces this script
# makes (TEST-NET-1 and the IPv6 documentation prefix); nothing leaves the
# machine. Needs root, iproute2, tcpdump, curl, python3.
#
# Usage: scripts/make-captures.sh OUTDIR
# Writes OUTDIR/http.pcap (Ethernet), OUTDIR/http-any.pcap (tcpdump -i any:
# Linux cooked SLL2) and OUTDIR/http.urls (the requests, "METHOD URL").
set -euo pipefail
out=${1:?usage: make-captures.sh OUTDIR}
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
id=udd$$
ns_s=$id-s ns_c=$id-c
srv4=192.0.2.1 cli4=192.0.2.2 srv6=2001:db8::1 cli6=2001:db8::2 port=8080
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  ip netns del "$ns_s" 2>/dev/null || true
  ip netns del "$ns_c" 2>/dev/null || true
}
trap cleanup EXIT

ip netns add "$ns_s"
ip netns add "$ns_c"
ip link add "$id-a" type veth peer name "$id-b"
ip link set "$id-a" netns "$ns_s"
ip link set "$id-b" netns "$ns_c"
ip -n "$ns_s" addr add $srv4/24 dev "$id-a"
ip -n "$ns_c" addr add $cli4/24 dev "$id-b"
ip -n "$ns_s" addr add $srv6/64 dev "$id-a" nodad
ip -n "$ns_c" addr add $cli6/64 dev "$id-b" nodad
for ns in "$ns_s" "$ns_c"; do
  ip -n "$ns" link set lo up
  ip netns exec "$ns" ethtool -K "$(ip -n "$ns" -o link show type veth | awk -F'[ :@]+' '{print $2}')" tso off gso off gro off 2>/dev/null || true
done
ip -n "$ns_s" link set "$id-a" up
ip -n "$ns_c" link set "$id-b" up

ip netns exec "$ns_s" python3 "$here/httpserver.py" :: $port & pids+=($!)
ip netns exec "$ns_s" tcpdump -q -U -n -i "$id-a" -s 0 -w "$out/http.pcap" tcp port $port 2>/dev/null & pids+=($!)
ip netns exec "$ns_s" tcpdump -q -U -n -i any -s 0 -w "$out/http-any.pcap" tcp port $port 2>/dev/null & pids+=($!)
for _ in $(seq 100); do # wait, bounded, for the server and both recorders
  if ip netns exec "$ns_s" ss -ltnH "sport = :$port" | grep -q LISTEN &&
     [ "$(stat -c %s "$out/http.pcap" 2>/dev/null || echo 0)" -ge 24 ] &&
     [ "$(stat -c %s "$out/http-any.pcap" 2>/dev/null || echo 0)" -ge 24 ]; then
    break
  fi
  sleep 0.1
done
sleep 0.3

c() { ip netns exec "$ns_c" curl -s --max-time 5 "$@" > /dev/null; }
# curl: several URLs on one keep-alive connection, then IPv6, a query, a POST.
c "http://$srv4:$port/index.html" "http://$srv4:$port/a/b/c.html?x=1&y=2" "http://$srv4:$port/images/logo.png"
c "http://[$srv6]:$port/v6/page?lang=en"
c -X POST -d 'a=1&b=2' "http://$srv4:$port/api/submit"
c -H 'Host: virtual.example' "http://$srv4:$port/vhost"
ip netns exec "$ns_c" python3 "$here/rawclient.py" $srv4 $port
sleep 1
# Stop the recorders (SIGINT: they flush), then write what must be found.
kill -INT "${pids[1]}" "${pids[2]}"
wait "${pids[1]}" "${pids[2]}" 2>/dev/null || true
s="http://$srv4:$port" r="http://raw.example:$port"
{
  echo "GET $s/index.html"
  echo "GET $s/a/b/c.html?x=1&y=2"
  echo "GET $s/images/logo.png"
  echo "GET http://[$srv6]:$port/v6/page?lang=en"
  echo "POST $s/api/submit"
  echo "GET http://virtual.example/vhost"
  for i in $(seq 0 9); do echo "GET $r/pipe/$i"; done
  echo "GET $r/split/three?pieces=1"
  echo "GET http://proxy.example/absolute?form=1"
  echo "POST $r/form"
  echo "GET $r/after-post"
  echo "POST $r/upload"
  echo "GET $r/after-chunked"
  echo "GET $s/http10-no-host"
  echo "HEAD $r/head"
  echo "DELETE $r/item/7"
} > "$out/http.urls"
echo "wrote $out/http.pcap $out/http-any.pcap $out/http.urls ($(wc -l < "$out/http.urls") requests)"
