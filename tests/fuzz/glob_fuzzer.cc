// SPDX-License-Identifier: Apache-2.0
// libFuzzer target for policy/glob: syntax checks, segment matching and expansion over a small
// in-memory tree (tests/unit/policy/fake_fs_view.h).
//
// Input, newline-separated:
//   line 1   a glob pattern (ValidateGlob, HasGlobMeta, ExpandGlob)
//   line 2   a file name (MatchSegment against line 1 and against each of its segments)
//   line 3+  tree entries, one per line: a kind byte then a path, e.g. "d/a/b", "f/a/x.pem",
//            "l/a/link>../t" (symlink with target), "u/a/locked" (unreadable dir),
//            "n/a/sealed" (unsearchable dir), "s/a/sock" (socket); other kinds are ignored.
//            Paths are normalised; entries that conflict with earlier ones are skipped.
// Properties checked (a violation traps): a syntax error from ValidateGlob is exactly
// ExpandGlob's error; results are sorted, unique, absolute, within max_matches and exist in the
// tree; `*` matches every name; a name with its metacharacters escaped matches itself.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "base/path.h"
#include "fake_fs_view.h"
#include "policy/glob.h"

namespace {

using srt::policy::FakeFsView;
using srt::policy::FakeNode;
using srt::policy::FileType;

void Check(bool ok) {
  if (!ok) __builtin_trap();
}

std::vector<std::string_view> SplitLines(std::string_view in) {
  std::vector<std::string_view> lines;
  size_t start = 0;
  while (start <= in.size() && lines.size() < 66) {
    size_t end = in.find('\n', start);
    if (end == std::string_view::npos) end = in.size();
    lines.push_back(in.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

std::string EscapeMeta(std::string_view name) {
  std::string out;
  for (char c : name) {
    if (c == '\\' || c == '*' || c == '?' || c == '[' || c == ']' || c == '{' || c == '}') {
      out += '\\';
    }
    out += c;
  }
  return out;
}

void BuildTree(const std::vector<std::string_view>& lines, FakeFsView& fs) {
  for (size_t i = 2; i < lines.size(); ++i) {
    std::string_view line = lines[i];
    if (line.size() < 2) continue;
    std::string_view rest = line.substr(1);
    FakeNode node;
    switch (line[0]) {
      case 'd':
        node = srt::policy::kDir;
        break;
      case 'f':
        node = srt::policy::kFile;
        break;
      case 'u':
        node = srt::policy::kUnreadableDir;
        break;
      case 'n':
        node = srt::policy::kUnsearchableDir;
        break;
      case 's':
        node = srt::policy::kSpecial;
        break;
      case 'l': {
        size_t arrow = rest.find('>');
        if (arrow == std::string_view::npos) continue;
        node = srt::policy::Symlink(std::string(rest.substr(arrow + 1)));
        rest = rest.substr(0, arrow);
        break;
      }
      default:
        continue;
    }
    std::string p = srt::path::Normalize("/" + std::string(rest));
    try {
      fs.Add(p, node);
    } catch (const std::invalid_argument&) {
      // A path below a file, or a redeclaration with another type: skip it.
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 4096) return 0;
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  const std::vector<std::string_view> lines = SplitLines(in);
  const std::string_view pattern = lines[0];
  const std::string_view name = lines.size() > 1 ? lines[1] : std::string_view();

  // Segment matching never fails, and two identities hold for every name.
  (void)srt::policy::MatchSegment(pattern, name);
  for (std::string_view seg : srt::path::Components(pattern)) {
    (void)srt::policy::MatchSegment(seg, name);
  }
  Check(srt::policy::MatchSegment("*", name));
  Check(srt::policy::MatchSegment(EscapeMeta(name), name));
  (void)srt::policy::HasGlobMeta(pattern);

  FakeFsView fs;
  BuildTree(lines, fs);
  const srt::policy::GlobLimits limits{/*max_depth=*/6, /*max_visited=*/2000, /*max_matches=*/64};
  srt::Result<void> valid = srt::policy::ValidateGlob(pattern);
  srt::Result<srt::policy::GlobResult> r = srt::policy::ExpandGlob(fs, pattern, limits);
  if (!valid.has_value()) {
    Check(!r.has_value() && r.error().message() == valid.error().message());
    return 0;
  }
  if (!r.has_value()) return 0;  // a limit was hit
  const std::vector<std::string>& m = r->matches;
  Check(m.size() <= limits.max_matches);
  for (size_t i = 0; i < m.size(); ++i) {
    Check(srt::path::IsAbsolute(m[i]));
    Check(i == 0 || m[i - 1] < m[i]);
    Check(fs.TypeOf(m[i]) != FileType::kMissing);
  }
  const std::vector<std::string>& u = r->unlistable;
  for (size_t i = 0; i < u.size(); ++i) Check(i == 0 || u[i - 1] < u[i]);
  return 0;
}
