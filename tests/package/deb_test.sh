#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# deb_test.sh [BUILD_DIR]: srt's Debian packages as a user gets them. Builds them from BUILD_DIR
# (default build/dev, already built by scripts/test.sh) with scripts/package.sh, which lints
# them; checks their contents, owners, modes and Depends; installs them with apt-get; then, from
# the installed files only: srt --version, a sandboxed command as root and as nobody (its write
# allowed, a write outside denied), the man pages, the completion, libsrt embedded through
# pkg-config; and purges both, checking that no file of theirs is left.
# It installs on this machine (CI's is fresh): as root, and never over an srt-sandbox that is
# already installed.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build/dev}
fail() { echo "deb_test: $*" >&2; exit 1; }
[[ $(id -u) -eq 0 ]] || fail "needs root (apt-get install, then purge)"
for p in srt-sandbox srt-sandbox-dev; do
  ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
    fail "$p is installed on this machine; this test installs and purges it: remove it first"
done
start=$SECONDS
scratch=$(mktemp -d /tmp/srt-deb-test.XXXXXX)
chmod 0755 "$scratch"  # nobody's working directory is inside
purge() { DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq srt-sandbox-dev srt-sandbox >/dev/null 2>&1 || true; }
trap 'purge; rm -rf "$scratch"' EXIT

scripts/package.sh "$build" >"$scratch/package.log" 2>&1 || { cat "$scratch/package.log"; fail "scripts/package.sh failed"; }
grep -E '^[EWIPX]: ' "$scratch/package.log" || true  # lintian's remarks (overridden ones are silent)
deb=$(realpath "$build"/packages/srt-sandbox_*.deb)
dev=$(realpath "$build"/packages/srt-sandbox-dev_*.deb)
version=$(dpkg-deb -f "$deb" Version)
echo "deb_test: built $(basename "$deb") and $(basename "$dev") in $((SECONDS - start)) s"

# Contents: root-owned, 0755 directories and programs, 0644 files; every part where it belongs.
for d in "$deb" "$dev"; do
  dpkg-deb -c "$d" >"$scratch/contents"
  awk '$2 != "root/root" { print "deb_test: not root/root: " $0; bad = 1 } END { exit bad }' "$scratch/contents" ||
    fail "$(basename "$d") has files not owned by root"
  while read -r mode _ _ _ _ path _; do
    case $mode:$path in
      d*:*) want=drwxr-xr-x ;;
      *:./usr/bin/* | *:./usr/libexec/srt/*) want=-rwxr-xr-x ;;
      *) want=-rw-r--r-- ;;
    esac
    [[ $mode == "$want" ]] || fail "$(basename "$d"): $path is $mode, not $want"
  done <"$scratch/contents"
done
dpkg-deb -c "$deb" | awk '{ print $6 }' >"$scratch/runtime-files"
for f in usr/bin/srt usr/bin/srt-attach usr/bin/srt-poller usr/bin/srt-mcp usr/lib/systemd/system/srt-mcp.service \
         usr/share/man/man8/srt-mcp.8.gz usr/libexec/srt/srt-init usr/libexec/srt/srt-toolbox \
         usr/share/srt/srt-settings.schema.json usr/share/srt/policies/default.json \
         usr/lib/systemd/system/srt-poller.service usr/share/man/man1/srt.1.gz usr/share/man/man1/srt-attach.1.gz \
         usr/share/man/man5/srt-settings.5.gz usr/share/man/man8/srt-poller.8.gz \
         usr/share/bash-completion/completions/srt usr/share/bash-completion/completions/srt-poller \
         usr/share/zsh/vendor-completions/_srt usr/share/zsh/vendor-completions/_srt-poller \
         usr/share/doc/srt-sandbox/copyright usr/share/doc/srt-sandbox/changelog.Debian.gz \
         usr/lib/tmpfiles.d/srt.conf; do
  grep -qx "./$f" "$scratch/runtime-files" || fail "srt-sandbox does not hold /$f"
done
! grep -E '\.a$|/include/|/pkgconfig/|/cmake/' "$scratch/runtime-files" || fail "srt-sandbox holds development files"
dpkg-deb -c "$dev" | awk '{ print $6 }' | grep -q '/libsrt-sandbox\.a$' || fail "srt-sandbox-dev holds no libsrt-sandbox.a"
depends=$(dpkg-deb -f "$deb" Depends)
# libssl: srt and srt-poller load it with dlopen (SRT_LAZY_OPENSSL), which dpkg-shlibdeps cannot
# see; packaging/CMakeLists.txt names it.
for want in bubblewrap libc6 libssl; do
  [[ $depends == *"$want"* ]] || fail "srt-sandbox's Depends lacks $want: $depends"
done
echo "deb_test: Depends: $depends"

# Install as a user would, with apt-get resolving the Depends.
export DEBIAN_FRONTEND=noninteractive
apt-get install -y -qq "$deb" "$dev" >"$scratch/apt.log" 2>&1 || { cat "$scratch/apt.log"; fail "apt-get install failed"; }
dpkg -L srt-sandbox srt-sandbox-dev | sort -u >"$scratch/installed"

# From the installed files only: nothing of the build tree is on PATH or named.
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
[[ $(/usr/bin/srt --version) == "srt ${version%-*}" ]] || fail "srt --version: $(/usr/bin/srt --version)"
[[ $(/usr/bin/srt-attach --version) == "srt-attach ${version%-*}" ]] || fail "srt-attach --version: $(/usr/bin/srt-attach --version)"
/usr/bin/srt-poller --version >/dev/null || fail "srt-poller --version failed"
/usr/bin/srt-mcp --version >/dev/null || fail "srt-mcp --version failed"
grep -qx 'ExecStart=/usr/bin/srt-mcp --config /etc/srt-mcp/srt-mcp.json' \
  /usr/lib/systemd/system/srt-mcp.service || fail "srt-mcp's unit's ExecStart is not /usr/bin/srt-mcp"
grep -qx 'ExecStart=/usr/bin/srt-poller --environment-key-file /etc/srt-poller/environment-key --log-format json' \
  /usr/lib/systemd/system/srt-poller.service || fail "the unit's ExecStart is not /usr/bin/srt-poller"

# A sandboxed command: its write in the working directory passes, one in /etc is refused.
sandboxed() {  # sandboxed USER: run as USER (root or nobody) in a directory of its own
  local user=$1 dir=$scratch/work-$1 out rc=0 as=()
  mkdir -p "$dir"
  [[ $user == root ]] || { chown "$user" "$dir"; as=(setpriv --reuid="$user" --regid="$(id -g "$user")" --clear-groups); }
  out=$(cd "$dir" && "${as[@]}" env -i PATH="$PATH" HOME=/nonexistent /usr/bin/srt \
          -s /usr/share/srt/policies/default.json \
          -c 'echo ok > inside.txt && cat inside.txt; echo no > /etc/srt-deb-test' 2>&1) || rc=$?
  [[ $rc -eq 1 ]] || fail "as $user: srt exited $rc, not 1 (the refused write's status): $out"
  grep -qx ok <<<"$out" || fail "as $user: the allowed write did not print ok: $out"
  grep -q 'Read-only file system' <<<"$out" || fail "as $user: the write to /etc was not refused as read-only: $out"
  [[ $(cat "$dir/inside.txt") == ok ]] || fail "as $user: inside.txt is not on the host"
  [[ ! -e /etc/srt-deb-test ]] || fail "as $user: the sandbox wrote /etc/srt-deb-test"
  echo "deb_test: as $user, the sandbox wrote inside.txt and was refused /etc"
}
sandboxed root
sandboxed nobody

# Man pages and completion where the system's tools find them.
for page in srt srt-attach srt-settings srt-poller; do
  man -w "$page" | grep -q "^/usr/share/man/man[158]/$page\.[158]\.gz$" || fail "man -w $page: $(man -w "$page" 2>&1)"
done
MANWIDTH=80 man srt 2>/dev/null | grep -q 'run a command in a sandbox' || fail "man srt does not show the page"
bash -c 'source /usr/share/bash-completion/completions/srt && source /usr/share/bash-completion/completions/srt-poller &&
         complete -p srt srt-poller' >/dev/null || fail "the installed bash completion does not load"

# libsrt, embedded through the installed pkg-config file, runs a command with the installed srt-init.
init=$(pkg-config --variable=initpath srt-sandbox)
[[ $(realpath "$init") == /usr/libexec/srt/srt-init ]] || fail "pkg-config's initpath is $init"
# shellcheck disable=SC2046  # pkg-config's flags are words
g++ -o "$scratch/embed" examples/embed_libsrt.cc -DEMBED_SRT_INIT_PATH="\"$init\"" \
  $(pkg-config --cflags --libs srt-sandbox) || fail "building embed_libsrt.cc against srt-sandbox-dev failed"
# shellcheck disable=SC2016  # $GREETING is the sandboxed shell's
out=$("$scratch/embed" -- /bin/sh -c 'echo "$GREETING"' 2>&1) || fail "the embedding program failed: $out"
grep -q "hello from the embedding program" <<<"$out" || fail "the embedding program printed: $out"
echo "deb_test: installed; srt, man pages, completion and libsrt work from /usr"

# Purge: every file the packages installed is gone, and their own directories with them.
apt-get purge -y -qq srt-sandbox-dev srt-sandbox >"$scratch/apt.log" 2>&1 || { cat "$scratch/apt.log"; fail "apt-get purge failed"; }
while IFS= read -r f; do
  [[ -d $f && ! -L $f ]] && continue  # shared directories (/usr/bin) stay; own ones are checked below
  [[ ! -e $f && ! -L $f ]] || fail "left after purge: $f"
done <"$scratch/installed"
# The directories that are the packages' own (/usr/libexec/srt, /usr/share/srt, the doc, include
# and cmake package folders): every one with srt in its name.
while IFS= read -r d; do
  [[ ! -e $d ]] || fail "left after purge: $d"
done < <(grep -i '/[^/]*srt[^/]*$' "$scratch/installed" | grep -v '\.')
! dpkg-query -W srt-sandbox srt-sandbox-dev >/dev/null 2>&1 || fail "dpkg still knows the packages after purge"
echo "deb_test: purged, nothing left; $((SECONDS - start)) s in all"
