#!/usr/bin/env bash
# Installs the Debian packages crest needs that are missing. Safe to rerun.
set -euo pipefail
# ocl-icd-opencl-dev: Debian's oneDNN is built with the OpenCL GPU runtime,
# so its CMake config requires OpenCL; apt only recommends it, and recommends
# are not installed here.
pkgs=(cmake g++ make libdnnl-dev ocl-icd-opencl-dev libtbb-dev libgtest-dev
      libgmock-dev nlohmann-json3-dev libxbyak-dev libbenchmark-dev clang
      libclang-rt-14-dev)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install_deps: all packages present"
  exit 0
fi
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "install_deps: installing ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
