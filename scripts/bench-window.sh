#!/usr/bin/env bash
# The windowed keyed layout's speed against the plain keyed layout's, in one
# run, in alternating rounds (the machine is shared: compare within a round,
# report ratios):
#
#   `filter` on the 10M-line bench file (scripts/genurls, 30% repeats) into
#   a fresh state of each layout with the same bucket area (512 MiB:
#   `init --layout keyed` and `init --layout keyed --window 30d
#   --generations 6`), then again over the full state (every line a
#   duplicate); wall and CPU (user+sys) seconds of the whole command.
#
# The target of issue 21: keyed-window ≤ 1.3× keyed's time.
#
# Usage: scripts/bench-window.sh            # ROUNDS=3 LINES=10000000
#   ROUNDS=N rounds; LINES=N lines in the input; WORK=/var/tmp where states go.
# Output: a markdown table on stdout (medians over the rounds and the median
# of the per-round ratios).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${ROUNDS:-3}
lines=${LINES:-10000000}

[ -x /usr/bin/time ] || { apt-get update -qq && apt-get install -y -qq time >/dev/null; }

work=$(mktemp -d "${WORK:-/var/tmp}/urldedupd-window.XXXXXX")
trap 'rm -rf "$work"' EXIT
out=$work/raw
mkdir -p "$out"
go build -o "$work/urldedupd" ./cmd/urldedupd
go build -o "$work/genurls" ./scripts/genurls
"$work/genurls" -n "$lines" > "$work/urls.txt"
cat "$work/urls.txt" > /dev/null # into the page cache

echo "$(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(free -g | awk '/^Mem:/{print $2}') GiB; $(date -u '+%F %H:%M UTC'); load $(cut -d' ' -f1-3 /proc/loadavg); $rounds rounds"
echo

# run NAME PHASE: one timed filter; appends "name phase wall cpu lines" to $out/filter.
run() {
  /usr/bin/time -f "%e %U %S" -o "$work/time" "$work/urldedupd" --dir "$work/state-$1" filter "$work/urls.txt" > "$work/out"
  read -r wall user sys < "$work/time"
  echo "$1 $2 $wall $(awk -v u="$user" -v s="$sys" 'BEGIN{print u + s}') $(wc -l < "$work/out")" >> "$out/filter"
}

: > "$out/filter"
for r in $(seq 1 "$rounds"); do
  order="keyed window"; [ $((r % 2)) = 0 ] && order="window keyed"
  for name in $order; do
    rm -rf "$work/state-$name"
    if [ "$name" = window ]; then
      "$work/urldedupd" --dir "$work/state-$name" init --layout keyed --window 30d --generations 6 > /dev/null
    else
      "$work/urldedupd" --dir "$work/state-$name" init --layout keyed > /dev/null
    fi
    run "$name" new
    run "$name" dup
    rm -rf "$work/state-$name"
  done
done

python3 - "$out/filter" "$lines" <<'PY'
import statistics as st, sys
rows = [l.split() for l in open(sys.argv[1])]
lines = int(sys.argv[2])
def col(name, phase, i):
    return [float(r[i]) for r in rows if r[0] == name and r[1] == phase]
print(f"`filter` on {lines:,} lines (bench file), a fresh state of 512 MiB of buckets each round; medians (min–max):")
print()
print("| phase | keyed wall s | keyed-window wall s | window/keyed wall (median of rounds) | keyed CPU s | keyed-window CPU s | window/keyed CPU | lines out keyed / window |")
print("|---|---|---|---|---|---|---|---|")
for phase, label in (("new", "new state"), ("dup", "second run: all dup")):
    kw, ww = col("keyed", phase, 2), col("window", phase, 2)
    kc, wc = col("keyed", phase, 3), col("window", phase, 3)
    ko = {r[4] for r in rows if r[0] == "keyed" and r[1] == phase}
    wo = {r[4] for r in rows if r[0] == "window" and r[1] == phase}
    rw = st.median(w / k for w, k in zip(ww, kw))
    rc = st.median(w / k for w, k in zip(wc, kc))
    f = lambda v: f"{st.median(v):.2f} ({min(v):.2f}–{max(v):.2f})"
    print(f"| {label} | {f(kw)} | {f(ww)} | {rw:.2f}× | {f(kc)} | {f(wc)} | {rc:.2f}× | {'/'.join(sorted(ko))} / {'/'.join(sorted(wo))} |")
PY
