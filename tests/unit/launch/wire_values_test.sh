#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Every enumerator of each enum in init_protocol/wire.h has a value of its own: srt, srt-init and
# its agent tell messages, plan records and stages apart by value alone, and the compiler accepts
# two names for one value without a word (two srt -> init messages once shared 16 after a merge).
# A name ending in Max (kGuardOpMax) is the last value again, on purpose.
# Usage: wire_values_test.sh PATH/TO/wire.h
set -euo pipefail
(($# == 1)) || { echo "usage: $0 wire.h" >&2; exit 2; }
awk '
  /^enum [A-Za-z]+ *:/ { name = $2; inside = 1; delete seen; next }
  inside && /^};/ { inside = 0; enums++; next }
  inside && match($0, /^ *k[A-Za-z0-9]+ *= *(0x)?[0-9a-fA-F]+/) {
    entry = substr($0, RSTART, RLENGTH)
    split(entry, kv, "=")
    key = kv[1]; gsub(/ /, "", key)
    value = kv[2]; gsub(/ /, "", value)
    if (key ~ /Max$/) next  # kGuardOpMax: the last value again, by design
    if (value in seen) {
      printf "FAIL: %s: %s and %s are both %s\n", name, seen[value], key, value > "/dev/stderr"
      bad++
    }
    seen[value] = key
  }
  END {
    if (enums == 0) { print "FAIL: no enum found" > "/dev/stderr"; exit 1 }
    if (bad) exit 1
    printf "ok: %d enums, every value named once\n", enums
  }' "$1"
