#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# clang-tidy 14 (the checks in .clang-tidy) over srt's production sources, using the compile
# commands of a configured build (default build/dev; run `cmake --preset dev` first). Every
# finding fails the run: fix it, or silence that one line with `// NOLINT(check): why`.
#   scripts/tidy.sh                 every production .cc file (libsrt, proxy, srt-cli, srt-poller)
#   scripts/tidy.sh FILE...         only these
#   SRT_TIDY_BUILD=build/x scripts/tidy.sh   another build's compile_commands.json
set -euo pipefail
cd "$(dirname "$0")/.."
build=${SRT_TIDY_BUILD:-build/dev}
db=$build/compile_commands.json
[[ -f $db ]] || { echo "tidy: $db is missing; run: cmake --preset dev" >&2; exit 1; }
command -v clang-tidy-14 >/dev/null || { echo "tidy: clang-tidy-14 is missing; run: scripts/deps.sh test" >&2; exit 1; }

if (($#)); then
  files=("$@")
else
  # Tests, benchmarks and examples are not production code; the house checks them by review.
  mapfile -t files < <(git ls-files '*.cc' | grep -Ev '^(tests|bench|examples)/')
fi
# A file the build does not compile (none today) has no flags to check it with: say so, not skip.
# A set, not `printf | grep -q`: under pipefail, grep -q's early exit can SIGPIPE the printf and
# make a file that is in the database look missing.
declare -A known=()
while IFS= read -r f; do known[$f]=1; done < <(python3 -c 'import json,sys,os; [print(os.path.relpath(e["file"])) for e in json.load(open(sys.argv[1]))]' "$db")
for f in "${files[@]}"; do
  [[ -n ${known[$f]:-} ]] || { echo "tidy: $f is not in $db" >&2; exit 1; }
done

out=$(mktemp -d /tmp/srt-tidy.XXXXXX)
trap 'rm -rf "$out"' EXIT
# GCC-only warning flags in the compile commands are not clang-tidy's concern.
printf '%s\n' "${files[@]}" |
  xargs -P "$(nproc)" -I{} sh -c 'clang-tidy-14 -p "$1" --quiet --warnings-as-errors="*" \
      --extra-arg=-Wno-unknown-warning-option "$2" >"$3/$(echo "$2" | tr / _).log" 2>&1 ||
      echo "$2" >>"$3/failed"' _ "$build" {} "$out"
if [[ -s $out/failed ]]; then
  # One report per finding: a header's finding is seen from every file that includes it.
  cat "$out"/*.log | grep -E '^[^ ]+:[0-9]+:[0-9]+: (warning|error):' | sort -u >&2
  echo "tidy: $(sort -u "$out/failed" | wc -l) of ${#files[@]} files have findings" >&2
  exit 1
fi
echo "tidy: ${#files[@]} files, no findings"
