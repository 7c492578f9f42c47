#!/usr/bin/env bash
# Makes internal/capture/testdata/captures/tls.pcap from real traffic: the
# netns pair of scripts/netns.sh, TLS servers in one namespace (Go's
# crypto/tls, with ECH, on 443 and 8443; openssl s_server on 4433), real
# clients in the other (curl over TLS 1.3 and 1.2, with and without SNI,
# over IPv6; Go's crypto/tls, whose X25519MLKEM768 key share makes a
# ClientHello of two segments; Go with ECH), recorded by tcpdump on the
# server's veth. tls.records lists what each connection must yield, in
# order; tls_test.go checks it and cross-checks it against tshark.
# Needs root, iproute2, tcpdump, openssl, curl, Go.
#
# Usage: scripts/make-tls-captures.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=$here/../internal/capture/testdata/captures
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
(cd "$here/.." && go build -o "$tmp/tlshello" ./scripts/tlshello)
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$tmp/key.pem" -out "$tmp/cert.pem" \
  -subj /CN=tls.test -days 1 2>/dev/null
"$tmp/tlshello" echconfig -public public.example -out "$tmp/ech.list" -key "$tmp/ech.key"
netns_up
ip netns exec "$ns_s" "$tmp/tlshello" serve -listen :443 -cert "$tmp/cert.pem" -key "$tmp/key.pem" & pids+=($!)
ip netns exec "$ns_s" "$tmp/tlshello" serve -listen 192.0.2.1:8443 -cert "$tmp/cert.pem" -key "$tmp/key.pem" \
  -echconfig "$tmp/ech.list" -echkey "$tmp/ech.key" & pids+=($!)
ip netns exec "$ns_s" openssl s_server -quiet -accept 4433 -cert "$tmp/cert.pem" -key "$tmp/key.pem" -www & pids+=($!)
wait_listen 443; wait_listen 8443; wait_listen 4433
ip netns exec "$ns_s" tcpdump -q -n -i "$if_s" -s 0 -w "$out/tls.pcap" tcp 2>/dev/null & pids+=($!)
wait_pcap "$out/tls.pcap"
sleep 0.3
c() { ip netns exec "$ns_c" timeout 20 "$@" >/dev/null 2>&1 || echo "client failed: $*" >&2; }
curl=(curl -sk --max-time 15 -o /dev/null)
c "${curl[@]}" --tlsv1.3 --resolve www.example.com:443:192.0.2.1 https://www.example.com/
c "${curl[@]}" --tlsv1.2 --tls-max 1.2 --resolve tls12.example.net:4433:192.0.2.1 https://tls12.example.net:4433/
c "${curl[@]}" https://192.0.2.1/
c "${curl[@]}" -6 --resolve 'v6.example.org:443:[2001:db8::1]' https://v6.example.org/
c "$tmp/tlshello" client -get -addr 192.0.2.1:8443 -name big.example
c "$tmp/tlshello" client -get -addr 192.0.2.1:8443 -name secret.example -echconfig "$tmp/ech.list"
c "${curl[@]}" --tlsv1.3 --resolve www.example.com:443:192.0.2.1 https://www.example.com/again
sleep 1
kill -INT "${pids[3]}"; wait "${pids[3]}" 2>/dev/null || true
cat > "$out/tls.records" <<'RECORDS'
tls https://www.example.com/
tls https://tls12.example.net:4433/
tls https://192.0.2.1/
tls https://v6.example.org/
tls https://big.example:8443/
tls https://public.example:8443/ ech
tls https://www.example.com/
RECORDS
echo "wrote $out/tls.pcap: $(stat -c %s "$out/tls.pcap") bytes" >&2
