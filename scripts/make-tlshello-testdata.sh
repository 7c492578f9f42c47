#!/usr/bin/env bash
# Records real ClientHellos into internal/tlshello/testdata/*.hello: each client
# connects to `tlshello record` on loopback, which writes the first
# handshake message it receives (record headers removed) and hangs up.
# Clients: Go's crypto/tls (its default key shares include X25519MLKEM768:
# a hello larger than 1,200 bytes), Go with ECH, openssl s_client (TLS 1.3
# with SNI, without SNI, TLS 1.2 with a long ALPN list), curl.
# Needs Go, openssl, curl. The expected values are in hello_test.go.
#
# Usage: scripts/make-tlshello-testdata.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=$here/../internal/tlshello/testdata
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$here/.." && go build -o "$tmp/tlshello" ./scripts/tlshello)
port=$((20000 + $$ % 20000))

# rec NAME CLIENT...: records what CLIENT sends into NAME.hello.
rec() {
  local name=$1; shift
  "$tmp/tlshello" record -listen "127.0.0.1:$port" -out "$out/$name.hello" & local pid=$!
  for _ in $(seq 50); do ss -ltn "sport = :$port" | grep -q LISTEN && break; sleep 0.1; done
  timeout 20 "$@" </dev/null >/dev/null 2>&1 || true
  wait "$pid"
  echo "$name.hello: $(stat -c %s "$out/$name.hello") bytes" >&2
}

"$tmp/tlshello" echconfig -public public.example -out "$tmp/ech.list" -key "$tmp/ech.key"
rec go-default "$tmp/tlshello" client -addr "127.0.0.1:$port" -name go.example
rec go-tls12 "$tmp/tlshello" client -addr "127.0.0.1:$port" -name tls12.go.example -tls12
rec go-ech "$tmp/tlshello" client -addr "127.0.0.1:$port" -name secret.example -echconfig "$tmp/ech.list"
rec openssl-tls13 openssl s_client -connect "127.0.0.1:$port" -servername openssl.example -tls1_3
rec openssl-nosni openssl s_client -connect "127.0.0.1:$port" -noservername
rec openssl-tls12-alpn openssl s_client -connect "127.0.0.1:$port" -servername alpn.example -tls1_2 \
  -alpn h2,http/1.1,http/1.0,spdy/3,spdy/2,spdy/1,h3,h3-29,stun.turn,webrtc,c-webrtc,ftp,imap,pop3,managesieve,coap,xmpp-client,xmpp-server,acme-tls/1,mqtt,dot,ntske/1,sunrpc,irc,smb,postgresql
rec curl curl -sk --resolve "curl.example:$port:127.0.0.1" "https://curl.example:$port/"
