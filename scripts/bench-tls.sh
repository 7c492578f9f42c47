#!/usr/bin/env bash
# Times `urldedupd replay --dry-run` against tshark on a TLS-heavy capture
# (scripts/tlscapture: 100,000 TLS connections by default), the two
# alternating in one run, RUNS times each, and checks that both find the
# same ClientHellos: the same count (also the one tlscapture reports) and
# the same set of server names.
#
# urldedupd runs with --json, printing every hello with its SNI as tshark
# prints every hello's SNI; each of its runs starts from a state made by
# `init` just before (not timed). tshark gets -d for the TLS ports it does
# not read as TLS by itself (without it, a client port such as 34980,
# EtherCAT's, wins and the hello is missed).
#
# Usage: scripts/bench-tls.sh [CAPTURE.pcap]   (default: make one)
# Env: RUNS (3), N (100000 connections), NAMES (3000 distinct SNIs), SEED (1).
# Output: markdown tables on stdout, for docs/BENCHMARKS.md; exit status 1
# when the two tools disagree.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${RUNS:-3} n=${N:-100000} names=${NAMES:-3000} seed=${SEED:-1}
need=()
for pair in tshark:tshark capinfos:tshark; do
  command -v "${pair%%:*}" >/dev/null || need+=("${pair#*:}")
done
[ -x /usr/bin/time ] || need+=(time)
if [ ${#need[@]} -gt 0 ]; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi
work=$(mktemp -d /var/tmp/urldedupd-bench-tls.XXXXXX)
trap 'rm -rf "$work"' EXIT
go build -o "$work/urldedupd" ./cmd/urldedupd
go build -o "$work/tlscapture" ./scripts/tlscapture
cap=${1:-} expect=
if [ -z "$cap" ]; then
  cap=$work/tls.pcap
  "$work/tlscapture" -o "$cap" -n "$n" -names "$names" -seed "$seed" 2> "$work/gen"
  cat "$work/gen" >&2
  expect=$n
fi
cat "$cap" > /dev/null
mb=$(du -m "$cap" | cut -f1)
pkts=$(capinfos -c -M "$cap" | awk -F: '/Number of packets/ {gsub(/ /,"",$2); print $2}')
tshark_args=(-n -r "$cap" -d tcp.port==8443,tls -d tcp.port==4433,tls -d tcp.port==10443,tls
  -Y tls.handshake.type==1 -T fields -e tls.handshake.extensions_server_name)

# timed NAME OUT CMD...: runs CMD with stdout to OUT (stderr to OUT.err)
# under /usr/bin/time; prints a table row and appends "TOOL SECS USER SYS"
# to $work/secs (NAME is "TOOL RUN").
timed() {
  local name=$1 out=$2; shift 2
  /usr/bin/time -f "%e %U %S %M" -o "$work/time" "$@" > "$out" 2> "$out.err" || {
    echo "$name failed:" >&2; tail -n 5 "$out.err" >&2; exit 1; }
  read -r secs user sys kb < <(tail -n 1 "$work/time")
  echo "${name% *} $secs $user $sys" >> "$work/secs" # the tool, without the run number
  awk -v n="$name" -v s="$secs" -v u="$user" -v y="$sys" -v kb="$kb" -v mb="$mb" -v p="$pkts" 'BEGIN {
    printf "| %s | %.2f | %.2f | %.0f | %.0f | %d |\n", n, s, u+y, mb/s, p/s, kb/1024 }'
}

echo "Capture: $cap, $mb MB, $pkts packets; $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); $(date -u +%F)"
[ -n "$expect" ] && echo && sed 's/^tlscapture: [^:]*: //' "$work/gen"
echo
echo "| run | seconds | CPU seconds (user+sys) | MB/s | packets/s | peak RSS (MiB) |"
echo "|---|---|---|---|---|---|"
for i in $(seq "$runs"); do
  rm -rf "$work/state"
  "$work/urldedupd" --dir "$work/state" init > /dev/null # a fresh state, not timed
  timed "urldedupd $i" "$work/u$i" "$work/urldedupd" --dir "$work/state" replay --dry-run --json "$cap"
  timed "tshark $i" "$work/t$i" tshark "${tshark_args[@]}"
done

echo
awk 'function median(a, n,   i, j, x) { # insertion sort, then the middle
    for (i = 2; i <= n; i++) { x = a[i]; for (j = i - 1; j > 0 && a[j] > x; j--) a[j + 1] = a[j]; a[j + 1] = x }
    return a[int((n + 1) / 2)] }
  { s[$1] = s[$1] " " $2; c[$1] = c[$1] " " $3 + $4 } END {
  n = split(s["urldedupd"], u, " "); split(s["tshark"], t, " ")
  split(c["urldedupd"], cu, " "); split(c["tshark"], ct, " ")
  for (i = 1; i <= n; i++) {
    r[i] = t[i] / u[i]; rc[i] = ct[i] / cu[i]
    line = line sprintf("%s%.1f×", i > 1 ? ", " : "", r[i])
    linec = linec sprintf("%s%.1f×", i > 1 ? ", " : "", rc[i])
  }
  printf "tshark / urldedupd, wall clock, each run: %s (median %.1f×)\n", line, median(r, n)
  printf "tshark / urldedupd, CPU time, each run: %s (median %.1f×)\n", linec, median(rc, n)
}' "$work/secs"

# Both tools must find the same hellos: count and set of server names.
bad=0
uh=$(grep -c '"proto":"tls"' "$work/u1" || true)
us=$(grep -o '"records":{[^}]*}' "$work/u1.err" | grep -o '"tls":[0-9]*' | cut -d: -f2)
th=$(wc -l < "$work/t1")
sed -n 's/.*"sni":"\([^"]*\)".*/\1/p' "$work/u1" | sort -u > "$work/u.sni"
grep . "$work/t1" | sort -u > "$work/t.sni" || true
echo
echo "ClientHellos found: urldedupd $uh records ($us in its summary; $(grep -o '"tls_hellos_without_sni":[0-9]*' "$work/u1.err" | cut -d: -f2) without SNI), tshark $th (of them $(grep -c '^$' "$work/t1" || true) without SNI)${expect:+, made $expect}"
echo "Distinct server names: urldedupd $(wc -l < "$work/u.sni"), tshark $(wc -l < "$work/t.sni")"
if [ "$uh" != "$th" ] || [ "$us" != "$th" ] || { [ -n "$expect" ] && [ "$th" != "$expect" ]; }; then
  echo "MISMATCH: the counts differ"; bad=1
fi
if ! cmp -s "$work/u.sni" "$work/t.sni"; then
  echo "MISMATCH: the sets of server names differ:"; diff "$work/u.sni" "$work/t.sni" | head -n 20; bad=1
fi
for i in $(seq 2 "$runs"); do # every run found the same
  cmp -s <(sort "$work/t1") <(sort "$work/t$i") || { echo "MISMATCH: tshark run $i differs from run 1"; bad=1; }
  [ "$(grep -c '"proto":"tls"' "$work/u$i")" = "$uh" ] || { echo "MISMATCH: urldedupd run $i differs from run 1"; bad=1; }
done
[ "$bad" = 0 ] && echo "Same hellos and same server names in both tools."
exit "$bad"
