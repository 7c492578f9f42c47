#!/usr/bin/env bash
# Makes the project's STARTTLS test capture from real clients, in two
# network namespaces joined by a veth pair (scripts/netns.sh): openssl
# s_client -starttls for SMTP, IMAP, POP3, FTP, XMPP, LDAP, PostgreSQL and
# MySQL, curl --ssl-reqd for SMTP, IMAP, POP3 and FTP, psql with
# sslmode=require, and Python's ssl module after an RDP X.224 negotiation
# (no RDP client runs headless here), each on its protocol's usual port
# and some on another port (recognised by content). The server side is
# scripts/starttls-server.py: it answers each client up to its TLS start
# and completes the handshake with Python's ssl. tcpdump records the
# server's veth.
# Needs root, iproute2, tcpdump, openssl, curl, postgresql-client, python3.
#
# Usage: scripts/make-starttls-captures.sh CAPDIR
# Writes CAPDIR/starttls.pcap and CAPDIR/starttls.records: the records it
# must yield, "PROTO METHOD URL" (a TLS record's URL is https://SNI:PORT/),
# one a connection.
set -euo pipefail
caps=${1:?usage: make-starttls-captures.sh CAPDIR}
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
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$tmp/key.pem" -out "$tmp/cert.pem" \
  -subj /CN=starttls.test -days 1 2>/dev/null
netns_up
srv=192.0.2.1
# proto:port, the usual ports and some others.
servers="smtp:25 smtp:587 smtp:2525 imap:143 pop3:110 ftp:21 ftp:2121 xmpp:5222 ldap:389 ldap:1389 postgres:5432 postgres:6543 mysql:3306 rdp:3389 rdp:13389"
ports=()
for sp in $servers; do
  ip netns exec "$ns_s" /usr/bin/python3 "$here/starttls-server.py" "${sp%%:*}" "${sp##*:}" "$tmp/cert.pem" "$tmp/key.pem" & pids+=($!)
  ports+=("${sp##*:}")
done
for p in "${ports[@]}"; do wait_listen "$p"; done
ip netns exec "$ns_s" tcpdump -q -U -n -i "$if_s" -s 0 -w "$caps/starttls.pcap" tcp 2>/dev/null & rec=$!
pids+=($rec)
wait_pcap "$caps/starttls.pcap"
sleep 0.3

records=()
o() { # PROTO PORT NAME [openssl args]: openssl s_client -starttls PROTO
  local proto=$1 port=$2 name=$3; shift 3
  ip netns exec "$ns_c" timeout 15 openssl s_client -connect "$srv:$port" -starttls "$proto" -servername "$name" "$@" \
    </dev/null >/dev/null 2>&1 || true
  records+=("tls https://$name:$port/")
}
u() { # URL NAME PORT: curl --ssl-reqd, NAME resolved to the server
  ip netns exec "$ns_c" curl -sk --ssl-reqd --max-time 10 --resolve "$2:$3:$srv" "$1" >/dev/null 2>&1 || true
  records+=("tls https://$2:$3/")
}
o smtp 25 mx.example
o smtp 2525 other-port.example
o imap 143 imap.example
o pop3 110 pop.example
o ftp 21 ftp.example
o xmpp 5222 chat.example -xmpphost chat.example
o ldap 389 ldap.example
o ldap 1389 ldap-other.example
o postgres 5432 db.example
o mysql 3306 mysql.example
u smtp://submit.example:587/ submit.example 587
u imap://curl-imap.example:143/ curl-imap.example 143
u pop3://curl-pop.example:110/ curl-pop.example 110
u ftp://curl-ftp.example:2121/ curl-ftp.example 2121
ip netns exec "$ns_c" env PGCONNECT_TIMEOUT=10 psql "host=psql.example hostaddr=$srv port=6543 sslmode=require user=u dbname=d" \
  -c 'select 1' >/dev/null 2>&1 || true
records+=("tls https://psql.example:6543/")
for port in 3389 13389; do
  ip netns exec "$ns_c" timeout 15 /usr/bin/python3 - "$srv" "$port" <<'PY' || true
import socket, ssl, struct, sys
s = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=10)
neg = b"\x01\x00\x08\x00" + struct.pack("<I", 1 | 2)  # RDP_NEG_REQ: PROTOCOL_SSL | PROTOCOL_HYBRID
cookie = b"Cookie: mstshash=user\r\n"
x224 = bytes([6 + len(cookie) + len(neg), 0xe0, 0, 0, 0, 0, 0]) + cookie + neg
s.sendall(b"\x03\x00" + struct.pack(">H", 4 + len(x224)) + x224)
hdr = s.recv(4)
s.recv(struct.unpack(">H", hdr[2:])[0] - 4)
ctx = ssl.create_default_context()
ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
t = ctx.wrap_socket(s, server_hostname="rdp.example")
t.close()
PY
  records+=("tls https://rdp.example:$port/")
done
sleep 1
kill -INT $rec
wait $rec 2>/dev/null || true
printf '%s\n' "${records[@]}" > "$caps/starttls.records"
echo "wrote $caps/starttls.pcap and $caps/starttls.records (${#records[@]} connections)"
