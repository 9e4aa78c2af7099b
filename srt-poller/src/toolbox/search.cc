// SPDX-License-Identifier: Apache-2.0
// glob and grep: search tools confined to the root (GO-SDK tools/agenttoolset/search.go).
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <regex.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <functional>
#include <vector>

#include "base/system_text.h"
#include "sys/landlock.h"
#include "sys/spawn.h"
#include "toolbox/bash_session.h"
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

// Collects up to `cap` bytes and counts the rest (Go's cappedBuffer).
struct Capped {
  std::string data;
  size_t cap;
  bool truncated = false;
  void Append(const char* p, size_t n) {
    size_t room = cap > data.size() ? cap - data.size() : 0;
    if (n > room) truncated = true;
    data.append(p, std::min(n, room));
  }
};

// True when the interrupt fd is readable and Check() asks to stop.
bool Interrupted(Interrupt* interrupt) {
  if (!interrupt || interrupt->fd() < 0) return false;
  pollfd p{interrupt->fd(), POLLIN, 0};
  return poll(&p, 1, 0) > 0 && interrupt->Check();
}

ToolResult RunRipgrep(const std::string& rg, const std::string& pattern, const std::string& path,
                      const GrepContext& ctx) {
  int out[2], err[2];
  if (pipe2(out, O_CLOEXEC) != 0) return Fail(std::string("grep: pipe: ") + ErrnoText(errno));
  UniqueFd out_r(out[0]), out_w(out[1]);
  if (pipe2(err, O_CLOEXEC) != 0) return Fail(std::string("grep: pipe: ") + ErrnoText(errno));
  UniqueFd err_r(err[0]), err_w(err[1]);

  // --max-filesize bounds each file; the capped buffer bounds stdout. No --follow: ripgrep
  // does not follow symlinks while it walks, so it stays beneath the (resolved) path.
  std::vector<std::string> args = {rg,
                                   "-n",
                                   "--no-heading",
                                   "--max-filesize",
                                   std::to_string(kGrepMaxFileBytes),
                                   "-e",
                                   pattern,
                                   "--",
                                   path};
  UniqueFd devnull(open("/dev/null", O_RDONLY | O_CLOEXEC));
  if (!devnull) return Fail(std::string("grep: open /dev/null: ") + ErrnoText(errno));
  sys::SpawnRequest request;
  request.path = rg;
  request.argv = std::move(args);
  request.env = ShellEnvironment();
  request.fds = {{devnull.get(), 0}, {out_w.get(), 1}, {err_w.get(), 2}};
  request.new_process_group = true;  // kill_rg below ends it and whatever it started
  request.join_cgroup_fds = ctx.cgroup_fds;
  // As the shell: ripgrep reads files the agent wrote, and whatever it runs as cannot signal us.
  Result<UniqueFd> scope = sys::SignalScopeRuleset();
  if (!scope) return Fail("grep: rg failed: " + scope.error().message());
  request.landlock_ruleset_fd = *scope ? scope->get() : -1;
  Result<pid_t> spawned = sys::Spawn(request);
  if (!spawned) return Fail("grep: rg failed: " + spawned.error().message());
  const pid_t pid = *spawned;
  out_w.reset();
  err_w.reset();

  Capped stdout_buf{{}, kGrepOutputLimit};
  Capped stderr_buf{{}, kGrepStderrLimit};
  auto kill_rg = [&] {
    kill(-pid, SIGKILL);
    while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
  };
  while (out_r || err_r) {
    auto now = Clock::now();
    if (now >= ctx.deadline) {
      kill_rg();
      return {"", true, false, true};
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(ctx.deadline - now).count();
    pollfd p[3] = {{out_r ? out_r.get() : -1, POLLIN, 0},
                   {err_r ? err_r.get() : -1, POLLIN, 0},
                   {ctx.interrupt ? ctx.interrupt->fd() : -1, POLLIN, 0}};
    int n = poll(p, 3, static_cast<int>(std::min<long long>(left + 1, 60'000)));
    if (n < 0 && errno != EINTR) break;
    if (n <= 0) continue;
    if (p[2].revents != 0 && ctx.interrupt->Check()) {
      kill_rg();
      return {"", true, true};
    }
    for (int i = 0; i < 2; ++i) {
      if (p[i].revents == 0) continue;
      UniqueFd& fd = i == 0 ? out_r : err_r;
      char chunk[16384];
      ssize_t r = read(fd.get(), chunk, sizeof chunk);
      if (r > 0) {
        (i == 0 ? stdout_buf : stderr_buf).Append(chunk, static_cast<size_t>(r));
      } else if (r == 0 || errno != EINTR) {
        fd.reset();
      }
    }
  }
  int st = 0;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(st) && WEXITSTATUS(st) == 1) return Ok("no matches");
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
    std::string why = WIFEXITED(st) ? "exit status " + std::to_string(WEXITSTATUS(st))
                                    : std::string("signal: ") + SignalText(WTERMSIG(st));
    return Fail("grep: rg failed: " + why + ": " + stderr_buf.data);
  }
  std::string text = std::move(stdout_buf.data);
  if (stdout_buf.truncated) text += std::string("\n") + kTruncationNotice;
  return Ok(std::move(text));
}

// RE2-ish to POSIX ERE: the Perl classes \d and \D, which glibc's ERE lacks (\w \s \b it has).
std::string ToPosixEre(const std::string& re) {
  std::string out;
  bool in_class = false;
  for (size_t i = 0; i < re.size(); ++i) {
    char c = re[i];
    if (c == '\\' && i + 1 < re.size()) {
      char n = re[i + 1];
      if (!in_class && (n == 'd' || n == 'D')) {
        out += n == 'd' ? "[0-9]" : "[^0-9]";
      } else if (in_class && n == 'd') {
        out += "0-9";
      } else {
        out += c;
        out += n;
      }
      ++i;
      continue;
    }
    if (c == '[' && !in_class) {
      in_class = true;
      out += c;
      if (i + 1 < re.size() && re[i + 1] == '^') out += re[++i];
      if (i + 1 < re.size() && re[i + 1] == ']') out += re[++i];
      continue;
    }
    if (c == ']' && in_class) in_class = false;
    out += c;
  }
  return out;
}

struct Regex {
  regex_t re{};
  bool ok = false;
  ~Regex() {
    if (ok) regfree(&re);
  }
};

class WalkGrep {
 public:
  WalkGrep(const regex_t& re, const GrepContext& ctx) : re_(re), ctx_(ctx) {}

  // Greps one open regular file; false when the search must stop.
  bool File(int fd, const std::string& display) {
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
        static_cast<unsigned long long>(st.st_size) > kGrepMaxFileBytes) {
      return true;
    }
    std::string data;
    data.resize(static_cast<size_t>(st.st_size));
    size_t got = 0;
    while (got < data.size()) {
      ssize_t n = read(fd, data.data() + got, data.size() - got);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      got += static_cast<size_t>(n);
    }
    data.resize(got);
    if (data.substr(0, 512).find('\0') != std::string::npos) return true;  // binary
    size_t line_no = 0, i = 0;
    for (;;) {
      size_t j = data.find('\n', i);
      size_t end = j == std::string::npos ? data.size() : j;
      ++line_no;
      regmatch_t m{};
      m.rm_so = 0;
      m.rm_eo = static_cast<regoff_t>(end - i);
      if (regexec(&re_, data.c_str() + i, 1, &m, REG_STARTEND) == 0) {
        if (!Push(display + ":" + std::to_string(line_no) + ":" + data.substr(i, end - i))) {
          return false;
        }
      }
      if (j == std::string::npos) break;
      i = j + 1;
    }
    return true;
  }

  // Go's budget: every hit costs its length plus a newline; the one that overdraws becomes the
  // truncation notice.
  bool Push(std::string line) {
    budget_ -= static_cast<long long>(line.size()) + 1;
    if (budget_ < 0) {
      hits_.emplace_back(kTruncationNotice);
      return false;
    }
    hits_.push_back(std::move(line));
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

  const regex_t& re_;
  const GrepContext& ctx_;
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
  if (!ctx.rg.empty()) return RunRipgrep(ctx.rg, *pattern, display, ctx);

  Regex re;
  int rc = regcomp(&re.re, ToPosixEre(*pattern).c_str(), REG_EXTENDED | REG_NOSUB);
  if (rc != 0) {
    char msg[256];
    regerror(rc, &re.re, msg, sizeof msg);
    return Fail(std::string("grep: invalid regex: ") + msg);
  }
  re.ok = true;
  WalkGrep grep(re.re, ctx);
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
