#!/usr/bin/env bash
# The Redis de-duplication protocol of Chen and Zhou against urldedupd's own
# design, on the same topology and the same URLs, in one run (issue 23).
#
# Topology: 3 networks x 3 hosts, each network a network namespace, all
# joined through a bridge in a fourth namespace. Every node (3 centres, 9
# hosts) has an address of its own (10.<net>.0.1 the centre, .2-.4 the
# hosts) and its own redis-server. Between networks, every connection goes
# through a proxy adding DELAY each way (default 10 ms, so 20 ms a round
# trip): this kernel has no netem (`tc qdisc add ... netem` answers
# "Specified qdisc kind is unknown"), so scripts/protobench's proxy does
# it in user space. Within a network there is no added delay.
#
# Load (scripts/protobench load): each host's crawler extracts URLS URLs
# (half from pages every network links to, 30% from its own network's,
# 20% its own only), pushed onto the host's URL_pool in batches of 100
# every 100 ms (steady: 1,000 URLs a second a host, 9,000 in all), or all
# at once in batches of 500 (burst: what each design can do).
#
# Designs:
#   protocol   urldedupd protocol centre|host (the paper's, as built), each
#              host's finish_URL a bloom state (capacity 400k, 1e-7);
#   urldedupd  every host decides against one keyed state in network 1's
#              centre Redis (hosts of networks 2 and 3 through the delayed
#              link), with a local cache in front (--local-cache), and adds
#              the new URLs to its task_pool (scripts/protobench host).
# Scenarios: all hosts up; host 10.2.0.3 down (its crawler too).
#
# Output: one markdown row per design and scenario: URLs a second (pushed
# URLs over the time to the last hand-out), distinct URLs, handed out,
# let through twice (in more than one task pool), lost (in none),
# messages and bytes a URL between nodes (the protocol: frames; urldedupd:
# commands and bytes to the shared state's Redis), Redis commands a URL on
# every server, latency from a URL's first push to its first task_pool
# entry (p50, p99).
#
# Usage: sudo scripts/bench-protocol.sh    # URLS=20000 DELAY=10ms DEADLINE=2s MODES="steady burst" DESIGNS="protocol urldedupd"
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH=/usr/local/go/bin:$PATH
urls=${URLS:-20000}
delay=${DELAY:-10ms}
deadline=${DEADLINE:-2s}
modes=${MODES:-steady burst}
tmp=$(mktemp -d /tmp/bench-protocol.XXXXXX)
id=upb$$
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  for f in "$tmp"/redis-*.pid; do [ -f "$f" ] && kill -9 "$(cat "$f")" 2>/dev/null || true; done
  for n in w 1 2 3; do ip netns del "$id-$n" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT
trap "exit 130" INT TERM

go build -o "$tmp/urldedupd" ./cmd/urldedupd
go build -o "$tmp/protobench" ./scripts/protobench
ud=$tmp/urldedupd
pb=$tmp/protobench

# Namespaces and addresses.
ip netns add "$id-w"
ip -n "$id-w" link set lo up
ip -n "$id-w" link add br0 type bridge
ip -n "$id-w" link set br0 up
ip -n "$id-w" addr add 10.255.0.1/8 dev br0
nodes=()
for n in 1 2 3; do
  ns=$id-$n
  ip netns add "$ns"
  ip -n "$ns" link set lo up
  ip link add "$id-${n}a" netns "$ns" type veth peer name "$id-${n}b" netns "$id-w"
  ip -n "$id-w" link set "$id-${n}b" master br0
  ip -n "$id-w" link set "$id-${n}b" up
  ip -n "$ns" link set "$id-${n}a" up
  for k in 1 2 3 4; do
    ip -n "$ns" addr add "10.$n.0.$k/8" dev "$id-${n}a"
    nodes+=("10.$n.0.$k")
  done
done
nsof() { echo "$id-$(echo "$1" | cut -d. -f2)"; }

# A redis-server a node.
for a in "${nodes[@]}"; do
  mkdir -p "$tmp/r-$a"
  ip netns exec "$(nsof "$a")" redis-server --bind "$a" --port 6379 --save "" --appendonly no \
    --protected-mode no --dir "$tmp/r-$a" --daemonize yes --pidfile "$tmp/redis-$a.pid" \
    --logfile "$tmp/r-$a/log"
done
for a in "${nodes[@]}"; do
  for i in $(seq 100); do
    [ "$(ip netns exec "$(nsof "$a")" redis-cli -h "$a" ping 2>/dev/null)" = PONG ] && break
    sleep 0.1
  done
done

# The delayed links: in each network, a proxy to each other network's
# centre (port 7000+m); the topology each network reads names them.
for n in 1 2 3; do
  for m in 1 2 3; do
    [ "$n" = "$m" ] && continue
    ip netns exec "$id-$n" "$pb" proxy -listen "127.0.0.1:700$m" -to "10.$m.0.1:6379" -delay "$delay" &
    pids+=($!)
  done
done
for n in 1 2 3; do
  {
    printf '{"deadline":"%s","networks":[' "$deadline"
    for m in 1 2 3; do
      [ "$m" = 1 ] || printf ','
      if [ "$n" = "$m" ]; then c="redis://10.$m.0.1:6379/0"; else c="redis://127.0.0.1:700$m/0"; fi
      printf '{"name":"n%s","centre":{"ip":"10.%s.0.1","redis":"%s"},"hosts":[' "$m" "$m" "$c"
      for k in 2 3 4; do
        [ "$k" = 2 ] || printf ','
        printf '{"ip":"10.%s.0.%s","redis":"redis://10.%s.0.%s:6379/0"}' "$m" "$k" "$m" "$k"
      done
      printf ']}'
    done
    printf ']}\n'
  } > "$tmp/net$n.json"
done
# The shared state of urldedupd's design, as each network reaches it.
shared() { if [ "$1" = 1 ]; then echo "redis://10.1.0.1:6379/1"; else echo "redis://127.0.0.1:7001/1"; fi; }

hostlist=""
for a in "${nodes[@]}"; do
  case $a in *.1) ;; *) hostlist+="${hostlist:+,}$a=redis://$a:6379/0" ;; esac
done

flushall() {
  for a in "${nodes[@]}"; do
    ip netns exec "$(nsof "$a")" redis-cli -h "$a" flushall >/dev/null
    ip netns exec "$(nsof "$a")" redis-cli -h "$a" config resetstat >/dev/null
  done
}
sumstat() { # the sum of an INFO stats field over every server
  local s=0 v
  for a in "${nodes[@]}"; do
    v=$(ip netns exec "$(nsof "$a")" redis-cli -h "$a" info stats | tr -d '\r' | sed -n "s/^$1://p")
    s=$((s + v))
  done
  echo "$s"
}
stat1() { ip netns exec "$id-1" redis-cli -h 10.1.0.1 info stats | tr -d '\r' | sed -n "s/^$1://p"; }

run() { # design scenario mode
  local design=$1 scenario=$2 mode=$3 down="" nodepids=() every=100ms batch=100
  [ "$scenario" = "host down" ] && down=10.2.0.3
  [ "$mode" = burst ] && every=0s batch=500
  flushall
  rm -rf "$tmp/s" && mkdir -p "$tmp/s"
  for a in "${nodes[@]}"; do
    [ "$a" = "$down" ] && continue
    local n ns
    n=$(echo "$a" | cut -d. -f2) ns=$(nsof "$a")
    case $design in
    protocol)
      case $a in
      *.1) ip netns exec "$ns" "$ud" protocol centre --topology "$tmp/net$n.json" --ip "$a" 2>"$tmp/s/$a.log" & ;;
      *)
        "$ud" -d "$tmp/s/f-$a" init --layout bloom --capacity 400000 --false-dup 1e-7 >/dev/null
        ip netns exec "$ns" "$ud" -d "$tmp/s/f-$a" protocol host --topology "$tmp/net$n.json" --ip "$a" 2>"$tmp/s/$a.log" & ;;
      esac ;;
    urldedupd)
      case $a in
      *.1) continue ;;
      *)
        if [ ! -e "$tmp/s/shared" ]; then
          ip netns exec "$id-1" "$ud" --backend redis://10.1.0.1:6379/1 --redis-prefix shared init --layout keyed >/dev/null
          touch "$tmp/s/shared"
        fi
        ip netns exec "$ns" "$pb" host -redis "redis://$a:6379/0" -state "$(shared "$n")" -cache "$tmp/s/c-$a" 2>"$tmp/s/$a.log" & ;;
      esac ;;
    esac
    nodepids+=($!)
    pids+=($!)
  done
  # Every node says it is up (its state open) before the load starts.
  for f in "$tmp"/s/*.log; do
    for i in $(seq 600); do [ -s "$f" ] && break; sleep 0.1; done
  done
  sleep 1 # and its groups made
  local c0 s0 i0 o0
  c0=$(sumstat total_commands_processed) s0=$(stat1 total_commands_processed)
  i0=$(stat1 total_net_input_bytes) o0=$(stat1 total_net_output_bytes)
  local res
  res=$(ip netns exec "$id-w" "$pb" load -hosts "$hostlist" -down "$down" -urls "$urls" -every "$every" -batch "$batch")
  local c1 s1 i1 o1
  c1=$(sumstat total_commands_processed) s1=$(stat1 total_commands_processed)
  i1=$(stat1 total_net_input_bytes) o1=$(stat1 total_net_output_bytes)
  for p in "${nodepids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${nodepids[@]}"; do wait "$p" 2>/dev/null || true; done
  local msgs bytes
  if [ "$design" = protocol ]; then
    msgs=$(cat "$tmp"/s/*.log | awk -F'\t' '$1=="frames_sent"{s+=$2} END{print s+0}')
    bytes=$(cat "$tmp"/s/*.log | awk -F'\t' '$1=="bytes_sent"{s+=$2} END{print s+0}')
    deadlines=$(cat "$tmp"/s/*.log | awk -F'\t' '$1=="deadlines"{s+=$2} END{print s+0}')
  else
    msgs=$((s1 - s0)) bytes=$(((i1 - i0) + (o1 - o0))) deadlines=-
  fi
  echo "$res" | python3 -c '
import json, sys
r = json.load(sys.stdin)
design, scenario, mode, msgs, byts, cmds, dls = sys.argv[1:8]
n = r["urls_pushed"]
print("| %s | %s | %s | %.0f | %d | %d | %d | %d | %.2f | %.0f | %.2f | %s | %.0f | %.0f |" % (
    design, scenario, mode, r["urls_per_s"], r["distinct"], r["handed_out"], r["twice"], r["lost"],
    int(msgs) / n, int(byts) / n, int(cmds) / n, dls, r["latency_p50_ms"], r["latency_p99_ms"]))
' "$design" "$scenario" "$mode" "$msgs" "$bytes" "$((c1 - c0))" "$deadlines"
}

echo "bench-protocol.sh: $(date -u +%F), $(nproc) cores, URLS=$urls a host, DELAY=$delay each way between networks, DEADLINE=$deadline"
echo
echo "| design | scenario | load | URLs/s | distinct | handed out | twice | lost | messages/URL | bytes/URL | Redis commands/URL | deadlines | p50 ms | p99 ms |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
for mode in $modes; do
  for scenario in "all up" "host down"; do
    for design in ${DESIGNS:-protocol urldedupd}; do
      run "$design" "$scenario" "$mode"
    done
  done
done
