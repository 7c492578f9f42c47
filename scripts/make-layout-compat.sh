#!/bin/sh
# Regenerates internal/state/testdata/compat: one state of each layout
# (bitmap, keyed, bloom, mdbf, dsbf) written by the urldedupd of COMMIT,
# the answers that binary gives for a list of URLs, and the hashes of the
# state's files after it answered them. TestCompat (internal/state) checks
# that this build opens those states and answers byte for byte the same.
#
#   scripts/make-layout-compat.sh [COMMIT]    (default: HEAD)
set -eu
commit=${1:-HEAD}
top=$(git rev-parse --show-toplevel)
out=$top/internal/state/testdata/compat
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export PATH=$PATH:/usr/local/go/bin

mkdir "$tmp/src"
git -C "$top" archive "$commit" | tar -x -C "$tmp/src"
(cd "$tmp/src" && go build -o "$tmp/urldedupd" ./cmd/urldedupd)
(cd "$top" && go build -o "$tmp/statepack" ./scripts/statepack)
bin=$tmp/urldedupd

# The URLs: 1500 inserted; then the queries: every 3rd inserted one, as
# many new ones, and repeats of the new within the list.
i=0
while [ $i -lt 1500 ]; do
	echo "http://host-$((i % 97)).example/path/$i?q=$((i * 7919 % 10007))"
	i=$((i + 1))
done >"$tmp/insert.txt"
{
	i=0
	while [ $i -lt 1500 ]; do
		echo "http://host-$((i % 97)).example/path/$i?q=$((i * 7919 % 10007))"
		echo "https://other-$((i % 13)).example/new/$i"
		[ $((i % 30)) -eq 0 ] && echo "https://other-$((i % 13)).example/new/$i"
		i=$((i + 3))
	done
} >"$tmp/query.txt"

rm -rf "$out"
mkdir -p "$out"
cp "$tmp/insert.txt" "$tmp/query.txt" "$out/"
echo "$(git -C "$top" rev-parse "$commit")" >"$out/COMMIT"
for layout in bitmap keyed bloom mdbf dsbf; do
	d=$tmp/$layout
	case $layout in
	bitmap | keyed) "$bin" init -d "$d" --layout $layout ;;
	dsbf) "$bin" init -d "$d" --layout dsbf --size 1MiB --fmax 1e-9 --children 2 ;;
	*) "$bin" init -d "$d" --layout $layout --size 1MiB ;;
	esac
	"$bin" filter -d "$d" "$tmp/insert.txt" >/dev/null
	"$tmp/statepack" "$d" "$out/$layout.pages.gz"
	# check: a dry run, which changes nothing; then filter --mark, which
	# records the new URLs.
	"$bin" check -d "$d" $(cat "$tmp/query.txt") | cut -f1 >"$out/$layout.check"
	"$bin" filter -d "$d" --mark "$tmp/query.txt" | cut -f1 >"$out/$layout.mark"
	(cd "$d" && sha256sum $(ls | sort)) >"$out/$layout.after.sha256"
done
du -sh "$out"
