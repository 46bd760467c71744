#!/usr/bin/env bash
# Install the Debian packages kope needs to build, test and benchmark.
# Idempotent: packages already present are not touched, and apt-get runs
# only when something is missing. Run as root (or with sudo available).
set -euo pipefail

PKGS=(
  build-essential cmake pkg-config
  libjansson-dev libsqlite3-dev sqlite3 libcurl4-openssl-dev libssl-dev
  libcmocka-dev libseccomp-dev
  libpq-dev postgresql-15
  libopenblas-dev libdnnl-dev
  libomp-dev binutils python3 graphviz
  chromium fonts-dejavu-core
  pocl-opencl-icd ocl-icd-opencl-dev opencl-c-headers clinfo
)

missing=()
for p in "${PKGS[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "kope setup: installing ${missing[*]}" >&2
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "kope setup: need root to install: ${missing[*]}" >&2; exit 3; fi
fi
export DEBIAN_FRONTEND=noninteractive
log=$(mktemp /tmp/kope-setup.XXXXXX.log)
if ! { $SUDO apt-get update -qq && \
       $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"; } >"$log" 2>&1; then
  tail -20 "$log" >&2
  echo "kope setup: apt-get failed (full log: $log)" >&2
  exit 3
fi
rm -f "$log"
