#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# completion_test.sh BIN_DIR SOURCE_DIR: the bash completion of srt and srt-poller, driven as bash
# drives it (COMP_WORDS, COMP_CWORD, then the function, then COMPREPLY): every option their
# --help lists completes, option values complete (files, enumerations), the command after srt's
# options completes as a command; and the zsh functions are valid and registered for both.
set -euo pipefail
bin=$1 src=$2
comp=$src/packaging/completion
scratch=$(mktemp -d /tmp/srt-completion-test.XXXXXX)
trap 'rm -rf "$scratch"' EXIT
fail() { echo "completion_test: $*" >&2; exit 1; }

# complete FUNCTION WORD... : prints COMPREPLY, one a line, for the cursor on the last WORD.
complete_words() {
  local fn=$1
  shift
  COMP_WORDS=("$@")
  COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
  COMP_LINE="$*" COMP_POINT=${#COMP_LINE}
  COMPREPLY=()
  "$fn"
  ((${#COMPREPLY[@]} == 0)) || printf '%s\n' "${COMPREPLY[@]}"
}
expect() {  # expect WANTED FUNCTION WORD...: WANTED is among the completions
  local want=$1 got
  shift
  got=$(complete_words "$@")
  grep -qxF -- "$want" <<<"$got" || fail "'${*:2}' does not complete to '$want' (got: ${got//$'\n'/ })"
}
expect_not() {
  local unwanted=$1 got
  shift
  got=$(complete_words "$@")
  ! grep -qxF -- "$unwanted" <<<"$got" || fail "'${*:2}' completes to '$unwanted'"
}

# shellcheck source=/dev/null
source "$comp/srt.bash"
# shellcheck source=/dev/null
source "$comp/srt-poller.bash"
[[ $(complete -p srt) == *"-F _srt srt"* ]] || fail "srt.bash does not register _srt for srt"
[[ $(complete -p srt-poller) == *"-F _srt_poller srt-poller"* ]] || fail "srt-poller.bash does not register _srt_poller"

# Every option of each --help completes from its first dash (and from its full spelling).
for program in srt srt-poller; do
  fn=_srt
  [[ $program == srt-poller ]] && fn=_srt_poller
  mapfile -t options < <(python3 "$src/tests/package/check_docs.py" --options "$bin/$program")
  ((${#options[@]} >= 10)) || fail "$program --help lists only: ${options[*]}"
  for o in "${options[@]}"; do
    expect "$o" "$fn" "$program" "-"
    expect "$o" "$fn" "$program" "$o"
  done
  echo "completion_test: all ${#options[@]} options of $program --help complete"
done

# `srt proxy`: every option of `srt proxy --help` completes after the subcommand, and the
# subcommand itself completes as the first word.
mapfile -t proxy_options < <("$bin/srt" proxy --help | grep -oE '^ +(-[a-z], )?--[a-z-]+' | grep -oE -- '--?[a-z-]+')
((${#proxy_options[@]} >= 10)) || fail "srt proxy --help lists only: ${proxy_options[*]}"
for o in "${proxy_options[@]}"; do
  expect "$o" _srt srt proxy "-"
  expect "$o" _srt srt proxy --listen-fd 3 "$o"
done
expect proxy _srt srt pro
echo "completion_test: all ${#proxy_options[@]} options of srt proxy --help complete"

# Option values.
cd "$scratch"
mkdir project && touch project/policy.json other.txt
expect project/policy.json _srt srt -s project/p
expect project/policy.json _srt srt --settings project/
expect project/policy.json _srt srt --settings = project/
expect other.txt _srt srt --log-file oth
expect 512M _srt srt --memory ""
expect 30s _srt srt --timeout ""
expect json _srt_poller srt-poller --log-format ""
expect text _srt_poller srt-poller --log-format ""
expect json _srt_poller srt-poller --log-format = j
expect_not text _srt_poller srt-poller --log-format j
expect terminated _srt_poller srt-poller --workspace-cleanup t
expect keep _srt_poller srt-poller --workspace-cleanup ""
expect project _srt_poller srt-poller --sessions-dir pro
expect_not other.txt _srt_poller srt-poller --sessions-dir oth
expect project/policy.json _srt_poller srt-poller --policy project/
expect PATH _srt_poller srt-poller --script-env PA

# The command: a command name after srt's options (and after --), not an option of srt's.
expect bash _srt srt bas
expect bash _srt srt -s project/policy.json --memory 1G bas
expect bash _srt srt -- bas
expect_not --debug _srt srt echo --d

# zsh: the functions parse, and compinit registers them for their commands.
if command -v zsh >/dev/null; then
  zsh -n "$comp/_srt" || fail "_srt: zsh syntax"
  zsh -n "$comp/_srt-poller" || fail "_srt-poller: zsh syntax"
  got=$(zsh -fc "fpath=('$comp' \$fpath); autoload -Uz compinit; compinit -u -d '$scratch/zcompdump'; print -r -- \$_comps[srt] \$_comps[srt-poller]")
  [[ $got == "_srt _srt-poller" ]] || fail "zsh's compinit registers: '$got'"
  for program in srt srt-poller; do
    mapfile -t options < <(python3 "$src/tests/package/check_docs.py" --options "$bin/$program")
    for o in "${options[@]}"; do
      [[ $o == -- ]] && continue
      grep -qE -- "(^|[^a-z-])$o([^a-z-]|$)" "$comp/_$program" || fail "_$program does not offer $o"
    done
  done
  echo "completion_test: zsh completion registered, every option offered"
else
  echo "completion_test: zsh is not installed; its completion was not checked"
fi
echo "completion_test: ok"
