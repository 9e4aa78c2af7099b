// SPDX-License-Identifier: Apache-2.0
// Glob validation, segment matching and expansion over an FsView.
#include "policy/glob.h"

#include <algorithm>
#include <cstdint>
#include <deque>
#include <optional>
#include <set>
#include <utility>

#include "base/path.h"
#include "base/strings.h"

namespace srt::policy {
namespace {

// Same limit as the kernel's MAXSYMLINKS: a longer chain fails with ELOOP there too.
constexpr size_t kMaxSymlinkChain = 40;

// ---- Characters ------------------------------------------------------------------------------

// Each byte of an invalid UTF-8 sequence decodes to U+DC80..U+DCFF (Python's "surrogateescape").
// Strict UTF-8 never encodes surrogates, so these values cannot collide with real characters.
constexpr uint32_t kRawByteBase = 0xDC00;

// Decodes the character at s[i] (i < s.size()) and advances i past it. Invalid sequences
// (truncated, overlong, surrogates, > U+10FFFF) consume exactly one byte, so decoding a run of
// bytes does not depend on what follows a complete sequence.
uint32_t NextChar(std::string_view s, size_t& i) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  if (b0 < 0x80) {
    ++i;
    return b0;
  }
  size_t len = 0;
  uint32_t cp = 0;
  uint32_t min = 0;
  if ((b0 & 0xE0u) == 0xC0u) {
    len = 2;
    cp = b0 & 0x1Fu;
    min = 0x80;
  } else if ((b0 & 0xF0u) == 0xE0u) {
    len = 3;
    cp = b0 & 0x0Fu;
    min = 0x800;
  } else if ((b0 & 0xF8u) == 0xF0u) {
    len = 4;
    cp = b0 & 0x07u;
    min = 0x10000;
  }
  bool valid = len != 0 && s.size() - i >= len;
  for (size_t k = 1; valid && k < len; ++k) {
    const auto b = static_cast<unsigned char>(s[i + k]);
    if ((b & 0xC0u) != 0x80u) {
      valid = false;
    } else {
      cp = (cp << 6) | (b & 0x3Fu);
    }
  }
  if (valid && (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))) valid = false;
  if (!valid) {
    ++i;
    return kRawByteBase + b0;
  }
  i += len;
  return cp;
}

std::vector<uint32_t> DecodeAll(std::string_view s) {
  std::vector<uint32_t> out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) out.push_back(NextChar(s, i));
  return out;
}

// ---- One segment -----------------------------------------------------------------------------

enum class SegmentError {
  kNone,
  kTrailingBackslash,
  kUnterminatedClass,
  kPosixClass,
  kReversedRange,
  kBrace,
  kDoubleStar,
};

struct CharClass {
  bool negated = false;
  std::vector<std::pair<uint32_t, uint32_t>> ranges;  // inclusive
};

enum class TokenKind { kChar, kAny, kStar, kClass };

struct Token {
  TokenKind kind;
  uint32_t ch = 0;  // kChar
  size_t cls = 0;   // kClass: index into CompiledSegment::classes
};

// A segment parsed leniently: syntax problems are recorded (the first one wins) and parsing
// goes on as if the offending character were literal, so MatchSegment never fails.
struct CompiledSegment {
  std::vector<Token> tokens;
  std::vector<CharClass> classes;
  bool has_wildcard = false;  // any kAny, kStar or kClass token
  SegmentError error = SegmentError::kNone;
  std::string error_detail;  // kReversedRange: the range as written

  void Fail(SegmentError e, std::string detail = {}) {
    if (error == SegmentError::kNone) {
      error = e;
      error_detail = std::move(detail);
    }
  }
};

// Reads one class member at seg[j] (j < seg.size()), honouring `\` escapes. Returns nullopt
// when a `\` ends the segment (the class is then unterminated).
std::optional<uint32_t> ClassChar(std::string_view seg, size_t& j, CompiledSegment& out) {
  if (seg[j] == '\\') {
    if (j + 1 >= seg.size()) return std::nullopt;
    ++j;
    return NextChar(seg, j);
  }
  if (seg[j] == '[' && j + 1 < seg.size() &&
      (seg[j + 1] == ':' || seg[j + 1] == '.' || seg[j + 1] == '=')) {
    out.Fail(SegmentError::kPosixClass);
  }
  return NextChar(seg, j);
}

// Parses the class starting at seg[i] == '['. On success appends a kClass token and returns the
// index just past the closing ']'; returns nullopt if the class is unterminated.
std::optional<size_t> ParseClass(std::string_view seg, size_t i, CompiledSegment& out) {
  CharClass cls;
  size_t j = i + 1;
  if (j < seg.size() && (seg[j] == '!' || seg[j] == '^')) {
    cls.negated = true;
    ++j;
  }
  bool first = true;
  CompiledSegment scratch;  // collects member errors; merged only if the class terminates
  while (true) {
    if (j >= seg.size()) return std::nullopt;
    if (seg[j] == ']' && !first) break;
    first = false;
    const size_t lo_start = j;
    std::optional<uint32_t> lo = ClassChar(seg, j, scratch);
    if (!lo) return std::nullopt;
    uint32_t hi = *lo;
    if (j + 1 < seg.size() && seg[j] == '-' && seg[j + 1] != ']') {
      ++j;
      std::optional<uint32_t> h = ClassChar(seg, j, scratch);
      if (!h) return std::nullopt;
      hi = *h;
      if (hi < *lo) {
        scratch.Fail(SegmentError::kReversedRange, std::string(seg.substr(lo_start, j - lo_start)));
        continue;  // matches nothing
      }
    }
    cls.ranges.emplace_back(*lo, hi);
  }
  if (scratch.error != SegmentError::kNone) out.Fail(scratch.error, scratch.error_detail);
  out.classes.push_back(std::move(cls));
  out.tokens.push_back(Token{TokenKind::kClass, 0, out.classes.size() - 1});
  out.has_wildcard = true;
  return j + 1;
}

CompiledSegment CompileSegment(std::string_view seg) {
  CompiledSegment out;
  size_t i = 0;
  while (i < seg.size()) {
    const char c = seg[i];
    if (c == '\\') {
      if (i + 1 >= seg.size()) {
        out.Fail(SegmentError::kTrailingBackslash);
        out.tokens.push_back(Token{TokenKind::kChar, '\\'});
        ++i;
        continue;
      }
      ++i;
      out.tokens.push_back(Token{TokenKind::kChar, NextChar(seg, i)});
    } else if (c == '*') {
      // Two adjacent unescaped stars are only meaningful as the whole segment `**`.
      if (!out.tokens.empty() && out.tokens.back().kind == TokenKind::kStar) {
        if (seg != "**") out.Fail(SegmentError::kDoubleStar);
        ++i;
        continue;  // `**` matches like `*` within a segment
      }
      out.tokens.push_back(Token{TokenKind::kStar});
      out.has_wildcard = true;
      ++i;
    } else if (c == '?') {
      out.tokens.push_back(Token{TokenKind::kAny});
      out.has_wildcard = true;
      ++i;
    } else if (c == '[') {
      if (std::optional<size_t> next = ParseClass(seg, i, out)) {
        i = *next;
      } else {
        out.Fail(SegmentError::kUnterminatedClass);
        out.tokens.push_back(Token{TokenKind::kChar, '['});
        ++i;
      }
    } else {
      if (c == '{' || c == '}') out.Fail(SegmentError::kBrace);
      out.tokens.push_back(Token{TokenKind::kChar, NextChar(seg, i)});
    }
  }
  return out;
}

bool MatchOne(const CompiledSegment& p, const Token& t, uint32_t c) {
  switch (t.kind) {
    case TokenKind::kChar:
      return t.ch == c;
    case TokenKind::kAny:
      return true;
    case TokenKind::kClass: {
      const CharClass& cls = p.classes[t.cls];
      bool in = std::any_of(cls.ranges.begin(), cls.ranges.end(),
                            [c](const auto& r) { return r.first <= c && c <= r.second; });
      return in != cls.negated;
    }
    case TokenKind::kStar:
      break;
  }
  return false;
}

// Classic single-backtrack wildcard matching: O(|pattern| * |name|), no recursion. Correct for
// several stars because a star never needs to give back what a later star can absorb.
bool MatchCompiled(const CompiledSegment& p, std::string_view name) {
  const std::vector<uint32_t> s = DecodeAll(name);
  const std::vector<Token>& t = p.tokens;
  size_t pi = 0;
  size_t si = 0;
  size_t star_pi = t.size();  // none yet
  size_t star_si = 0;
  while (si < s.size()) {
    if (pi < t.size()) {
      if (t[pi].kind == TokenKind::kStar) {
        star_pi = pi++;
        star_si = si;
        continue;
      }
      if (MatchOne(p, t[pi], s[si])) {
        ++pi;
        ++si;
        continue;
      }
    }
    if (star_pi == t.size()) return false;
    pi = star_pi + 1;
    si = ++star_si;
  }
  while (pi < t.size() && t[pi].kind == TokenKind::kStar) ++pi;
  return pi == t.size();
}

// Removes the escaping backslashes of a segment without wildcards: `a\*b` -> `a*b`.
std::string Unescape(std::string_view seg) {
  std::string out;
  out.reserve(seg.size());
  for (size_t i = 0; i < seg.size(); ++i) {
    if (seg[i] == '\\' && i + 1 < seg.size()) ++i;
    out += seg[i];
  }
  return out;
}

// ---- Whole patterns --------------------------------------------------------------------------

struct Segment {
  enum class Kind { kLiteral, kWildcard, kGlobstar };
  Kind kind;
  std::string literal;       // kLiteral: the unescaped name
  CompiledSegment compiled;  // kWildcard
};

Error PatternError(std::string_view pattern, std::string_view what) {
  return MakeError(Errc::kInvalidArgument, strings::Quote(pattern) + ": " + std::string(what));
}

std::string SegmentErrorText(const CompiledSegment& c) {
  switch (c.error) {
    case SegmentError::kTrailingBackslash:
      return "'\\' at the end of a path segment escapes nothing";
    case SegmentError::kUnterminatedClass:
      return "unterminated '[' character class (write '\\[' for a literal '[')";
    case SegmentError::kPosixClass:
      return "POSIX character classes ('[:alpha:]') are not supported; list the characters";
    case SegmentError::kReversedRange:
      return "reversed range " + strings::Quote(c.error_detail) + " in a character class";
    case SegmentError::kBrace:
      return "brace expansion ('{a,b}') is not supported; list each path separately";
    case SegmentError::kDoubleStar:
      return "'**' must be a whole path segment";
    case SegmentError::kNone:
      break;
  }
  return "invalid pattern";
}

// Splits and compiles a pattern; every ValidateGlob rule lives here.
Result<std::vector<Segment>> CompilePattern(std::string_view pattern) {
  if (pattern.empty()) return PatternError(pattern, "a glob pattern must not be empty");
  if (pattern.find('\0') != std::string_view::npos) {
    return PatternError(pattern, "a glob pattern must not contain a NUL byte");
  }
  if (!path::IsAbsolute(pattern)) {
    return PatternError(pattern, "a glob pattern must be an absolute path");
  }
  std::vector<Segment> segments;
  if (pattern == "/") return segments;
  size_t start = 1;
  while (start <= pattern.size()) {
    size_t end = pattern.find('/', start);
    if (end == std::string_view::npos) end = pattern.size();
    const std::string_view raw = pattern.substr(start, end - start);
    start = end + 1;
    if (raw.empty()) {
      return PatternError(pattern, "empty path segment (a '//' or a trailing '/')");
    }
    if (raw == "**") {
      segments.push_back(Segment{Segment::Kind::kGlobstar, {}, {}});
      continue;
    }
    CompiledSegment compiled = CompileSegment(raw);
    if (compiled.error != SegmentError::kNone) {
      return PatternError(pattern, SegmentErrorText(compiled));
    }
    if (compiled.has_wildcard) {
      segments.push_back(Segment{Segment::Kind::kWildcard, {}, std::move(compiled)});
      continue;
    }
    std::string literal = Unescape(raw);
    if (literal == "." || literal == "..") {
      return PatternError(pattern,
                          "'.' and '..' segments are not allowed; normalise the path first");
    }
    segments.push_back(Segment{Segment::Kind::kLiteral, std::move(literal), {}});
  }
  return segments;
}

// ---- Expansion -------------------------------------------------------------------------------

// A directory reached by the walk: how the pattern spells it, and the symlink-free path it
// resolves to (used for every FsView call, so relative symlinks and `..` in targets resolve as
// the kernel would resolve them).
struct Node {
  std::string spelled;
  std::string real;
};

class Expander {
 public:
  Expander(const FsView& fs, std::string_view pattern, const GlobLimits& limits)
      : fs_(fs), pattern_(pattern), limits_(limits) {}

  Result<GlobResult> Run(std::vector<Segment> segments) {
    // A trailing `**` means "the path itself and everything below", i.e. the path itself;
    // consecutive `**` are one `**`.
    while (!segments.empty() && segments.back().kind == Segment::Kind::kGlobstar) {
      segments.pop_back();
    }
    std::vector<Segment> segs;
    for (Segment& s : segments) {
      if (s.kind == Segment::Kind::kGlobstar && !segs.empty() &&
          segs.back().kind == Segment::Kind::kGlobstar) {
        continue;
      }
      segs.push_back(std::move(s));
    }

    if (segs.empty()) {
      if (fs_.TypeOf("/") != FileType::kMissing) SRT_RETURN_IF_ERROR(AddMatch("/"));
      return Finish();
    }

    std::vector<Node> frontier{Node{"/", "/"}};
    for (size_t i = 0; i < segs.size() && !frontier.empty(); ++i) {
      next_.clear();
      if (segs[i].kind == Segment::Kind::kGlobstar) {
        // Never last (trailing ones were dropped) and never followed by another `**`.
        const size_t j = i + 1;
        SRT_RETURN_IF_ERROR(Globstar(frontier, segs[j], j + 1 == segs.size()));
        i = j;
      } else {
        const bool last = i + 1 == segs.size();
        for (const Node& node : frontier) {
          if (segs[i].kind == Segment::Kind::kLiteral) {
            SRT_RETURN_IF_ERROR(Apply(segs[i], last, node, nullptr));
            continue;
          }
          SRT_ASSIGN_OR_RETURN(std::optional<std::vector<DirEntry>> entries, List(node));
          if (entries) SRT_RETURN_IF_ERROR(Apply(segs[i], last, node, &*entries));
        }
      }
      frontier = TakeNext();
    }
    return Finish();
  }

 private:
  enum class LinkOutcome { kDirectory, kNotDirectory, kUnresolvable };
  struct LinkTarget {
    LinkOutcome outcome;
    std::string real;  // kDirectory: the resolved, symlink-free directory
  };

  // The sorted entries of a directory, or nullopt once it is recorded as unlistable.
  Result<std::optional<std::vector<DirEntry>>> List(const Node& node) {
    Result<std::vector<DirEntry>> listed = fs_.List(node.real);
    if (!listed.has_value()) {
      unlistable_.insert(node.spelled);
      return std::optional<std::vector<DirEntry>>();
    }
    visited_ += listed->size();
    if (visited_ > limits_.max_visited) {
      return MakeError(Errc::kInvalidArgument, strings::Quote(pattern_) + " visits more than " +
                                                   std::to_string(limits_.max_visited) +
                                                   " directory entries; narrow the pattern");
    }
    std::vector<DirEntry> entries = std::move(listed).value();
    std::sort(entries.begin(), entries.end(),
              [](const DirEntry& a, const DirEntry& b) { return a.name < b.name; });
    return std::optional<std::vector<DirEntry>>(std::move(entries));
  }

  Result<void> AddMatch(std::string spelled) {
    matches_.insert(std::move(spelled));
    if (matches_.size() > limits_.max_matches) {
      return MakeError(Errc::kInvalidArgument,
                       strings::Quote(pattern_) + " matches more than " +
                           std::to_string(limits_.max_matches) +
                           " paths; narrow the pattern or deny a parent directory");
    }
    return Ok();
  }

  // Follows the symlink `name` in the directory `parent_real` like the kernel would (a
  // realpath-style walk: each component is looked up, links are spliced in, `..` pops the
  // resolved prefix), through at most kMaxSymlinkChain links.
  LinkTarget ResolveLink(const std::string& parent_real, const std::string& name) const {
    std::string resolved = parent_real;
    std::deque<std::string> pending{name};
    size_t links = 0;
    while (!pending.empty()) {
      std::string c = std::move(pending.front());
      pending.pop_front();
      if (c == ".") continue;
      if (c == "..") {
        resolved = std::string(path::Parent(resolved));
        continue;
      }
      std::string candidate = path::Join(resolved, c);
      const FileType type = fs_.TypeOf(candidate);
      if (type == FileType::kSymlink) {
        if (++links > kMaxSymlinkChain) return {LinkOutcome::kUnresolvable, {}};
        Result<std::string> target = fs_.ReadLink(candidate);
        if (!target.has_value()) return {LinkOutcome::kUnresolvable, {}};
        if (target->empty()) return {LinkOutcome::kNotDirectory, {}};  // ENOENT, as the kernel
        if (path::IsAbsolute(*target)) resolved = "/";
        std::vector<std::string_view> parts = path::Components(*target);
        for (auto it = parts.rbegin(); it != parts.rend(); ++it) pending.emplace_front(*it);
        continue;
      }
      if (type == FileType::kDirectory) {
        resolved = std::move(candidate);
        continue;
      }
      // A link to a socket, fifo or device is ordinary; something uninspectable that the
      // chain must pass *through* may hide a directory, so it is reported.
      if (type == FileType::kOther && !pending.empty()) return {LinkOutcome::kUnresolvable, {}};
      return {LinkOutcome::kNotDirectory, {}};
    }
    return {LinkOutcome::kDirectory, std::move(resolved)};
  }

  // The directory the entry `name` of `parent` leads to, if any. `type` is what List or TypeOf
  // said about it; only TypeOf's kOther is ambiguous (it also means "could not inspect"), so a
  // kOther from a listing is taken as a socket/fifo/device.
  std::optional<Node> ChildDir(const Node& parent, const std::string& name, FileType type,
                               bool from_listing) {
    std::string spelled = path::Join(parent.spelled, name);
    switch (type) {
      case FileType::kDirectory:
        return Node{std::move(spelled), path::Join(parent.real, name)};
      case FileType::kSymlink: {
        LinkTarget target = ResolveLink(parent.real, name);
        if (target.outcome == LinkOutcome::kDirectory) {
          return Node{std::move(spelled), std::move(target.real)};
        }
        if (target.outcome == LinkOutcome::kUnresolvable) unlistable_.insert(std::move(spelled));
        return std::nullopt;
      }
      case FileType::kOther:
        if (!from_listing) unlistable_.insert(std::move(spelled));
        return std::nullopt;
      case FileType::kMissing:
      case FileType::kRegular:
        break;
    }
    return std::nullopt;
  }

  // Applies one literal or wildcard segment to `node`: adds matches (last segment) or queues
  // the directories to continue from in next_. Wildcards need `entries` (node's listing).
  Result<void> Apply(const Segment& seg, bool last, const Node& node,
                     const std::vector<DirEntry>* entries) {
    if (seg.kind == Segment::Kind::kLiteral) {
      const FileType type = fs_.TypeOf(path::Join(node.real, seg.literal));
      if (last) {
        if (type != FileType::kMissing) {
          SRT_RETURN_IF_ERROR(AddMatch(path::Join(node.spelled, seg.literal)));
        }
      } else if (std::optional<Node> child = ChildDir(node, seg.literal, type, false)) {
        next_.push_back(std::move(*child));
      }
      return Ok();
    }
    for (const DirEntry& e : *entries) {
      if (!MatchCompiled(seg.compiled, e.name)) continue;
      if (last) {
        SRT_RETURN_IF_ERROR(AddMatch(path::Join(node.spelled, e.name)));
      } else if (std::optional<Node> child = ChildDir(node, e.name, e.type, true)) {
        next_.push_back(std::move(*child));
      }
    }
    return Ok();
  }

  // `**` followed by `next`: a breadth-first walk from each base over directories and
  // symlinks to directories, applying `next` in every directory reached (base included). One
  // visited set (by IdOf) for the whole step cuts symlink loops and overlapping bases.
  Result<void> Globstar(const std::vector<Node>& bases, const Segment& next, bool next_last) {
    std::set<std::pair<unsigned long long, unsigned long long>> seen;
    auto first_visit = [&](const Node& dir) -> bool {
      Result<FileId> id = fs_.IdOf(dir.real);
      if (!id.has_value()) {
        unlistable_.insert(dir.spelled);
        return false;
      }
      return seen.emplace(id->dev, id->ino).second;
    };
    for (const Node& base : bases) {
      if (!first_visit(base)) continue;
      std::deque<std::pair<Node, size_t>> queue;
      queue.emplace_back(base, 0);
      while (!queue.empty()) {
        auto [dir, depth] = std::move(queue.front());
        queue.pop_front();
        SRT_ASSIGN_OR_RETURN(std::optional<std::vector<DirEntry>> entries, List(dir));
        if (!entries) continue;
        SRT_RETURN_IF_ERROR(Apply(next, next_last, dir, &*entries));
        for (const DirEntry& e : *entries) {
          if (e.type != FileType::kDirectory && e.type != FileType::kSymlink) continue;
          std::optional<Node> child = ChildDir(dir, e.name, e.type, true);
          if (!child || !first_visit(*child)) continue;
          if (depth + 1 > limits_.max_depth) {
            return PatternError(pattern_, "the directory tree under " +
                                              strings::Quote(base.spelled) + " is deeper than " +
                                              std::to_string(limits_.max_depth) + " levels");
          }
          queue.emplace_back(std::move(*child), depth + 1);
        }
      }
    }
    return Ok();
  }

  // next_, sorted and de-duplicated by spelling, so each step is deterministic.
  std::vector<Node> TakeNext() {
    std::vector<Node> out = std::move(next_);
    next_.clear();
    std::sort(out.begin(), out.end(),
              [](const Node& a, const Node& b) { return a.spelled < b.spelled; });
    out.erase(std::unique(out.begin(), out.end(),
                          [](const Node& a, const Node& b) { return a.spelled == b.spelled; }),
              out.end());
    return out;
  }

  GlobResult Finish() {
    return GlobResult{std::vector<std::string>(matches_.begin(), matches_.end()),
                      std::vector<std::string>(unlistable_.begin(), unlistable_.end())};
  }

  const FsView& fs_;
  std::string_view pattern_;
  const GlobLimits& limits_;
  size_t visited_ = 0;
  std::set<std::string> matches_;
  std::set<std::string> unlistable_;
  std::vector<Node> next_;
};

}  // namespace

bool HasGlobMeta(std::string_view s) {
  for (size_t i = 0; i < s.size(); ++i) {
    switch (s[i]) {
      case '\\':
        ++i;  // the next character is literal
        break;
      case '*':
      case '?':
      case '[':
      case '{':
      case '}':
        return true;
      default:
        break;
    }
  }
  return false;
}

Result<void> ValidateGlob(std::string_view pattern) {
  SRT_RETURN_IF_ERROR(CompilePattern(pattern));
  return Ok();
}

bool MatchSegment(std::string_view pattern_segment, std::string_view name) {
  return MatchCompiled(CompileSegment(pattern_segment), name);
}

Result<GlobResult> ExpandGlob(const FsView& fs, std::string_view pattern,
                              const GlobLimits& limits) {
  SRT_ASSIGN_OR_RETURN(std::vector<Segment> segments, CompilePattern(pattern));
  return Expander(fs, pattern, limits).Run(std::move(segments));
}

}  // namespace srt::policy
