// SPDX-License-Identifier: Apache-2.0
// policy/glob: validates filesystem policy globs and expands them against an FsView.
//
// Usage: the caller turns a settings entry into an absolute, normalised path (`~` and relative
// paths expanded, `//`, `/./`, `..` and a trailing `/` removed: path::Normalize), then
//   1. HasGlobMeta(p) decides whether the entry is a pattern at all;
//   2. ValidateGlob(p) rejects bad syntax early, at settings-load time, with a message naming `p`;
//   3. ExpandGlob(fs, p) lists the filesystem when the sandbox launches and returns the paths the
//      pattern matches *as spelled through the pattern* (not canonicalised: `/a/link/x.pem`
//      where `/a/link` is a symlink); the caller canonicalises them and handles `unlistable`.
//
// Pattern syntax, one path segment at a time (segments are split on `/`; matching works on
// UTF-8 characters, and each byte of an invalid UTF-8 sequence counts as one character):
//   *        any run of characters, including none and including a leading '.'
//   ?        exactly one character, including a leading '.'
//   [...]    one character of a class: `[abc]`, ranges `[a-z0-9]`, negation `[!a]` or `[^a]`;
//            a `]` first in the class (after any `!`/`^`) is literal, a `-` first or last is
//            literal, `\` escapes inside a class too
//   \c       the character c itself (`\*`, `\[`, `\\`, `\{`)
//   **       as a whole segment: zero or more directories
// Rejected (ValidateGlob): `**` inside a segment (`a**`, `**x`), brace expansion (`{`/`}`
// outside a class), an unterminated `[`, POSIX classes (`[[:alpha:]]`), reversed ranges
// (`[z-a]`), a `\` that ends a segment, NUL bytes, relative or empty patterns, and empty, `.`
// or `..` segments. `*` and `?` deliberately match dotfiles: deny lists must catch `.env`.
//
// Everything here is pure: the filesystem is only reached through the FsView it is given.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "policy/fs_view.h"
#include "srt/result.h"

namespace srt::policy {

// Bounds on one ExpandGlob call. Hitting any of them is an error, never a silent truncation: a
// partial expansion of a deny pattern would leave files readable.
struct GlobLimits {
  // Directory levels a `**` may descend below the directory it starts from (the pattern's
  // literal base, or each directory the segments before the `**` reach).
  size_t max_depth = 32;
  // Directory entries examined per pattern (each listing counts every entry it returns).
  size_t max_visited = 200000;
  // Paths one pattern may produce.
  size_t max_matches = 4096;
};

// True if `s` contains an unescaped `*`, `?`, `[`, `{` or `}`, i.e. if it must go through
// ValidateGlob/ExpandGlob rather than be used as a literal path. Braces count so that
// `{a,b}` reaches ValidateGlob and is rejected with a helpful message instead of being
// silently treated as a file name.
bool HasGlobMeta(std::string_view s);

// Checks the syntax of an absolute, normalised pattern (see the file comment for the rules).
// Fails with Errc::kInvalidArgument and a message that starts with the quoted pattern, e.g.
// `'/a/b**': '**' must be a whole path segment`. A pattern without glob metacharacters is valid
// (ExpandGlob then tests whether that one path exists).
[[nodiscard]] Result<void> ValidateGlob(std::string_view pattern);

// True if the path component `name` matches the single pattern segment `pattern_segment`
// (no `/` handling: both are one component). `**` behaves like `*` here. The segment should
// have passed ValidateGlob; malformed syntax is matched leniently and never crashes (an
// unterminated `[` and a trailing `\` are literal characters, a reversed range matches nothing).
bool MatchSegment(std::string_view pattern_segment, std::string_view name);

struct GlobResult {
  // Absolute paths as spelled through the pattern (not canonicalised), sorted, unique. Each
  // exists (lstat) when listed: final symlinks are matched themselves, dangling or not.
  std::vector<std::string> matches;
  // Paths the walk needed to look inside but could not, sorted, unique: directories whose
  // List failed (EACCES...), symlinks whose chain is longer than 40 links or could not be
  // read, and literal path components FsView::TypeOf could only report as kOther. The caller
  // decides how to hide them (e.g. deny their nearest inspectable ancestor).
  std::vector<std::string> unlistable;
};

// Expands `pattern` (absolute, normalised) against `fs`.
//   - Literal segments are never listed: they are looked up with TypeOf, so a missing literal
//     prefix gives no matches (not an error) and a searchable-but-unreadable directory on the
//     way is no obstacle.
//   - A trailing `/**` means "the path itself and everything below": `/a/b/**` yields `/a/b`
//     if anything exists there. `**` elsewhere matches zero or more directories.
//   - Wildcard and `**` steps descend into directories and into symlinks that resolve to
//     directories (chains resolved through `fs`, at most 40 links). A `**` walk never visits
//     the same directory (by FsView::IdOf) twice, which cuts symlink loops; the walk is
//     breadth-first over name-sorted entries, so each directory is reached by its shortest
//     spelling and the output is deterministic.
// Errors (Errc::kInvalidArgument, message starting with the quoted pattern): any ValidateGlob
// error; more than `max_visited` directory entries examined; more than `max_matches` matches;
// a `**` walk that finds directories more than `max_depth` levels below its base. Failures of
// `fs` are not errors: they end up in `unlistable` or mean "no match".
[[nodiscard]] Result<GlobResult> ExpandGlob(const FsView& fs, std::string_view pattern,
                                            const GlobLimits& limits = {});

}  // namespace srt::policy
