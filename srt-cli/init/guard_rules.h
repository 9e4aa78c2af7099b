// SPDX-License-Identifier: Apache-2.0
// srt-init guard rules: which changes to a name the write guard refuses. Pure and freestanding
// (no libc, no system calls): the agent answers the rules' questions about the filesystem through
// a Probe. Unit-tested from the hosted suite.
//
// What the rules protect, and why (docs/filesystem.md has the long form):
//  - Protected paths that did not exist at start (mandatory denies, denyWrite, denyRead, the
//    settings file): they cannot be created, nothing below them can be made or written (the host
//    may create one of them later), and no symlink or moved-in directory may stand for one of
//    their ancestors (it would make the path exist with the command's content).
//  - Protected paths that existed at start: a read-only mount covers each, but a mount sits on
//    a directory entry, and the kernel detaches it in every other mount namespace when the host
//    renames over or unlinks that entry (an editor's save, `sed -i`, `git checkout`). So they
//    are refused by rule as well: not written, replaced, linked, made executable or created
//    again, and no symlink or moved-in directory stands for an ancestor. While the mount holds,
//    the kernel would refuse the same calls; the guard answers with the errno it would give.
//  - git, below the guard's roots (the write roots): no `.git` entry appears anywhere (a new
//    repository, a gitfile or a symlink would make the host's git read a configuration the
//    command wrote); no directory becomes a git directory (HEAD with objects and refs, or with
//    commondir: a bare repository the host's git would discover); and in every git directory the
//    entries through which git reads configuration or runs programs are neither created,
//    replaced, written, hard-linked nor made executable: config, config.worktree (both allowed
//    with allowGitConfig), commondir, gitdir, hooks/ and what is in it, remotes/, branches/,
//    rebase-merge/ and rebase-apply/ (their todo lists hold `exec` lines), and
//    objects/info/alternates and http-alternates (objects read from outside the repository);
//    objects/, refs/ and objects/info/ are not replaced by a symlink or a moved-in tree.
//  What the rules look at and cannot see (an unreadable directory) counts as there, and a place
//  the guard cannot name is refused: the rules fail closed.
//  Everything else passes: ordinary git work (objects, refs, the index, HEAD, logs, stash,
//  FETCH_HEAD) writes none of these.
#pragma once

#include <stddef.h>
#include <stdint.h>

namespace srt::init::guard {

inline constexpr size_t kMaxRoots = 256;

struct Config {
  const char* git_roots[kMaxRoots] = {};  // absolute sandbox paths
  size_t git_root_count = 0;
  const char* private_roots[kMaxRoots] = {};  // absolute; nothing below them reaches the host
  size_t private_root_count = 0;
  const char* const* blocked = nullptr;  // protected paths that did not exist (absolute)
  size_t blocked_count = 0;
  const char* const* mounted = nullptr;  // protected paths that existed: read-only mounts
  size_t mounted_count = 0;
  bool allow_git_config = false;
};

enum class Change : uint8_t {
  kCreate,      // a new, empty entry: a file, directory, node or symlink
  kLinkIn,      // a new name for an existing file (hard link)
  kMoveIn,      // an existing entry renamed to this name (replacing what was there, or not)
  kWrite,       // an existing file opened for writing, or truncated
  kLinkSource,  // an existing file given a second name elsewhere (its hard link could be written)
  kExecutable,  // an execute bit set on an existing file
  kMoveOut,     // an existing entry renamed away from this name (only protected paths care)
};
// What a kCreate or kMoveIn puts at the name.
enum class Kind : uint8_t { kFile, kDirectory, kSymlink, kOther };

// kReadOnly: a protected path that a read-only mount covered at start (the guard answers with
// the errno that mount gives); kProtectedPath: one that did not exist then.
enum class Verdict : uint8_t { kAllow, kProtectedPath, kNewRepository, kGitMetadata, kReadOnly };

// Questions about the directory D where the change happens.
class Probe {
 public:
  // Whether D (up = 0), its parent (1) or its grandparent (2) has an entry `name` (of any
  // type, not following a symlink).
  virtual bool Has(int up, const char* name) = 0;
  // Whether D is on the sandbox's private tmpfs (its TMPDIR's). A private root exempts D from
  // the rules only then: the directory that tmpfs is mounted on is the host's, and the host can
  // remove or rename it while the sandbox runs, after which the same name leads to the host's
  // disk. A probe that cannot tell answers false.
  virtual bool OnPrivateFileSystem() = 0;

 protected:
  ~Probe() = default;
};

namespace detail {

inline size_t Len(const char* s) {
  size_t n = 0;
  while (s[n]) ++n;
  return n;
}
inline char Lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }
// Case-insensitively (a case-folding directory would make CONFIG the same entry as config).
inline bool NameIs(const char* a, size_t alen, const char* b) {
  size_t blen = Len(b);
  if (alen != blen) return false;
  for (size_t i = 0; i < alen; ++i) {
    if (Lower(a[i]) != Lower(b[i])) return false;
  }
  return true;
}
inline bool NameIs(const char* a, const char* b) { return NameIs(a, Len(a), b); }
// `p` is `root` or lies below it (both absolute and normalised).
inline bool Within(const char* p, size_t plen, const char* root) {
  size_t rlen = Len(root);
  if (rlen == 1 && root[0] == '/') return plen > 0 && p[0] == '/';
  if (plen < rlen) return false;
  for (size_t i = 0; i < rlen; ++i) {
    if (p[i] != root[i]) return false;
  }
  return plen == rlen || p[rlen] == '/';
}
// `dir` joined with `name` equals `p`, or (ancestor) lies strictly above it.
inline bool JoinedIs(const char* dir, size_t dlen, const char* name, size_t nlen, const char* p,
                     bool ancestor) {
  const bool root = dlen == 1;  // "/"
  const size_t flen = (root ? 1 : dlen + 1) + nlen;
  size_t plen = Len(p);
  if (ancestor ? plen <= flen || p[flen] != '/' : plen != flen) return false;
  size_t at = 0;
  for (size_t i = 0; i < dlen && !root; ++i, ++at) {
    if (p[at] != dir[i]) return false;
  }
  if (p[at++] != '/') return false;
  for (size_t i = 0; i < nlen; ++i, ++at) {
    if (p[at] != name[i]) return false;
  }
  return true;
}
// The `up`-th last component of `dir` (0: its own name), or an empty span.
inline void ComponentOf(const char* dir, size_t dlen, int up, const char*& out, size_t& out_len) {
  size_t end = dlen;
  for (int level = 0;; ++level) {
    size_t start = end;
    while (start > 0 && dir[start - 1] != '/') --start;
    if (level == up) {
      out = dir + start;
      out_len = end - start;
      return;
    }
    if (start == 0) break;
    end = start - 1;
  }
  out = dir;
  out_len = 0;
}
inline bool IsGitDir(Probe& probe, int up) {
  return probe.Has(up, "HEAD") &&
         (probe.Has(up, "commondir") || (probe.Has(up, "objects") && probe.Has(up, "refs")));
}

}  // namespace detail

// The verdict on `change` of the entry `name` in the directory `dir` (its absolute path in the
// sandbox, or "" when the guard could not tell where it is: then only the rules that need no
// path apply, as if inside a guard root). `kind` matters for kCreate and kMoveIn only.
inline Verdict Judge(const Config& config, Change change, Kind kind, const char* dir,
                     const char* name, Probe& probe) {
  using detail::NameIs;
  const size_t nlen = detail::Len(name);
  if (nlen == 0 || NameIs(name, ".") || NameIs(name, "..")) return Verdict::kAllow;
  const bool known = dir[0] == '/';
  const size_t dlen = detail::Len(dir);
  const bool arrives =
      change == Change::kCreate || change == Change::kLinkIn || change == Change::kMoveIn;

  if (known) {
    // A symlink, or a directory that arrives with its contents, at an ancestor would make the
    // protected path exist; an empty directory or a file cannot.
    const bool stands_for_tree =
        kind == Kind::kSymlink || (kind == Kind::kDirectory && change == Change::kMoveIn);
    for (size_t i = 0; i < config.blocked_count; ++i) {
      const char* b = config.blocked[i];
      // At the path, or below it (the host may have made it since).
      if (detail::JoinedIs(dir, dlen, name, nlen, b, /*ancestor=*/false) ||
          detail::Within(dir, dlen, b)) {
        return Verdict::kProtectedPath;
      }
      if (arrives && stands_for_tree &&
          detail::JoinedIs(dir, dlen, name, nlen, b, /*ancestor=*/true)) {
        return Verdict::kProtectedPath;
      }
    }
    for (size_t i = 0; i < config.mounted_count; ++i) {
      const char* m = config.mounted[i];
      // Moved away, the host's file would leave the place the rule names.
      if (change == Change::kMoveOut) {
        if (detail::JoinedIs(dir, dlen, name, nlen, m, /*ancestor=*/false)) {
          return Verdict::kReadOnly;
        }
        continue;
      }
      if (detail::JoinedIs(dir, dlen, name, nlen, m, /*ancestor=*/false)) return Verdict::kReadOnly;
      if (arrives && stands_for_tree &&
          detail::JoinedIs(dir, dlen, name, nlen, m, /*ancestor=*/true)) {
        return Verdict::kReadOnly;
      }
    }
  }

  if (change == Change::kMoveOut) return Verdict::kAllow;  // what arrives is judged where it does

  bool guarded = !known;
  for (size_t i = 0; known && i < config.git_root_count; ++i) {
    guarded = guarded || detail::Within(dir, dlen, config.git_roots[i]);
  }
  for (size_t i = 0; known && guarded && i < config.private_root_count; ++i) {
    if (detail::Within(dir, dlen, config.private_roots[i]) && probe.OnPrivateFileSystem()) {
      guarded = false;
    }
  }
  if (!guarded) return Verdict::kAllow;

  if (NameIs(name, ".git")) return Verdict::kGitMetadata;

  // A directory must not become a git directory (a bare repository the host's git discovers):
  // the entry that would complete one is refused.
  const bool repo_part = NameIs(name, "HEAD") || NameIs(name, "objects") || NameIs(name, "refs") ||
                         NameIs(name, "commondir");
  const bool is_git_dir = detail::IsGitDir(probe, 0);
  if (arrives && repo_part && !is_git_dir) {
    auto has = [&](const char* part) { return NameIs(name, part) || probe.Has(0, part); };
    if (has("HEAD") && (has("commondir") || (has("objects") && has("refs")))) {
      return Verdict::kNewRepository;
    }
  }

  // The entries of a git directory through which git reads configuration or runs programs.
  if (is_git_dir) {
    static const char* const kNames[] = {"commondir", "gitdir",       "hooks",       "remotes",
                                         "branches",  "rebase-merge", "rebase-apply"};
    for (const char* n : kNames) {
      if (NameIs(name, n)) return Verdict::kGitMetadata;
    }
    if (!config.allow_git_config && (NameIs(name, "config") || NameIs(name, "config.worktree"))) {
      return Verdict::kGitMetadata;
    }
  }
  // git reads objects and refs through these directories: none of them may be swapped for a
  // symlink (to a store elsewhere) or for a tree moved in (with an info/alternates of its own).
  const bool replaced = change == Change::kMoveIn || change == Change::kLinkIn ||
                        (change == Change::kCreate && kind == Kind::kSymlink);
  if (replaced && is_git_dir && (NameIs(name, "objects") || NameIs(name, "refs"))) {
    return Verdict::kGitMetadata;
  }
  if (!known) return Verdict::kAllow;
  // ... and what is inside those of them that are directories.
  const char* own;
  size_t own_len;
  detail::ComponentOf(dir, dlen, 0, own, own_len);
  if ((NameIs(own, own_len, "hooks") || NameIs(own, own_len, "rebase-merge") ||
       NameIs(own, own_len, "rebase-apply") || NameIs(own, own_len, "remotes") ||
       NameIs(own, own_len, "branches")) &&
      detail::IsGitDir(probe, 1)) {
    return Verdict::kGitMetadata;
  }
  if (replaced && NameIs(own, own_len, "objects") && NameIs(name, "info") &&
      detail::IsGitDir(probe, 1)) {
    return Verdict::kGitMetadata;
  }
  if (NameIs(own, own_len, "info") &&
      (NameIs(name, "alternates") || NameIs(name, "http-alternates"))) {
    const char* parent;
    size_t parent_len;
    detail::ComponentOf(dir, dlen, 1, parent, parent_len);
    if (NameIs(parent, parent_len, "objects") && detail::IsGitDir(probe, 2)) {
      return Verdict::kGitMetadata;
    }
  }
  return Verdict::kAllow;
}

inline const char* VerdictName(Verdict v) {
  switch (v) {
    case Verdict::kAllow:
      return "allowed";
    case Verdict::kProtectedPath:
      return "a protected path";
    case Verdict::kNewRepository:
      return "would make a new git repository";
    case Verdict::kGitMetadata:
      return "git metadata";
    case Verdict::kReadOnly:
      return "a read-only path";
  }
  return "?";
}

}  // namespace srt::init::guard
