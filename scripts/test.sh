#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds srt and runs the whole test suite: unit, integration (real bubblewrap sandboxes, as root
# and as the unprivileged user nobody), the MCP end-to-end test and the fuzz-corpus replays.
#   scripts/test.sh                      GCC build (preset dev)
#   scripts/test.sh --preset asan-ubsan  clang with AddressSanitizer + UndefinedBehaviorSanitizer
set -euo pipefail
cd "$(dirname "$0")/.."
preset=dev
[[ "${1:-}" == --preset ]] && preset=${2:?--preset needs a name}
scripts/deps.sh test
[[ -f tests/mcp/package-lock.json ]] && npm ci --prefix tests/mcp --ignore-scripts --no-audit --no-fund --loglevel=error
cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset"
# SRT_MUST_WORK=1: a host where sandboxes cannot be built fails the run instead of skipping.
SRT_MUST_WORK=1 ctest --preset "$preset"
