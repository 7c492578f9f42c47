#!/usr/bin/env bash
# Makes the project's cleartext HTTP/2 (h2c) test captures from real
# traffic, in two network namespaces joined by a veth pair (scripts/netns.sh):
# nghttpd (Debian's nghttp2-server) takes nghttp's prior-knowledge
# connection, scripts/h2cserver (Go, golang.org/x/net/http2/h2c) curl's,
# prior knowledge and "Upgrade: h2c" (which nghttpd does not do);
# scripts/httpserver.py declines an Upgrade (HTTP/1.1 only). tcpdump records both.
# Needs root, iproute2, tcpdump, tshark, curl, nghttp2-client,
# nghttp2-server, go, python3.
#
# Usage: scripts/make-h2c-captures.sh CAPDIR STREAMDIR
# Writes CAPDIR/h2c-prior.pcap and CAPDIR/h2c-upgrade.pcap with
# CAPDIR/h2c-prior.urls and CAPDIR/h2c-upgrade.urls (the records each must
# yield, "PROTO METHOD URL": after an Upgrade the first request is HTTP/1.1),
# and, for internal/h2c, each connection's client bytes
# as STREAMDIR/NAME.client with the requests it carries in
# STREAMDIR/NAME.want ("STREAM METHOD SCHEME AUTHORITY PATH").
set -euo pipefail
caps=${1:?usage: make-h2c-captures.sh CAPDIR STREAMDIR}
streams=${2:?usage: make-h2c-captures.sh CAPDIR STREAMDIR}
mkdir -p "$caps" "$streams"
here=$(cd "$(dirname "$0")" && pwd)
. "$here/netns.sh"
tmp=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  netns_down
  rm -rf "$tmp"
}
trap cleanup EXIT
(cd "$here/.." && go build -o "$tmp/h2cserver" ./scripts/h2cserver)
mkdir -p "$tmp/www/a"
echo hello > "$tmp/www/index.html"
echo page > "$tmp/www/a/page.html"
netns_up
srv4=192.0.2.1 srv6=2001:db8::1 ng=8080 pk=8081 up=8082 h1=8083

ip netns exec "$ns_s" nghttpd --no-tls -d "$tmp/www" $ng >/dev/null 2>&1 & pids+=($!)
ip netns exec "$ns_s" "$tmp/h2cserver" ":$pk" 2>/dev/null & pids+=($!)
ip netns exec "$ns_s" "$tmp/h2cserver" ":$up" 2>/dev/null & pids+=($!)
ip netns exec "$ns_s" python3 "$here/httpserver.py" :: $h1 >/dev/null 2>&1 & pids+=($!)
ip netns exec "$ns_s" tcpdump -q -U -n -i "$if_s" -s 0 -w "$caps/h2c-prior.pcap" tcp port $ng or tcp port $pk 2>/dev/null & pids+=($!)
ip netns exec "$ns_s" tcpdump -q -U -n -i "$if_s" -s 0 -w "$caps/h2c-upgrade.pcap" tcp port $up or tcp port $h1 2>/dev/null & pids+=($!)
wait_listen $ng
wait_listen $pk
wait_listen $up
wait_listen $h1
wait_pcap "$caps/h2c-prior.pcap" "$caps/h2c-upgrade.pcap"
sleep 0.3

c() { ip netns exec "$ns_c" curl -s --max-time 5 "$@" > /dev/null; }
n() { ip netns exec "$ns_c" nghttp --timeout=5 "$@" > /dev/null; }
s="http://$srv4:$pk" s6="http://[$srv6]:$pk" u="http://$srv4:$up" g="http://$srv4:$ng" d="http://$srv4:$h1"
big=$(head -c 30000 /dev/zero | tr '\0' b)
# Prior knowledge, one connection per line; the want files below follow
# this order (tshark numbers the connections in it). curl 7.88 fails before
# a second request on a prior-knowledge connection: nghttp makes those
# (and asks for a URL once however often it is given).
n "$s/index.html" "$s/a/page.html?x=1&y=2" "$s/b/other.html"
c --http2-prior-knowledge "$s6/v6/page?lang=en"
c --http2-prior-knowledge -X POST --data-binary @"$tmp/www/index.html" "$s/api/submit"
n -H "x-big: $big" "$s/continued" "$s/index.html"
n -b 32 -H 'user-agent: nghttp-test' "$g/padded/one" "$g/padded/two" "$g/index.html"
c --http2-prior-knowledge -H 'Host: virtual.example' "$s/vhost"
c --http2-prior-knowledge -H "x-big: $big" "$s/curl-continued"
# Upgrade: the first request is HTTP/1.1 (stream 1), the rest HTTP/2.
c --http2 "$u/up/one" "$u/up/two" "$u/up/three"
c --http2 -H 'Host: upgraded.example' "$u/up/vhost" "$u/up/vhost2"
c --http2 "$u/up/a?n=1" "$u/up/b" "$u/up/c" "$u/up/d"
# Declined: scripts/httpserver.py answers HTTP/1.1, and curl goes on in it.
c --http2 "$d/declined/one" "$d/declined/two"
sleep 1
kill -INT "${pids[4]}" "${pids[5]}"
wait "${pids[4]}" "${pids[5]}" 2>/dev/null || true

{
  echo "h2c GET $s/index.html"
  echo "h2c GET $s/a/page.html?x=1&y=2"
  echo "h2c GET $s/b/other.html"
  echo "h2c GET $s6/v6/page?lang=en"
  echo "h2c POST $s/api/submit"
  echo "h2c GET $s/continued"
  echo "h2c GET $s/index.html"
  echo "h2c GET $g/padded/one"
  echo "h2c GET $g/padded/two"
  echo "h2c GET $g/index.html"
  echo "h2c GET http://virtual.example/vhost"
  echo "h2c GET $s/curl-continued"
} > "$caps/h2c-prior.urls"
{
  echo "http GET $u/up/one"
  echo "h2c GET $u/up/two"
  echo "h2c GET $u/up/three"
  echo "http GET http://upgraded.example/up/vhost"
  echo "h2c GET http://upgraded.example/up/vhost2"
  echo "http GET $u/up/a?n=1"
  echo "h2c GET $u/up/b"
  echo "h2c GET $u/up/c"
  echo "h2c GET $u/up/d"
  echo "http GET $d/declined/one"
  echo "http GET $d/declined/two"
} > "$caps/h2c-upgrade.urls"

# Each connection's client bytes, from tshark's TCP follow.
split() { # PCAP INDEX OUT
  tshark -r "$1" -q -z "follow,tcp,raw,$2" 2>/dev/null | python3 -c '
import sys
out = bytearray()
for line in sys.stdin:  # header lines have a colon; the server side is indented
    if line[0] not in "=\t\n" and ":" not in line:
        out += bytes.fromhex(line.strip())
sys.stdout.buffer.write(out)' > "$3"
}
p="$caps/h2c-prior.pcap" g="$caps/h2c-upgrade.pcap"
a4="$srv4:$pk" an="$srv4:$ng" a6="[$srv6]:$pk" au="$srv4:$up"
split "$p" 0 "$streams/nghttp-three.client"
printf '13 GET http %s /index.html\n15 GET http %s /a/page.html?x=1&y=2\n17 GET http %s /b/other.html\n' "$a4" "$a4" "$a4" > "$streams/nghttp-three.want"
split "$p" 1 "$streams/curl-ipv6.client"
printf '1 GET http %s /v6/page?lang=en\n' "$a6" > "$streams/curl-ipv6.want"
split "$p" 2 "$streams/curl-post.client"
printf '1 POST http %s /api/submit\n' "$a4" > "$streams/curl-post.want"
split "$p" 3 "$streams/nghttp-continuation.client"
printf '13 GET http %s /continued\n15 GET http %s /index.html\n' "$a4" "$a4" > "$streams/nghttp-continuation.want"
split "$p" 4 "$streams/nghttp-padded.client"
printf '13 GET http %s /padded/one\n15 GET http %s /padded/two\n17 GET http %s /index.html\n' "$an" "$an" "$an" > "$streams/nghttp-padded.want"
split "$p" 5 "$streams/curl-host.client"
printf '1 GET http virtual.example /vhost\n' > "$streams/curl-host.want"
split "$p" 6 "$streams/curl-continuation.client"
printf '1 GET http %s /curl-continued\n' "$a4" > "$streams/curl-continuation.want"
split "$g" 0 "$streams/curl-upgrade.client"
printf '3 GET http %s /up/two\n5 GET http %s /up/three\n' "$au" "$au" > "$streams/curl-upgrade.want"
split "$g" 1 "$streams/curl-upgrade-host.client"
printf '3 GET http upgraded.example /up/vhost2\n' > "$streams/curl-upgrade-host.want"
split "$g" 2 "$streams/curl-upgrade-four.client"
printf '3 GET http %s /up/b\n5 GET http %s /up/c\n7 GET http %s /up/d\n' "$au" "$au" "$au" > "$streams/curl-upgrade-four.want"
echo "wrote $caps/h2c-prior.pcap $caps/h2c-upgrade.pcap and $(ls "$streams"/*.client | wc -l) client streams"
