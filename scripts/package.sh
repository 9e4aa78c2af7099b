#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds srt's Debian packages with CPack (packaging/CMakeLists.txt) and checks them with lintian.
#   scripts/package.sh            a hardened release build for /usr in build/deb (preset release),
#                                 then its packages: what to hand to users
#   scripts/package.sh BUILD_DIR  the packages of an existing build tree, e.g. build/dev after
#                                 scripts/test.sh (CI: nothing is compiled again)
# The packages go to BUILD_DIR/packages/: srt-sandbox_VERSION_ARCH.deb (srt, srt-poller, their
# helpers, man pages, completion) and srt-sandbox-dev_VERSION_ARCH.deb (libsrt for embedding).
# Install with: apt-get install ./BUILD_DIR/packages/srt-sandbox_*.deb
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-}
scripts/deps.sh package
if [[ -z $build ]]; then
  build=build/deb
  # The release preset's flags, with /usr as the prefix the programs and libsrt are built for
  # (their last-resort helper path) and GNUInstallDirs' Debian layout (multiarch libdir).
  cmake --preset release -B "$build" -DCMAKE_INSTALL_PREFIX=/usr >/dev/null
fi
[[ -f $build/CPackConfig.cmake ]] || { echo "package.sh: $build is not a configured build tree" >&2; exit 1; }
cmake --build "$build"
rm -rf "$build/packages"
(cd "$build" && cpack -G DEB --config CPackConfig.cmake >cpack.log 2>&1) || { cat "$build/cpack.log"; exit 1; }
debs=("$build"/packages/*.deb)
# lintian: errors and warnings fail; the packages' overrides say why each one left is intended
# (packaging/deb/*.lintian-overrides).
suppress=()
if ! grep -qx 'CMAKE_INSTALL_PREFIX:PATH=/usr' "$build/CMakeCache.txt"; then
  # A tree configured for another prefix (build/dev: /usr/local) has GNUInstallDirs' plain `lib`,
  # not Debian's multiarch libdir: its -dev package is right but for that.
  echo "package.sh: $build was not configured for /usr: the -dev files go to /usr/lib, not the multiarch libdir" >&2
  suppress=(--suppress-tags pkg-config-unavailable-for-cross-compilation)
fi
lintian --fail-on error,warning --display-info "${suppress[@]}" "${debs[@]}"
printf '%s\n' "${debs[@]}"
