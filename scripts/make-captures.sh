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
. "$here/netns.sh"
srv4=192.0.2.1 srv6=2001:db8::1 port=8080
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  netns_down
}
trap cleanup EXIT
netns_up

ip netns exec "$ns_s" python3 "$here/httpserver.py" :: $port & pids+=($!)
ip netns exec "$ns_s" tcpdump -q -U -n -i "$if_s" -s 0 -w "$out/http.pcap" tcp port $port 2>/dev/null & pids+=($!)
ip netns exec "$ns_s" tcpdump -q -U -n -i any -s 0 -w "$out/http-any.pcap" tcp port $port 2>/dev/null & pids+=($!)
wait_listen $port
wait_pcap "$out/http.pcap" "$out/http-any.pcap"
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
