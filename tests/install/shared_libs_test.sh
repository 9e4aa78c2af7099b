#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# srt starts once per sandboxed command: it loads no shared library that SRT_STATIC_LIBS links
# from its static archive (re2, which would bring the shared libstdc++ too, c-ares, libnl,
# libseccomp), and with `lazy-openssl` (SRT_LAZY_OPENSSL) not libssl or libcrypto either, which
# only TLS termination and SigV4 load, on first use; nor libm, which it does not call (the compiler
# driver adds it to every C++ link). Usage: shared_libs_test.sh PATH-TO-SRT [lazy-openssl]
set -euo pipefail
srt=$1
needed=$(readelf -d "$srt" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
echo "$srt needs: $(echo $needed)"
bad=$(echo "$needed" | grep -E '^lib(stdc\+\+|re2|cares|nl-|seccomp)' || true)
if [[ -n $bad ]]; then
  echo "FAIL: srt loads $(echo $bad) at every start; link them from their static archives" >&2
  exit 1
fi
if grep -q -x 'libm\.so\.6' <<<"$needed"; then
  echo "FAIL: srt loads libm.so.6 at every start; it calls nothing of it (link with --as-needed)" >&2
  exit 1
fi
if [[ ${2:-} == lazy-openssl ]]; then
  bad=$(echo "$needed" | grep -E '^lib(ssl|crypto)\.' || true)
  if [[ -n $bad ]]; then
    echo "FAIL: srt loads $(echo $bad) at every start; SRT_LAZY_OPENSSL loads them on first use" >&2
    exit 1
  fi
fi
echo "1 passed, 0 failed"
