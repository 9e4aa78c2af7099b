#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Quick start: installs what is missing, builds srt, and runs it on a small project to show what a
# sandboxed command may and may not do.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh build
cmake --preset release >/dev/null
cmake --build --preset release
srt=$PWD/build/release/bin/srt
policy=$PWD/policies/default.json

demo=$(mktemp -d /var/tmp/srt-demo.XXXXXX)
trap 'rm -rf "$demo"' EXIT
cd "$demo"
echo 'print("hello from the project")' > main.py

echo
echo "== srt -s policies/default.json -- a script in $demo"
# The policy: this directory is writable, credential stores are hidden, no network.
"$srt" -s "$policy" -c '
  try() { desc=$1; shift; if "$@" 2>/dev/null; then echo "ALLOWED  $desc"; else echo "BLOCKED  $desc"; fi; }
  try "write a file in the project"            sh -c "echo ok > build.log"
  try "write ~/.profile outside the project"   sh -c "echo evil >> ~/.profile"
  try "plant a .bashrc in the project"         sh -c "echo evil > .bashrc"
  try "read ~/.ssh (hidden)"                   sh -c "ls ~/.ssh | grep -q ."
  try "write the private /tmp (TMPDIR)"        sh -c "echo scratch > \$TMPDIR/scratch"
  try "reach the network"                      sh -c "exec 3<>/dev/tcp/1.1.1.1/80"
  try "see srt'"'"'s helper in /proc"          test -e /proc/1/cmdline
'
echo "== back on the host: build.log says '$(cat build.log)'; no .bashrc here: $(ls -A | tr '\n' ' ')"
