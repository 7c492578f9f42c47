#!/usr/bin/env bash
# The keyed layout's speed against the bitmap's, in one run, in alternating
# rounds (the machine is shared: compare within a round, report ratios):
#
#   1. `filter` on the 10M-line bench file (scripts/genurls, as
#      bench-filter.sh makes it: 30% repeats) into a fresh 512 MiB state of
#      each layout, then again over the full state (every line a
#      duplicate); wall and CPU (user+sys) seconds of the whole command.
#   2. Micro-benchmarks, one test binary at a time, alternating: the keyed
#      hash of a 55-byte URL (internal/keyed BenchmarkHash), keyed batch
#      decisions (BenchmarkDecideBatch) against bitcheck's
#      (BenchmarkTestAndSetBatch), and keyed PRF candidates
#      (scripts/prfbench, a module of its own).
#
# Usage: scripts/bench-keyed.sh            # ROUNDS=5 LINES=10000000
#   ROUNDS=N  rounds of each; LINES=N  lines in the filter input;
#   MICRO=0   skips the micro-benchmarks;  BENCHTIME=0.5s  each benchmark's time;
#   WORK=/var/tmp  where states go
# Output: markdown tables on stdout (medians over the rounds, and the median
# of the per-round keyed/bitmap ratios); raw figures in $OUT (default: a
# temporary directory, removed) when OUT is set.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${ROUNDS:-5}
lines=${LINES:-10000000}

[ -x /usr/bin/time ] || { apt-get update -qq && apt-get install -y -qq time >/dev/null; }

work=$(mktemp -d "${WORK:-/var/tmp}/urldedupd-keyed.XXXXXX")
trap 'rm -rf "$work"' EXIT
out=${OUT:-$work/raw}
mkdir -p "$out"
go build -o "$work/urldedupd" ./cmd/urldedupd
go build -o "$work/genurls" ./scripts/genurls
"$work/genurls" -n "$lines" > "$work/urls.txt"
cat "$work/urls.txt" > /dev/null # into the page cache

echo "$(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(free -g | awk '/^Mem:/{print $2}') GiB; $(date -u '+%F %H:%M UTC'); load $(cut -d' ' -f1-3 /proc/loadavg); $rounds rounds"
echo

# run LAYOUT PHASE: one timed filter; appends "layout phase wall cpu lines" to $out/filter.
run() {
  /usr/bin/time -f "%e %U %S" -o "$work/time" "$work/urldedupd" --dir "$work/state-$1" filter "$work/urls.txt" > "$work/out"
  read -r wall user sys < "$work/time"
  echo "$1 $2 $wall $(awk -v u="$user" -v s="$sys" 'BEGIN{print u + s}') $(wc -l < "$work/out")" >> "$out/filter"
}

: > "$out/filter"
for r in $(seq 1 "$rounds"); do
  order="bitmap keyed"; [ $((r % 2)) = 0 ] && order="keyed bitmap"
  for layout in $order; do
    rm -rf "$work/state-$layout"
    "$work/urldedupd" --dir "$work/state-$layout" init --layout "$layout" > /dev/null
    run "$layout" new
    run "$layout" dup
    rm -rf "$work/state-$layout"
  done
done

python3 - "$out/filter" "$lines" <<'PY'
import statistics as st, sys
rows = [l.split() for l in open(sys.argv[1])]
lines = int(sys.argv[2])
def col(layout, phase, i):
    return [float(r[i]) for r in rows if r[0] == layout and r[1] == phase]
print(f"`filter` on {lines:,} lines (bench file), fresh 512 MiB state each round; medians (min–max):")
print()
print("| phase | bitmap wall s | keyed wall s | keyed/bitmap wall (median of rounds) | bitmap CPU s | keyed CPU s | keyed/bitmap CPU | lines out bitmap / keyed |")
print("|---|---|---|---|---|---|---|---|")
for phase, name in (("new", "new state"), ("dup", "second run: all dup")):
    bw, kw = col("bitmap", phase, 2), col("keyed", phase, 2)
    bc, kc = col("bitmap", phase, 3), col("keyed", phase, 3)
    bo = {r[4] for r in rows if r[0] == "bitmap" and r[1] == phase}
    ko = {r[4] for r in rows if r[0] == "keyed" and r[1] == phase}
    rw = st.median(k / b for k, b in zip(kw, bw))
    rc = st.median(k / b for k, b in zip(kc, bc))
    f = lambda v: f"{st.median(v):.2f} ({min(v):.2f}–{max(v):.2f})"
    print(f"| {name} | {f(bw)} | {f(kw)} | {rw:.2f}× | {f(bc)} | {f(kc)} | {rc:.2f}× | {'/'.join(sorted(bo))} / {'/'.join(sorted(ko))} |")
PY

[ "${MICRO:-1}" = 0 ] && exit 0
go test -c -o "$work/keyed.test" ./internal/keyed
go test -c -o "$work/bitcheck.test" ./internal/bitcheck
(cd scripts/prfbench && go test -c -o "$work/prf.test" .)
: > "$out/keyed.txt"; : > "$out/bitcheck.txt"; : > "$out/prf.txt"
for r in $(seq 1 "$rounds"); do
  (cd internal/keyed && "$work/keyed.test" -test.run '^$' -test.bench 'Hash|DecideBatch' -test.benchmem -test.benchtime "${BENCHTIME:-0.5s}" >> "$out/keyed.txt")
  (cd internal/bitcheck && "$work/bitcheck.test" -test.run '^$' -test.bench 'TestAndSetBatch' -test.benchmem -test.benchtime "${BENCHTIME:-0.5s}" >> "$out/bitcheck.txt")
  (cd scripts/prfbench && "$work/prf.test" -test.run '^$' -test.bench . -test.benchmem -test.benchtime "${BENCHTIME:-0.5s}" >> "$out/prf.txt")
done

python3 - "$out/keyed.txt" "$out/bitcheck.txt" "$out/prf.txt" <<'PY'
import re, statistics as st, sys
res = {}
for path in sys.argv[1:]:
    for l in open(path):
        m = re.match(r"^(Benchmark\S+?)(-\d+)?\s+\d+\s+([\d.]+) ns/op(.*)$", l)
        if not m:
            continue
        name, ns, rest = m.group(1), float(m.group(3)), m.group(4)
        u = re.search(r"([\d.]+) ns/URL", rest)  # batch benchmarks report per URL
        a = re.search(r"(\d+) allocs/op", rest)
        res.setdefault(name, []).append((float(u.group(1)) if u else ns, a.group(1) if a else "-"))
print()
print("Micro-benchmarks, ns per URL, median (min–max) over the rounds:")
print()
print("| benchmark | ns/URL | allocs/op |")
print("|---|---|---|")
for name, v in res.items():
    ns = [x for x, _ in v]
    print(f"| {name} | {st.median(ns):.1f} ({min(ns):.1f}–{max(ns):.1f}) | {v[0][1]} |")
PY
