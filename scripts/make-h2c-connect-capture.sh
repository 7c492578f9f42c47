#!/usr/bin/env bash
# Makes the project's capture of cleartext HTTP/2 (h2c) inside an HTTP
# CONNECT tunnel from real traffic, in two network namespaces joined by a
# veth pair (scripts/netns.sh): curl, told to tunnel through a proxy (-p)
# and to speak HTTP/2 with prior knowledge, asks tinyproxy (Debian's
# tinyproxy) to CONNECT to nghttpd (nghttp2-server) and to scripts/h2cserver;
# a TLS connection and a plain HTTP/1.1 request through the same proxy's
# tunnels are there too. tcpdump records the client's side of the
# proxy (the proxy's own connections to the servers stay on the server
# namespace's loopback).
# Needs root, iproute2, tcpdump, curl, nghttp2-server, tinyproxy, openssl, go.
#
# Usage: scripts/make-h2c-connect-capture.sh CAPDIR
# Writes CAPDIR/h2c-connect.pcap and CAPDIR/h2c-connect.urls (the records
# it must yield, "PROTO METHOD URL").
set -euo pipefail
caps=${1:?usage: make-h2c-connect-capture.sh CAPDIR}
mkdir -p "$caps"
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
mkdir -p "$tmp/www"
echo hello > "$tmp/www/index.html"
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=tunnel.example \
  -keyout "$tmp/key.pem" -out "$tmp/cert.pem" 2>/dev/null
netns_up
srv4=192.0.2.1 proxy=3128 ng=8080 pk=8081 h1=8083 tls=8443
# No ConnectPort line: tinyproxy then lets CONNECT open any port.
cat > "$tmp/tinyproxy.conf" <<CONF
Port $proxy
Listen 0.0.0.0
MaxClients 20
Allow 192.0.2.0/24
LogLevel Critical
PidFile "$tmp/tinyproxy.pid"
CONF

ip netns exec "$ns_s" nghttpd --no-tls -d "$tmp/www" $ng >/dev/null 2>&1 & pids+=($!)
ip netns exec "$ns_s" "$tmp/h2cserver" ":$pk" 2>/dev/null & pids+=($!)
ip netns exec "$ns_s" python3 "$here/httpserver.py" :: $h1 >/dev/null 2>&1 & pids+=($!)
ip netns exec "$ns_s" openssl s_server -quiet -accept $tls -cert "$tmp/cert.pem" -key "$tmp/key.pem" -www >/dev/null 2>&1 & pids+=($!)
ip netns exec "$ns_s" tinyproxy -d -c "$tmp/tinyproxy.conf" >/dev/null 2>&1 & pids+=($!)
ip netns exec "$ns_s" tcpdump -q -U -n -i "$if_s" -s 0 -w "$caps/h2c-connect.pcap" tcp port $proxy 2>/dev/null & rec=$!
pids+=($rec)
for p in $ng $pk $h1 $tls $proxy; do wait_listen $p; done
wait_pcap "$caps/h2c-connect.pcap"
sleep 0.3

c() { ip netns exec "$ns_c" curl -s --max-time 5 -p -x "http://$srv4:$proxy" "$@" > /dev/null; }
c --http2-prior-knowledge "http://$srv4:$pk/through/tunnel?x=1"
c --http2-prior-knowledge "http://$srv4:$ng/index.html"
c --http2-prior-knowledge -H 'Host: virtual.example' "http://$srv4:$pk/vhost"
c --http2-prior-knowledge "http://tunnelled.example:$pk/named" --connect-to "tunnelled.example:$pk:$srv4:$pk"
c -k "https://$srv4:$tls/secret"
c --http1.1 "http://$srv4:$h1/plain/inside"
sleep 1
kill -INT $rec
wait $rec 2>/dev/null || true

{
  echo "http CONNECT $srv4:$pk"
  echo "h2c GET http://$srv4:$pk/through/tunnel?x=1"
  echo "http CONNECT $srv4:$ng"
  echo "h2c GET http://$srv4:$ng/index.html"
  echo "http CONNECT $srv4:$pk"
  echo "h2c GET http://virtual.example/vhost"
  echo "http CONNECT $srv4:$pk"
  echo "h2c GET http://tunnelled.example:$pk/named"
  echo "http CONNECT $srv4:$tls"
  echo "tls  https://$srv4:$tls/"
  echo "http CONNECT $srv4:$h1"
  echo "http GET http://$srv4:$h1/plain/inside"
} > "$caps/h2c-connect.urls"
echo "wrote $caps/h2c-connect.pcap and $caps/h2c-connect.urls"
