#!/usr/bin/env bash
# Installs, from Debian's packages, the tools the tests use that a fresh
# machine may lack. Each entry: a command to look for, and its package.
set -euo pipefail
need=()
for pair in chmod:coreutils tshark:tshark editcap:tshark mergecap:tshark tcpdump:tcpdump ip:iproute2 sysctl:procps curl:curl python3:python3 mount:mount logrotate:logrotate systemd-analyze:systemd redis-server:redis-server redis-cli:redis-tools danted:dante-server sshd:openssh-server ssh:openssh-client ssh-keygen:openssh-client tinyproxy:tinyproxy-bin openssl:openssl nft:nftables nghttp:nghttp2-client nghttpd:nghttp2-server strace:strace stress-ng:stress-ng promtool:prometheus nginx:nginx dpkg-deb:dpkg adduser:adduser pgrep:procps runuser:util-linux setpriv:util-linux; do
  cmd=${pair%%:*} pkg=${pair#*:}
  command -v "$cmd" >/dev/null 2>&1 || need+=("$pkg")
done
# Python modules the tests import with Debian's python3 (the RESP tests,
# clients/python and the crawl).
for pair in redis:python3-redis scrapy:python3-scrapy pip:python3-pip; do
  mod=${pair%%:*} pkg=${pair#*:}
  /usr/bin/python3 -c "import $mod" >/dev/null 2>&1 || need+=("$pkg")
done
if [ ${#need[@]} -gt 0 ]; then
  echo "installing: ${need[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}"
fi
