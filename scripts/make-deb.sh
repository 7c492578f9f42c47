#!/usr/bin/env bash
# make-deb.sh: build the Debian package of urldedupd with dpkg-deb (no
# packager beyond Debian's own; see docs/dependencies.md).
#
#   bash scripts/make-deb.sh [OUTDIR]        # OUTDIR: default dist/
#   BIN=path/to/urldedupd bash scripts/make-deb.sh OUTDIR   # a binary already built
#   DEB_COMPRESSION=gzip bash scripts/make-deb.sh            # dpkg-deb -Z; default xz
#
# xz, dpkg-deb's default, makes the smallest package and every dpkg reads
# it, but compressing the binary takes about 11 s of CPU; the tests, which
# build a package to install it once, ask for gzip (2 s).
#
# The package holds the binary (/usr/bin/urldedupd), the systemd unit, the
# sysusers, logrotate and config files of scripts/deploy, the Grafana
# dashboard and the docs. postinst makes the urldedupd system user and
# /var/lib/urldedupd (the state directory, 0750); dpkg -r leaves the state,
# dpkg --purge removes it, the logs and the user. It prints the .deb's path.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-dist}
mkdir -p "$out"
out=$(cd "$out" && pwd)

# The Debian version from git describe: v0.1.0 → 0.1.0, v0.1.0-3-gabc1234
# → 0.1.0+3.gabc1234, no tag → 0.0.0+git.<hash>; a dirty tree adds +dirty.
desc=$(git describe --tags --always --dirty 2>/dev/null || echo dev)
case $desc in
v[0-9]*) ver=${desc#v} ;;
*) ver=0.0.0+git.$desc ;;
esac
ver=$(printf '%s' "$ver" | sed -E 's/-([0-9]+)-g/+\1.g/; s/-dirty$/+dirty/; s/[^A-Za-z0-9.+~]/./g')
arch=$(dpkg --print-architecture)

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
root=$stage/urldedupd_${ver}_$arch

bin=${BIN:-}
if [ -z "$bin" ]; then
	bin=$stage/urldedupd
	${GO:-go} build -trimpath -ldflags "-X main.version=$desc" -o "$bin" ./cmd/urldedupd
fi

install -D -m 0755 "$bin" "$root/usr/bin/urldedupd"
install -d -m 0755 "$root/lib/systemd/system"
sed 's|/usr/local/bin/urldedupd|/usr/bin/urldedupd|' scripts/deploy/urldedupd.service >"$root/lib/systemd/system/urldedupd.service"
chmod 0644 "$root/lib/systemd/system/urldedupd.service"
install -D -m 0644 scripts/deploy/urldedupd.sysusers "$root/usr/lib/sysusers.d/urldedupd.conf"
install -D -m 0644 scripts/deploy/urldedupd.logrotate "$root/etc/logrotate.d/urldedupd"
install -D -m 0640 scripts/deploy/urldedupd.conf "$root/etc/urldedupd/urldedupd.conf"
install -D -m 0644 scripts/deploy/grafana-dashboard.json "$root/usr/share/urldedupd/grafana-dashboard.json"
doc=$root/usr/share/doc/urldedupd
install -d -m 0755 "$doc"
install -m 0644 README.md docs/operations.md docs/design.md docs/capture.md docs/windows.md docs/dependencies.md "$doc/"
{
	echo "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/"
	echo "Upstream-Name: urldedupd"
	echo
	echo "Files: *"
	echo "License: Apache-2.0"
	echo " On Debian systems, the full text of the Apache License 2.0 is in"
	echo " /usr/share/common-licenses/Apache-2.0."
} >"$doc/copyright"
chmod 0644 "$doc/copyright"

install -d -m 0755 "$root/DEBIAN"
size=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
cat >"$root/DEBIAN/control" <<EOF
Package: urldedupd
Version: $ver
Architecture: $arch
Maintainer: urldedupd developers <urldedupd@localhost>
Installed-Size: $size
Depends: adduser
Recommends: tcpdump, logrotate
Section: net
Priority: optional
Homepage: https://github.com/urldedupd/urldedupd
Description: first-seen URL sensor and shared de-duplication state
 urldedupd tells whether a URL has been seen before, at line rate and
 across restarts, with one bit per URL in memory-mapped shard files
 shared by every local process (patent CN102693315A). The daemon logs
 each HTTP request, TLS and QUIC server name the first time it crosses a
 mirror port, and answers crawlers over a local API and the Redis
 protocol.
EOF
printf '%s\n' /etc/urldedupd/urldedupd.conf /etc/logrotate.d/urldedupd >"$root/DEBIAN/conffiles"

cat >"$root/DEBIAN/postinst" <<'EOF'
#!/bin/sh
set -e
if [ "$1" = configure ]; then
	# The state directory: empty until the daemon (or any command) creates
	# the state in it. Its group reads it (check, stats as a crawler user).
	install -d -m 0750 /var/lib/urldedupd
	if ! getent passwd urldedupd >/dev/null; then
		adduser --system --group --home /var/lib/urldedupd --no-create-home \
			--gecos "urldedupd daemon" urldedupd >/dev/null
	fi
	chown urldedupd:urldedupd /var/lib/urldedupd
	install -d -m 0750 -o urldedupd -g urldedupd /var/log/urldedupd
	chgrp urldedupd /etc/urldedupd/urldedupd.conf
	if [ -d /run/systemd/system ]; then
		systemctl daemon-reload >/dev/null || true
	fi
fi
exit 0
EOF
cat >"$root/DEBIAN/prerm" <<'EOF'
#!/bin/sh
set -e
if [ -d /run/systemd/system ] && [ "$1" = remove ]; then
	systemctl stop urldedupd.service >/dev/null 2>&1 || true
fi
exit 0
EOF
cat >"$root/DEBIAN/postrm" <<'EOF'
#!/bin/sh
set -e
# remove leaves the state, the logs and the user; purge takes them.
if [ "$1" = purge ]; then
	rm -rf /var/lib/urldedupd /var/log/urldedupd
	if getent passwd urldedupd >/dev/null; then
		deluser --system urldedupd >/dev/null 2>&1 || userdel urldedupd || true
	fi
	if getent group urldedupd >/dev/null; then
		delgroup --system urldedupd >/dev/null 2>&1 || groupdel urldedupd || true
	fi
fi
if [ -d /run/systemd/system ]; then
	systemctl daemon-reload >/dev/null || true
fi
exit 0
EOF
chmod 0755 "$root/DEBIAN/postinst" "$root/DEBIAN/prerm" "$root/DEBIAN/postrm"

deb=$out/urldedupd_${ver}_$arch.deb
dpkg-deb --root-owner-group -Z"${DEB_COMPRESSION:-xz}" --build "$root" "$deb" >/dev/null
echo "$deb"
