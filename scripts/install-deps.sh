#!/usr/bin/env bash
# Installs the Debian packages qdq builds with, only those that are missing (idempotent).
set -euo pipefail
packages=(cmake g++ make pkgconf libgtest-dev libhwy-dev libcli11-dev libbenchmark-dev python3-venv)
missing=()
for package in "${packages[@]}"; do
  dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
done
if ((${#missing[@]})); then
  echo "qdq: installing ${missing[*]}"
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq "${missing[@]}" >/dev/null
fi
