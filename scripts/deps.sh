#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs what srt needs from Debian's archive (Debian 12 / Ubuntu 22.04+), only what is missing.
#   scripts/deps.sh build   - to build and run srt and srt-poller (libcurl, libarchive, libcrypto;
#                             RE2 for srt-toolbox's grep; e2fsprogs for srt-poller's workspace
#                             filesystems)
#   scripts/deps.sh package - also what the Debian packages need (scripts/package.sh: dpkg-dev
#                             and file for CPack's dependency scan, lintian)
#   scripts/deps.sh test    - also what the test suite and CI need (GoogleTest, clang for
#                             ASan+UBSan, clang-format and clang-tidy,
#                             Node.js for the MCP test; dnsmasq, curl, Python, OpenSSH and
#                             iproute2 (network namespaces) for the network tests, botocore
#                             for the SigV4 re-signing test; ripgrep, to
#                             test that the toolbox's grep never runs it; gpg and gpg-agent to
#                             sign the apt recipe's test suite; groff, man-db and zsh for the
#                             man page and completion tests, and what `package` needs, for CI's
#                             package test)
set -euo pipefail
want=(cmake ninja-build g++ pkg-config bubblewrap libseccomp-dev nlohmann-json3-dev libc-ares-dev libnl-3-dev libnl-route-3-dev util-linux
      libcurl4-openssl-dev libarchive-dev libssl-dev libre2-dev ca-certificates e2fsprogs)
if [[ "${1:-build}" == package || "${1:-build}" == test ]]; then
  want+=(dpkg-dev file lintian)
fi
if [[ "${1:-build}" == test ]]; then
  want+=(groff-base man-db zsh libgtest-dev libgmock-dev clang libclang-rt-14-dev clang-format clang-tidy git openssl
         dnsmasq-base curl python3 python3-yaml python3-botocore openssh-client openssh-server iproute2 ripgrep gpg gpg-agent)
  command -v node >/dev/null && command -v npm >/dev/null || want+=(nodejs npm)
fi
missing=()
for p in "${want[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
((${#missing[@]})) || exit 0
if [[ $(id -u) -ne 0 ]]; then
  echo "srt needs these Debian packages: ${missing[*]}" >&2
  echo "run as root: apt-get update && apt-get install -y ${missing[*]}" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
