#!/usr/bin/env bash
# The false-duplicate rate of a state at a given load, measured: insert N
# distinct URLs with `filter`, then ask about Q other distinct URLs with
# `filter --dry-run` and count how many it calls duplicates. Every one of
# them is a false duplicate (the query URLs were never inserted), so the
# rate is dup/Q; it is printed with its 95% interval (Wilson score; exact
# Clopper-Pearson when no duplicate was seen) next to what the layout's
# model predicts and what `stats` computes from the state's measured fill.
# The insert phase's own duplicates are false too (its URLs are distinct)
# and are printed as well. For the keyed layout the script also prints the
# URLs not stored while inserting (new URLs that found both buckets full:
# answered new but not stored, so "new" minus the slots used), and the
# not-stored chance and full-bucket fraction `stats` reports afterwards,
# each next to the model's (scripts/keyedsim, internal/keyed Predict).
#
# Usage: scripts/bench-capacity.sh            # bitmap, N = 10M and 100M, Q = 100M
#   LAYOUT="bitmap keyed"    layouts to measure, one after the other (init --layout)
#   NS="10000000 100000000"  loads to measure, one fresh state each
#   QUERIES=100000000        query URLs per load (ids N .. N+Q-1, none inserted)
#   SIZE=BYTES               passed as `init --size` (e.g. 8GiB; keyed only)
#   INIT_ARGS="..."          any other init arguments (e.g. --capacity N)
#   WORK=/var/tmp            where the state goes (SIZE bytes, 512 MiB by default)
#
# Examples (the runs in docs/BENCHMARKS.md):
#   LAYOUT="bitmap keyed" bash scripts/bench-capacity.sh
#   WORK=/dev/shm LAYOUT=keyed SIZE=8GiB NS=1000000000 bash scripts/bench-capacity.sh
# A state larger than the kernel's dirty-page limits (20%/10% of available
# memory by default) on a disk is throttled to the disk's write-back of
# random pages (an 8 GiB state took ~1,200 new URLs/s on the bench VM's
# ext4); tmpfs (WORK=/dev/shm, which needs SIZE of free memory) has no
# write-back. See docs/operations.md.
#
# URLs are made by scripts/genurls -dup 0 (ids 0..N-1 inserted, N..N+Q-1
# queried: distinct ids make distinct URLs) and streamed through pipes;
# nothing but the state is written to disk.
# Output: a markdown table on stdout, ready for docs/BENCHMARKS.md.
set -euo pipefail
cd "$(dirname "$0")/.."
ns=${NS:-10000000 100000000}
queries=${QUERIES:-100000000}
layouts=${LAYOUT:-bitmap}

work=$(mktemp -d "${WORK:-/var/tmp}/urldedupd-capacity.XXXXXX")
trap 'rm -rf "$work"' EXIT
go build -o "$work/urldedupd" ./cmd/urldedupd
go build -o "$work/genurls" ./scripts/genurls

go build -o "$work/keyedsim" ./scripts/keyedsim

has_layout=false
"$work/urldedupd" init --help | grep -q -- '--layout' && has_layout=true

# summary FILE: "lines new dup" from filter -v's summary line on stderr.
summary() {
  sed -n 's/^lines \([0-9]*\)  new \([0-9]*\)  dup \([0-9]*\) .*/\1 \2 \3/p' "$1" | tail -1
}

# stats FIELD...: fields of `stats --json` on one line, "-" where the layout has none.
stats() {
  "$work/urldedupd" --dir "$work/state" stats --json |
    python3 -c 'import json,sys; d=json.load(sys.stdin); print(*("-" if d.get(k) is None else d[k] for k in sys.argv[1:]))' "$@"
}

echo "Queries: $queries other distinct URLs per load; SIZE=${SIZE:-default}; INIT_ARGS=${INIT_ARGS:-none};"
echo "$(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(free -g | awk '/^Mem:/{print $2}') GiB; $(date -u '+%F %H:%M UTC')"
echo
echo "| layout, size | N inserted | insert: false dups (model) | insert: not stored (model) | insert s | query dups / Q | false-dup rate [95% CI] | model | from measured fill (stats) | stats: full buckets; not-stored chance (model) | query s |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
for layout in $layouts; do
  init=(init)
  if $has_layout; then
    init+=(--layout "$layout")
  elif [ "$layout" != bitmap ]; then
    echo "bench-capacity: this urldedupd has no init --layout; only LAYOUT=bitmap works" >&2
    exit 2
  fi
  [ -n "${SIZE:-}" ] && init+=(--size "$SIZE")
  # shellcheck disable=SC2206 # INIT_ARGS is split on purpose
  [ -n "${INIT_ARGS:-}" ] && init+=($INIT_ARGS)
  for n in $ns; do
    rm -rf "$work/state"
    "$work/urldedupd" --dir "$work/state" "${init[@]}" > /dev/null
    read -r bytes <<< "$(stats state_bytes)"
    model="- - -"
    if [ "$layout" = keyed ]; then
      # false dup, not-stored chance, fraction lost so far, from Predict at this load.
      model=$("$work/keyedsim" -state-mib $((bytes >> 20)) -loads "$n" -measure-up-to 0 |
        awk -v n="$n" '$1 == n { print $2, $3, $4 }')
    fi
    t0=$(date +%s.%N)
    "$work/genurls" -n "$n" -dup 0 | "$work/urldedupd" --dir "$work/state" filter -v > /dev/null 2> "$work/ins"
    t1=$(date +%s.%N)
    read -r ilines inew idup <<< "$(summary "$work/ins")"
    [ "$ilines" = "$n" ] || { echo "insert: $ilines lines of $n" >&2; cat "$work/ins" >&2; exit 1; }
    read -r chance used full notstored <<< "$(stats false_duplicate_chance slots_used full_buckets_ratio not_stored_chance)"
    t2=$(date +%s.%N)
    "$work/genurls" -n "$queries" -dup 0 -start "$n" | "$work/urldedupd" --dir "$work/state" filter --dry-run -v > /dev/null 2> "$work/q"
    t3=$(date +%s.%N)
    read -r qlines _ qdup <<< "$(summary "$work/q")"
    [ "$qlines" = "$queries" ] || { echo "query: $qlines lines of $queries" >&2; cat "$work/q" >&2; exit 1; }
    python3 - "$layout" "$bytes" "$n" "$inew" "$idup" "$qdup" "$queries" "$chance" "$used" "$full" "$notstored" $model "$t0" "$t1" "$t2" "$t3" <<'PY'
import math, sys
a = sys.argv[1:]
layout, size = a[0], int(a[1])
n, inew, idup, qdup, q = map(int, a[2:7])
chance, used, full, notstored, m_fd, m_ns, m_lost = a[7:14]
t0, t1, t2, t3 = map(float, a[14:18])
fmt = lambda x: "%.3g" % x
p = qdup / q
if qdup == 0:
    # Exact (Clopper-Pearson) 95%: the upper bound solves (1-p)^q = 0.025.
    lo, hi = 0.0, -math.expm1(math.log(0.025) / q)
else:
    z = 1.959963984540054  # Wilson score interval, 95%
    den = 1 + z * z / q
    mid = (p + z * z / (2 * q)) / den
    half = z * math.sqrt(p * (1 - p) / q + z * z / (4 * q * q)) / den
    lo, hi = max(0.0, mid - half), min(1.0, mid + half)
if layout == "bitmap":
    # n distinct URLs leave 2^32(1 - e^(-n/2^32)) bits set in expectation,
    # so the insert phase loses n minus that many; the next new URL is a
    # false duplicate with chance (bits set)/2^32.
    M = 2.0 ** 32
    m_idup = "%s" % f"{n - M * (-math.expm1(-n / M)):,.0f}"
    m_rate = -math.expm1(-n / M)
    stored = "-"
    fullcol = "-"
else:
    m_rate = float(m_fd)
    # Insert false dups: the integral of the model's rate over the load; the
    # rate grows about linearly with the mean occupancy, so about n·rate/2.
    m_idup = "≈ %s" % fmt(n * m_rate / 2)
    stored = f"{inew - int(used):,} ({float(m_lost) * n:,.0f})"
    fullcol = f"{fmt(float(full))}; {fmt(float(notstored))} ({fmt(float(m_ns))})"
chance = "-" if chance == "-" else fmt(float(chance))
print(f"| {layout}, {size >> 20} MiB | {n:,} | {idup:,} ({m_idup}) | {stored} | {t1 - t0:.0f} | {qdup:,} / {q:,} "
      f"| {fmt(p)} [{fmt(lo)}, {fmt(hi)}] | {fmt(m_rate)} | {chance} | {fullcol} | {t3 - t2:.0f} |")
PY
  done
done
echo
echo "Model: bitmap 1 - e^(-n/2³²); keyed internal/keyed Predict(n / buckets).FalseDup() (scripts/keyedsim)."
echo "From measured fill: \`stats\`' false_duplicate_chance on the state the queries ran against."
