#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# install_test.sh BUILD_DIR SOURCE_DIR CXX: srt installed as a user would, into a scratch prefix,
# then moved, then used from there: the programs find their helpers, the systemd unit names the
# prefix, and examples/ builds as an external project against the installed libsrt, once through
# find_package(SrtSandbox) and once through pkg-config, and runs a sandboxed command.
set -euo pipefail
build=$1 src=$2 cxx=$3
scratch=$(mktemp -d /tmp/srt-install-test.XXXXXX)
trap '[[ -n ${KEEP:-} ]] || rm -rf "$scratch"' EXIT
fail() { echo "install_test: $*" >&2; exit 1; }
prefix=$scratch/prefix

cmake --install "$build" --prefix "$prefix" >"$scratch/install.log" || { cat "$scratch/install.log"; fail "cmake --install failed"; }
# Nothing outside the prefix (before, the systemd unit went to the configured prefix).
while IFS= read -r f; do
  [[ $f == "$prefix"/* ]] || fail "installed outside the prefix: $f"
done <"$build/install_manifest.txt"
for f in bin/srt bin/srt-attach bin/srt-poller bin/srt-mcp lib/systemd/system/srt-mcp.service libexec/srt/srt-init libexec/srt/srt-toolbox lib/libsrt-sandbox.a \
         include/srt-sandbox/srt/sandbox.h include/srt-sandbox/srt/settings.h include/srt-sandbox/srt/result.h \
         lib/cmake/SrtSandbox/SrtSandboxConfig.cmake lib/cmake/SrtSandbox/SrtSandboxConfigVersion.cmake \
         lib/pkgconfig/srt-sandbox.pc lib/systemd/system/srt-poller.service \
         share/srt/srt-settings.schema.json share/srt/policies/default.json share/man/man1/srt.1.gz \
         share/man/man5/srt-settings.5.gz share/man/man8/srt-poller.8.gz share/man/man8/srt-mcp.8.gz \
         share/bash-completion/completions/srt share/zsh/vendor-completions/_srt \
         lib/tmpfiles.d/srt.conf; do
  [[ -e $prefix/$f ]] || fail "not installed: $f"
done
# The Debian packages' own documents are theirs alone (packaging/CMakeLists.txt).
for f in share/doc/srt-sandbox share/lintian; do
  [[ ! -e $prefix/$f ]] || fail "a plain install holds the Debian packages' $f"
done
# Debian's Secure Reliable Transport packages own these names.
for f in include/srt lib/libsrt.a lib/pkgconfig/srt.pc; do
  [[ ! -e $prefix/$f ]] || fail "installed under a name Debian's srt packages own: $f"
done
grep -qx "ExecStart=$prefix/bin/srt-poller --environment-key-file /etc/srt-poller/environment-key --log-format json" \
  "$prefix/lib/systemd/system/srt-poller.service" || fail "the unit's ExecStart does not name $prefix/bin/srt-poller"
# Sessions' cgroups live inside the unit's (docs/poller.md, Limits).
grep -qx "Delegate=yes" "$prefix/lib/systemd/system/srt-poller.service" || fail "the unit does not delegate its cgroup"
grep -qx "ExecStart=$prefix/bin/srt-mcp --config /etc/srt-mcp/srt-mcp.json" \
  "$prefix/lib/systemd/system/srt-mcp.service" || fail "srt-mcp's unit's ExecStart does not name $prefix/bin/srt-mcp"
if command -v systemd-analyze >/dev/null; then
  # The units as systemd reads them (their ExecStart must exist: the install's own programs).
  systemd-analyze verify "$prefix/lib/systemd/system/srt-poller.service" 2>&1 | grep -v "EnvironmentFile" \
    | grep -i "srt-poller.service" && fail "systemd-analyze finds fault with the unit"
  systemd-analyze verify "$prefix/lib/systemd/system/srt-mcp.service" 2>&1 \
    | grep -i "srt-mcp.service" && fail "systemd-analyze finds fault with srt-mcp's unit"
fi
# srt-mcp checks the shipped example (its token file is not here: the check says so by name).
out=$("$prefix/bin/srt-mcp" --config "$src/examples/srt-mcp.json" --check 2>&1 || true)
grep -q "/etc/srt-mcp/token" <<<"$out" || fail "srt-mcp --check on the example: $out"

# Relocated: the same files in another place still work (no path of the first prefix is used).
moved=$scratch/moved
mv "$prefix" "$moved"
out=$("$moved/bin/srt" -c 'echo sandboxed-ok' 2>&1) || fail "the moved srt failed: $out"
[[ $out == sandboxed-ok ]] || fail "the moved srt printed: $out"
# srt-poller --check names the srt-toolbox it found: the moved one.
key=$scratch/key
printf 'sk-ant-oat01-install-test' >"$key" && chmod 0600 "$key"
# (Its API check goes to a closed loopback port: nothing leaves this machine.)
check=$("$moved/bin/srt-poller" --check --environment-id env_install_test --environment-key-file "$key" \
        --base-url http://127.0.0.1:9 --sessions-dir "$scratch/sessions" --disk 0 --no-limits 2>&1 || true)
grep -q "$moved/libexec/srt/srt-toolbox" <<<"$check" || fail "srt-poller --check did not use the moved srt-toolbox: $check"

# examples/ against the installed libsrt, through find_package(SrtSandbox).
cmake -S "$src/examples" -B "$scratch/ex" -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_PREFIX_PATH="$moved" \
  >"$scratch/ex.log" 2>&1 || { cat "$scratch/ex.log"; fail "configuring examples/ against the install failed"; }
cmake --build "$scratch/ex" >>"$scratch/ex.log" 2>&1 || { cat "$scratch/ex.log"; fail "building examples/ against the install failed"; }
out=$("$scratch/ex/embed-libsrt" -- /bin/sh -c 'echo "$GREETING"' 2>&1) || fail "embed-libsrt (find_package) failed: $out"
grep -q "hello from the embedding program" <<<"$out" || fail "embed-libsrt (find_package) printed: $out"

# The same through pkg-config.
export PKG_CONFIG_PATH=$moved/lib/pkgconfig
init=$(pkg-config --variable=initpath srt-sandbox)
[[ $init == "$moved/lib/pkgconfig/"*"/srt-init" && -x $init ]] || fail "pkg-config's initpath is not the moved srt-init: $init"
# shellcheck disable=SC2046  # pkg-config's flags are words
"$cxx" -o "$scratch/embed-pc" "$src/examples/embed_libsrt.cc" -DEMBED_SRT_INIT_PATH="\"$init\"" \
  $(pkg-config --cflags --libs srt-sandbox) || fail "building embed_libsrt.cc with pkg-config's flags failed"
out=$("$scratch/embed-pc" -- /bin/sh -c 'echo "$GREETING"' 2>&1) || fail "embed-libsrt (pkg-config) failed: $out"
grep -q "hello from the embedding program" <<<"$out" || fail "embed-libsrt (pkg-config) printed: $out"
echo "install_test: installed, moved, and embedded through find_package and pkg-config"
