#!/usr/bin/env bash
# Installs the Debian packages listed in packages-debian.txt that are not installed yet.
# Runs as root (CI and developer machines) or through sudo when available.
set -euo pipefail
cd "$(dirname "$0")"
mapfile -t wanted < <(grep -v '^\s*#' packages-debian.txt | grep -v '^\s*$')
missing=()
for pkg in "${wanted[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
# Node.js and npm (tests/serve drives the server with the openai npm package): the machine's
# own when it has them (a newer Node from another source), else Debian's.
command -v npm >/dev/null 2>&1 || missing+=(nodejs npm)
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "bootstrap: installing ${missing[*]}"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
