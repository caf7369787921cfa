#!/usr/bin/env bash
# Installs the peer brokers the comparative benchmark runs against, from Debian's packages.
# Idempotent: does nothing when both binaries are already on the PATH.
# The package services are not started here: the suite starts its own instances on loopback,
# with temporary data directories, and stops them afterwards.
set -euo pipefail

need=()
command -v nats-server >/dev/null 2>&1 || need+=(nats-server)
command -v redis-server >/dev/null 2>&1 || need+=(redis-server)

if [ ${#need[@]} -eq 0 ]; then
  echo "peers already installed: $(nats-server --version 2>&1 | head -1); $(redis-server --version | head -1)"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
# policy-rc.d-free containers may try to start redis-server's service on install; that is harmless,
# and the suite never uses it.
$SUDO apt-get install -y -q --no-install-recommends "${need[@]}"

# Debian starts redis-server as a system service on install where an init system runs; the suite
# does not need it and it would compete for CPU, so stop it when it is running.
if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet redis-server 2>/dev/null; then
  $SUDO systemctl stop redis-server || true
fi

echo "installed: $(nats-server --version 2>&1 | head -1); $(redis-server --version | head -1)"
