#!/usr/bin/env bash
# Installs what resilin needs to build its tests, examples and benchmarks on Debian/Ubuntu
# (as root), or prints exactly what to install (otherwise). Usage: scripts/deps.sh [extra pkgs]
# Optional packages (Ninja: faster builds) are installed as root and only suggested otherwise.
set -euo pipefail
packages=(cmake make g++ catch2 libbenchmark-dev libcli11-dev libzstd-dev libxxhash-dev liblbfgspp-dev libeigen3-dev pkg-config "$@")
optional=(ninja-build)
missing_of() {
  local p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || echo "$p"
  done
}
mapfile -t missing < <(missing_of "${packages[@]}")
mapfile -t missing_optional < <(missing_of "${optional[@]}")
if [ "$(id -u)" -eq 0 ]; then
  all=("${missing[@]}" "${missing_optional[@]}")
  if [ ${#all[@]} -eq 0 ]; then exit 0; fi
  echo "resilin: installing ${all[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${all[@]}" >/dev/null
  exit 0
fi
if [ ${#missing_optional[@]} -gt 0 ]; then
  echo "resilin: optional, for faster builds: sudo apt-get install -y ${missing_optional[*]}" >&2
fi
if [ ${#missing[@]} -gt 0 ]; then
  echo "resilin: missing packages; install them with:" >&2
  echo "  sudo apt-get update && sudo apt-get install -y ${missing[*]}" >&2
  exit 1
fi
