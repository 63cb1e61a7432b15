#!/usr/bin/env bash
# Installs what resilin needs to build its tests, examples and benchmarks on Debian/Ubuntu
# (as root), or prints exactly what to install (otherwise). Usage: scripts/deps.sh [extra pkgs]
set -euo pipefail
packages=(cmake make ninja-build g++ catch2 libbenchmark-dev libcli11-dev libzstd-dev libxxhash-dev liblbfgspp-dev libeigen3-dev pkg-config "$@")
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then exit 0; fi
if [ "$(id -u)" -eq 0 ]; then
  echo "resilin: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
  echo "resilin: missing packages; install them with:" >&2
  echo "  sudo apt-get update && sudo apt-get install -y ${missing[*]}" >&2
  exit 1
fi
