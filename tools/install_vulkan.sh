#!/usr/bin/env bash
# Installs a Vulkan driver that current Dawn accepts, and the build tools, with apt. Used by
# .ci/run and examples/setup_and_demo.sh; run as root or with sudo available.
#
# Current Dawn needs Vulkan features (dynamic indexing of uniform arrays) that Mesa's lavapipe only
# has from Mesa 25 on: Debian 13 ships it; on Debian 12 it comes from the bookworm-backports suite,
# whose apt entry is derived from the machine's own Debian source configuration (same mirror, same
# keyring), so no repository address is written here.
set -euo pipefail
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive

codename=""
if [ -r /etc/os-release ]; then codename="$(. /etc/os-release && echo "${VERSION_CODENAME:-}")"; fi
TARGET=()
if [ "$codename" = "bookworm" ]; then
  if ! grep -rqs "bookworm-backports" /etc/apt/sources.list /etc/apt/sources.list.d/; then
    entry=""
    if [ -r /etc/apt/sources.list.d/debian.sources ]; then
      # The first deb822 stanza that names the main archive's suites, with the suite swapped.
      entry="$(awk 'BEGIN { RS = ""; ORS = "\n" }
        /Suites:[^\n]*bookworm( |\n|$)/ && !done { sub(/Suites:[^\n]*/, "Suites: bookworm-backports"); print; done = 1 }' \
        /etc/apt/sources.list.d/debian.sources)"
      [ -n "$entry" ] && printf '%s\n' "$entry" | $SUDO tee /etc/apt/sources.list.d/torch-webgpu-backports.sources >/dev/null
    elif [ -r /etc/apt/sources.list ]; then
      entry="$(awk '$1 == "deb" && $3 == "bookworm" { $3 = "bookworm-backports"; print; exit }' /etc/apt/sources.list)"
      [ -n "$entry" ] && printf '%s\n' "$entry" | $SUDO tee /etc/apt/sources.list.d/torch-webgpu-backports.list >/dev/null
    fi
    [ -n "$entry" ] || echo "[install_vulkan] no Debian source entry to derive bookworm-backports from" >&2
  fi
  TARGET=(-t bookworm-backports)
fi

$SUDO apt-get update -qq
# mesa-vulkan-drivers: lavapipe, the CPU Vulkan adapter (with a GPU, its vendor's driver is used);
# g++/python3-dev/python3-venv build the extension.
$SUDO apt-get install -y -qq --no-install-recommends "${TARGET[@]}" mesa-vulkan-drivers libvulkan1 >/dev/null
$SUDO apt-get install -y -qq --no-install-recommends g++ make python3-dev python3-venv git ca-certificates >/dev/null

mesa="$(dpkg-query -W -f='${Version}' mesa-vulkan-drivers 2>/dev/null || true)"
echo "[install_vulkan] mesa-vulkan-drivers ${mesa:-not installed}"
major="${mesa%%.*}"; major="${major#*:}"
if [ -n "$major" ] && [ "$major" -lt 25 ] 2>/dev/null; then
  echo "[install_vulkan] Mesa $mesa is older than 25: current Dawn rejects its lavapipe" >&2
  exit 1
fi
