# Sourced by the capture scripts: two network namespaces joined by a veth
# pair, server 192.0.2.1 / 2001:db8::1 and client 192.0.2.2 / 2001:db8::2
# (TEST-NET-1 and the IPv6 documentation prefix, inside the namespaces
# only), with segmentation offloads off so frames are MTU-sized as on a
# mirror port. Sets ns_s, ns_c, if_s; netns_down removes everything.
netns_up() {
  local id=udd$$
  ns_s=$id-s ns_c=$id-c if_s=$id-a
  local if_c=$id-b
  ip netns add "$ns_s"
  ip netns add "$ns_c"
  ip link add "$if_s" type veth peer name "$if_c"
  ip link set "$if_s" netns "$ns_s"
  ip link set "$if_c" netns "$ns_c"
  ip -n "$ns_s" addr add 192.0.2.1/24 dev "$if_s"
  ip -n "$ns_c" addr add 192.0.2.2/24 dev "$if_c"
  ip -n "$ns_s" addr add 2001:db8::1/64 dev "$if_s" nodad
  ip -n "$ns_c" addr add 2001:db8::2/64 dev "$if_c" nodad
  ip -n "$ns_s" link set lo up
  ip -n "$ns_c" link set lo up
  ip -n "$ns_s" link set "$if_s" up
  ip -n "$ns_c" link set "$if_c" up
  if command -v ethtool >/dev/null; then
    ip netns exec "$ns_s" ethtool -K "$if_s" tso off gso off gro off >/dev/null 2>&1 || true
    ip netns exec "$ns_c" ethtool -K "$if_c" tso off gso off gro off >/dev/null 2>&1 || true
  fi
}

netns_down() {
  ip netns del "$ns_s" 2>/dev/null || true
  ip netns del "$ns_c" 2>/dev/null || true
}

# wait_listen PORT: until the server listens (bounded: 10 s).
wait_listen() {
  for _ in $(seq 100); do
    ip netns exec "$ns_s" ss -ltnH "sport = :$1" | grep -q LISTEN && return 0
    sleep 0.1
  done
  echo "server on port $1 did not start" >&2
  return 1
}

# wait_pcap FILE...: until each recorder has written its file header.
wait_pcap() {
  for f in "$@"; do
    for _ in $(seq 100); do
      [ "$(stat -c %s "$f" 2>/dev/null || echo 0)" -ge 24 ] && break
      sleep 0.1
    done
  done
}
