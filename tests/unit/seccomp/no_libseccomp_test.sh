#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# srt's programs serve the seccomp filters the build compiled (libsrt/src/seccomp/filter.h): none
# of them may load or contain libseccomp, whose per-run compile they no longer do.
# Usage: no_libseccomp_test.sh PROGRAM...
set -euo pipefail
(($#)) || { echo "usage: $0 PROGRAM..." >&2; exit 2; }
passed=0
failed=0
for program in "$@"; do
  name=$(basename "$program")
  needed=$(readelf -d "$program" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
  # Every libseccomp function is named seccomp_* (C, unmangled); srt's own are C++ names.
  symbols=$(nm "$program" 2>&1) || { echo "FAIL: nm $program: $symbols" >&2; failed=$((failed + 1)); continue; }
  if [[ $symbols == *"no symbols"* ]]; then
    echo "FAIL: $name is stripped; nothing to check" >&2
    failed=$((failed + 1))
  elif grep -q '^libseccomp' <<<"$needed"; then
    echo "FAIL: $name loads libseccomp" >&2
    failed=$((failed + 1))
  elif found=$(awk '$NF ~ /^seccomp_/ { print $NF }' <<<"$symbols" | sort -u | head -5) && [[ -n $found ]]; then
    echo "FAIL: $name contains libseccomp: $(echo $found)" >&2
    failed=$((failed + 1))
  else
    echo "ok: $name ($(wc -c <"$program") bytes) has no libseccomp"
    passed=$((passed + 1))
  fi
done
echo "$passed passed, $failed failed"
((failed == 0))
