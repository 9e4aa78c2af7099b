// SPDX-License-Identifier: Apache-2.0
// glob and grep: search tools confined to the root (GO-SDK tools/agenttoolset/search.go).
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <re2/re2.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <functional>
#include <memory>
#include <vector>

#include "toolbox/glob_match.h"
#include "toolbox/limits.h"
#include "toolbox/text.h"
#include "toolbox/tools.h"

namespace srt::poller::toolbox {
namespace {

using Clock = std::chrono::steady_clock;

constexpr char kTruncationNotice[] = "[output truncated]";

ToolResult Fail(std::string text) { return {std::move(text), true, false}; }
ToolResult Ok(std::string text) { return {std::move(text), false, false}; }

enum class Visit { kContinue, kSkipDir, kStop };

// Walks a tree without following symlinks (entries are lstat'ed and only real directories are
// opened, with O_NOFOLLOW, relative to their parent's fd), in lexical order like Go's
// filepath.WalkDir, at most kWalkMaxDepth levels deep. Unreadable directories are skipped.
class Walker {
 public:
  // `rel` is the entry's path relative to the walk's root; `dirfd` is its parent directory.
  using Fn = std::function<Visit(const std::string& rel, const struct stat& st, int dirfd,
                                 const std::string& name)>;
  explicit Walker(Fn fn) : fn_(std::move(fn)) {}

  // Walks the directory `fd` (O_RDONLY | O_DIRECTORY, owned). False when the callback stopped.
  bool Run(int fd) { return WalkOpen(fd, "", 0); }

 private:
  bool WalkOpen(int fd, const std::string& rel, int depth) {
    DIR* d = fdopendir(fd);
    if (!d) {
      close(fd);
      return true;
    }
    // The tree is the agent's: a directory of a million long names must not become a million
    // strings in our memory (whose reserve is small: we share a cgroup with the agent's work).
    // The names held, in this directory and those above it, never exceed the entries a walk may
    // visit; a directory with more is cut to those readdir gives first, then sorted.
    std::vector<std::string> names;
    while (held_ < kWalkMaxEntries) {
      dirent* e = readdir(d);
      if (e == nullptr) break;
      if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
      names.emplace_back(e->d_name);
      ++held_;
    }
    std::sort(names.begin(), names.end());
    bool go_on = true;
    int dfd = ::dirfd(d);
    for (const auto& name : names) {
      struct stat st;
      if (fstatat(dfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
      std::string child = rel.empty() ? name : rel + "/" + name;
      Visit v = fn_(child, st, dfd, name);
      if (v == Visit::kStop) {
        go_on = false;
        break;
      }
      if (S_ISDIR(st.st_mode) && v != Visit::kSkipDir && depth + 1 < kWalkMaxDepth) {
        int cfd = openat(dfd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (cfd >= 0 && !WalkOpen(cfd, child, depth + 1)) {
          go_on = false;
          break;
        }
      }
    }
    closedir(d);
    held_ -= names.size();
    return go_on;
  }

  Fn fn_;
  size_t held_ = 0;  // names read and not yet done with, across the directories being walked
};

}  // namespace

ToolResult GlobTool(const ConfinedRoot& root, const nlohmann::json& in) {
  auto pattern = InputString(in, "pattern");
  if (!pattern) return Fail("invalid glob input: " + pattern.error().message());
  auto path = InputString(in, "path");
  if (!path) return Fail("invalid glob input: " + path.error().message());
  if (pattern->empty()) return Fail("glob: pattern is required");
  if ((*pattern)[0] == '/') return Fail("glob: absolute pattern not permitted");
  std::string rel;
  if (!path->empty()) {
    auto r = root.Resolve(*path);
    if (!r) {
      if (r.error().code() == Errc::kDenied) return Fail("glob: " + r.error().message());
      return Ok("no matches");  // Go's walk ignores an unreadable root
    }
    if (!r->exists) return Ok("no matches");
    rel = r->rel;
  }
  if (HasParentDirSegment(*pattern)) {
    return Fail("glob: pattern " + GoQuote(*pattern) + " must not contain a \"..\" segment");
  }
  auto dir = root.OpenBeneath(rel, O_PATH | O_DIRECTORY);
  if (!dir) return Ok("no matches");  // not a directory (or gone): nothing below it
  std::string display = root.Absolute(rel);

  // Newest first, and in walk order among equals (Go's stable sort). Only the best
  // kGlobResultLimit are kept while walking: the agent's tree must not make 50,000 paths of
  // 4 KiB each in our memory.
  struct Entry {
    std::string path;
    long long mtime_ns;
    size_t seq;
  };
  auto before = [](const Entry& a, const Entry& b) {
    return a.mtime_ns != b.mtime_ns ? a.mtime_ns > b.mtime_ns : a.seq < b.seq;
  };
  std::vector<Entry> entries;  // a heap whose top is the worst kept
  size_t visited = 0;
  Walker walker([&](const std::string& child, const struct stat& st, int, const std::string&) {
    if (++visited > kWalkMaxEntries) return Visit::kStop;
    if (!GlobMatch(*pattern, child)) return Visit::kContinue;
    Entry e{"", static_cast<long long>(st.st_mtim.tv_sec) * 1'000'000'000LL + st.st_mtim.tv_nsec,
            visited};
    if (entries.size() == kGlobResultLimit && !before(e, entries.front())) return Visit::kContinue;
    e.path = display == "/" ? "/" + child : display + "/" + child;
    if (entries.size() == kGlobResultLimit) {
      std::pop_heap(entries.begin(), entries.end(), before);
      entries.back() = std::move(e);
    } else {
      entries.push_back(std::move(e));
    }
    std::push_heap(entries.begin(), entries.end(), before);
    return Visit::kContinue;
  });
  int fd = openat(dir->get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) walker.Run(fd);
  if (entries.empty()) return Ok("no matches");
  std::sort_heap(entries.begin(), entries.end(), before);
  std::string out;
  for (size_t i = 0; i < entries.size(); ++i) {
    if (i > 0) out += '\n';
    out += entries[i].path;
  }
  return Ok(std::move(out));
}

namespace {

// True when the interrupt fd is readable and Check() asks to stop.
bool Interrupted(Interrupt* interrupt) {
  if (!interrupt || interrupt->fd() < 0) return false;
  pollfd p{interrupt->fd(), POLLIN, 0};
  return poll(&p, 1, 0) > 0 && interrupt->Check();
}

// Go's regexp/syntax names for RE2's errors: the tool's contract is Go's regexp, so a bad
// pattern is told in Go's words ("error parsing regexp: missing closing ): `(a`").
std::string_view GoErrorText(RE2::ErrorCode code) {
  switch (code) {
    case RE2::NoError:
    case RE2::ErrorInternal:
      break;
    case RE2::ErrorBadEscape:
      return "invalid escape sequence";
    case RE2::ErrorBadCharClass:
      return "invalid character class";
    case RE2::ErrorBadCharRange:
      return "invalid character class range";
    case RE2::ErrorMissingBracket:
      return "missing closing ]";
    case RE2::ErrorMissingParen:
      return "missing closing )";
    case RE2::ErrorUnexpectedParen:
      return "unexpected )";
    case RE2::ErrorTrailingBackslash:
      return "trailing backslash at end of expression";
    case RE2::ErrorRepeatArgument:
      return "missing argument to repetition operator";
    case RE2::ErrorRepeatSize:
      return "invalid repeat count";
    case RE2::ErrorRepeatOp:
      return "invalid nested repetition operator";
    case RE2::ErrorBadPerlOp:
      return "invalid or unsupported Perl syntax";
    case RE2::ErrorBadUTF8:
      return "invalid UTF-8";
    case RE2::ErrorBadNamedCapture:
      return "invalid named capture";
    case RE2::ErrorPatternTooLarge:
      return "expression too large";
  }
  return "regexp/syntax: internal error";
}

// A pattern, or a part of one, in an error: at most kMaxQuotedPatternBytes of it (a pattern
// may be megabytes).
constexpr size_t kMaxQuotedPatternBytes = 256;
std::string Shortened(std::string_view s) {
  if (s.size() <= kMaxQuotedPatternBytes) return std::string(s);
  return std::string(s.substr(0, kMaxQuotedPatternBytes)) + "...";
}

// Compiles `pattern` with Go's syntax (RE2, UTF-8, Perl classes, leftmost-first) or returns
// the error result: "grep: invalid regex <pattern>: error parsing regexp: <what>: `<where>`".
Result<std::unique_ptr<RE2>> CompileGoRegexp(const std::string& pattern) {
  RE2::Options options;
  options.set_log_errors(false);    // our stderr is the session's log; the error is the result
  options.set_never_capture(true);  // only "does the line match" is asked
  auto re = std::make_unique<RE2>(pattern, options);
  if (re->ok()) return re;
  std::string message = "grep: invalid regex " + GoQuote(Shortened(pattern)) +
                        ": error parsing regexp: " + std::string(GoErrorText(re->error_code())) +
                        ": `" + Shortened(re->error_arg()) + "`";
  const std::string& arg = re->error_arg();
  if (re->error_code() == RE2::ErrorBadEscape && arg.size() == 2 && arg[1] >= '1' &&
      arg[1] <= '9') {
    message += " (Go's regexp syntax has no backreferences)";
  }
  return MakeError(Errc::kInvalidArgument, std::move(message));
}

class WalkGrep {
 public:
  WalkGrep(const RE2& re, const GrepContext& ctx) : re_(re), ctx_(ctx) {}

  // Greps one open regular file, line by line as Go's strings.Split(data, "\n") gives them (a
  // final newline leaves one empty last line); false when the search must stop. Memory: the
  // file, at most kGrepMaxFileBytes (a file that grows meanwhile is read to that size), in one
  // buffer that every file reuses. RE2 takes time linear in each line, whatever the pattern.
  bool File(int fd, const std::string& display) {
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
        static_cast<unsigned long long>(st.st_size) > kGrepMaxFileBytes) {
      return true;
    }
    data_.resize(static_cast<size_t>(st.st_size));
    size_t got = 0;
    while (got < data_.size()) {
      ssize_t n = read(fd, data_.data() + got, data_.size() - got);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      got += static_cast<size_t>(n);
    }
    data_.resize(got);
    const std::string_view data(data_);
    if (data.substr(0, 512).find('\0') != std::string_view::npos) return true;  // binary (Go)
    size_t line_no = 0, i = 0;
    for (;;) {
      size_t j = data.find('\n', i);
      size_t end = j == std::string_view::npos ? data.size() : j;
      ++line_no;
      const std::string_view line = data.substr(i, end - i);
      if (RE2::PartialMatch(re2::StringPiece(line.data(), line.size()), re_) &&
          !Push(display, line_no, line)) {
        return false;
      }
      if (j == std::string_view::npos) break;
      i = j + 1;
    }
    return true;
  }

  // Go's budget: every hit "<path>:<line>:<text>" costs its length plus a newline; the one that
  // overdraws becomes the truncation notice (and is never built: a line may be megabytes).
  bool Push(const std::string& display, size_t line_no, std::string_view line) {
    const std::string number = std::to_string(line_no);
    budget_ -= static_cast<long long>(display.size() + number.size() + line.size() + 3);
    if (budget_ < 0) {
      hits_.emplace_back(kTruncationNotice);
      return false;
    }
    std::string hit;
    hit.reserve(display.size() + number.size() + line.size() + 2);
    hit.append(display).append(":").append(number).append(":").append(line);
    hits_.push_back(std::move(hit));
    return true;
  }

  bool ShouldStop() {
    if (Clock::now() >= ctx_.deadline) {
      timed_out_ = true;
      return true;
    }
    if (Interrupted(ctx_.interrupt)) {
      interrupted_ = true;
      return true;
    }
    return false;
  }

  const RE2& re_;
  const GrepContext& ctx_;
  std::string data_;  // the file being searched
  std::vector<std::string> hits_;
  long long budget_ = static_cast<long long>(kGrepOutputLimit);
  size_t seen_ = 0;
  bool timed_out_ = false;
  bool interrupted_ = false;
};

}  // namespace

ToolResult GrepTool(const ConfinedRoot& root, const nlohmann::json& in, const GrepContext& ctx) {
  auto pattern = InputString(in, "pattern");
  if (!pattern) return Fail("invalid grep input: " + pattern.error().message());
  auto path = InputString(in, "path");
  if (!path) return Fail("invalid grep input: " + path.error().message());
  if (pattern->empty()) return Fail("grep: pattern is required");
  std::string rel;
  bool exists = true;
  if (!path->empty()) {
    auto r = root.Resolve(*path);
    if (!r) {
      if (r.error().code() == Errc::kDenied) return Fail("grep: " + r.error().message());
      return Fail("grep " + *path + ": " + r.error().message());
    }
    rel = r->rel;
    exists = r->exists;
  }
  std::string display = root.Absolute(rel);
  // Always RE2, never ripgrep where the host has it (as Go's SDK does): the contract is Go's
  // syntax, and rg's differs (backreferences and look-around with -P, other errors, its own
  // output order and file filters). The walk is Go's built-in one (runWalkGrep).
  Result<std::unique_ptr<RE2>> re = CompileGoRegexp(*pattern);
  if (!re) return Fail(re.error().message());
  WalkGrep grep(**re, ctx);
  if (exists) {
    auto fd = root.OpenBeneath(rel, O_RDONLY | O_NONBLOCK);
    struct stat st;
    if (fd && fstat(fd->get(), &st) == 0) {
      if (S_ISREG(st.st_mode)) {
        grep.File(fd->get(), display);
      } else if (S_ISDIR(st.st_mode)) {
        std::string prefix = display == "/" ? "/" : display + "/";
        Walker walker([&](const std::string& child, const struct stat& est, int dirfd,
                          const std::string& name) {
          // Symlinks are neither read nor descended: one pointing at /etc/shadow stays unread.
          if (S_ISLNK(est.st_mode)) return Visit::kContinue;
          if (S_ISDIR(est.st_mode)) {
            return name == ".git" || name == "node_modules" ? Visit::kSkipDir : Visit::kContinue;
          }
          if (!S_ISREG(est.st_mode)) return Visit::kContinue;  // FIFOs, devices, sockets
          if (++grep.seen_ > kWalkMaxEntries || grep.ShouldStop()) return Visit::kStop;
          if (static_cast<unsigned long long>(est.st_size) > kGrepMaxFileBytes) {
            return Visit::kContinue;
          }
          UniqueFd f(openat(dirfd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
          if (!f) return Visit::kContinue;
          return grep.File(f.get(), prefix + child) ? Visit::kContinue : Visit::kStop;
        });
        walker.Run(fd->release());
      }
    }
  }
  if (grep.interrupted_) return {"", true, true};
  if (grep.timed_out_) return {"", true, false, true};
  if (grep.hits_.empty()) return Ok("no matches");
  std::string out;
  for (size_t i = 0; i < grep.hits_.size(); ++i) {
    if (i > 0) out += '\n';
    out += grep.hits_[i];
  }
  return Ok(std::move(out));
}

}  // namespace srt::poller::toolbox
