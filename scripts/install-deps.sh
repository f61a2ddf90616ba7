#!/usr/bin/env bash
# Installs every Debian package that building, running and testing splatsweep needs.
# Idempotent: packages already present are skipped by apt. Run as root (or with sudo).
set -euo pipefail
pkgs=(
  build-essential cmake pkg-config git ca-certificates
  libzmq3-dev libprotobuf-c-dev protobuf-c-compiler
  libcurl4-openssl-dev libsqlite3-dev sqlite3 check
  libvulkan-dev glslc mesa-vulkan-drivers vulkan-tools spirv-tools
  libyaml-dev libjansson-dev libspng-dev libsodium-dev libgsl-dev
  libarchive-dev libmicrohttpd-dev libjpeg62-turbo-dev libexif-dev libjs-chart.js jq clang
  libclang-rt-14-dev clang-format spirv-cross nftables
  python3 python3-jsonschema
  chromium chromium-driver python3-websocket curl bsdutils
)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
