// SPDX-License-Identifier: Apache-2.0
// Toolbox: dispatch of agent_toolset_20260401 calls, and the bash tool (see toolbox.h).
#include "toolbox/toolbox.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <nlohmann/json.hpp>
#include <thread>

#include "base/strings.h"
#include "base/unique_fd.h"
#include "srt/sandbox.h"
#include "toolbox/limits.h"
#include "toolbox/text.h"
#include "toolbox/tools.h"

namespace srt::poller::toolbox {
namespace {

using Clock = std::chrono::steady_clock;

ToolResult Fail(std::string text) { return {std::move(text), true, false}; }

}  // namespace

Result<std::vector<int>> ParseDescriptorList(std::string_view text) {
  constexpr size_t kMaxDescriptors = 8;
  constexpr int kMaxDescriptor = 1023;
  auto bad = [&](const std::string& why) {
    return MakeError(Errc::kInvalidArgument, std::string(kInnerCgroupFdsVariable) + " " +
                                                 strings::Quote(text) + ": " + why);
  };
  std::vector<int> fds;
  size_t i = 0;
  while (i < text.size()) {
    size_t j = text.find(',', i);
    if (j == std::string_view::npos) j = text.size();
    std::string_view item = text.substr(i, j - i);
    if (item.empty() || item.size() > 4 ||
        item.find_first_not_of("0123456789") != std::string_view::npos) {
      return bad("expected descriptor numbers separated by ','");
    }
    const int fd = std::stoi(std::string(item));
    if (fd < 3 || fd > kMaxDescriptor) return bad("a descriptor must be from 3 to 1023");
    if (fds.size() == kMaxDescriptors) return bad("more than 8 descriptors");
    fds.push_back(fd);
    i = j + 1;
    if (j + 1 == text.size()) return bad("expected descriptor numbers separated by ','");
  }
  if (fds.empty()) return bad("expected descriptor numbers separated by ','");
  return fds;
}

Result<std::vector<int>> TakeWorkCgroupFds() {
  const char* value = std::getenv(kInnerCgroupFdsVariable);
  if (value == nullptr) return std::vector<int>();
  Result<std::vector<int>> fds = ParseDescriptorList(value);
  // After the parse: `value` points into the environment. Called at start, before any thread.
  unsetenv(kInnerCgroupFdsVariable);  // NOLINT(concurrency-mt-unsafe)
  if (!fds) return fds;
  for (int fd : *fds) {
    const int flags = fcntl(fd, F_GETFL);
    if (flags < 0)
      return SysError(std::string(kInnerCgroupFdsVariable) + ": descriptor " + std::to_string(fd));
    if ((flags & O_ACCMODE) != O_WRONLY) {
      return MakeError(Errc::kInvalidArgument, std::string(kInnerCgroupFdsVariable) +
                                                   ": descriptor " + std::to_string(fd) +
                                                   " is not open for writing only");
    }
    if (fcntl(fd, F_SETFD, FD_CLOEXEC) != 0) {
      return SysError(std::string(kInnerCgroupFdsVariable) + ": descriptor " + std::to_string(fd));
    }
  }
  return fds;
}

Result<std::unique_ptr<Toolbox>> Toolbox::Create(ToolboxOptions options) {
  SRT_ASSIGN_OR_RETURN(ConfinedRoot root, ConfinedRoot::Open(options.root));
  return std::unique_ptr<Toolbox>(new Toolbox(std::move(options), std::move(root)));
}

Toolbox::~Toolbox() = default;

namespace {

// /proc/<pid>/cgroup, or "" (a kernel file: a few hundred bytes; read at most 4 KiB).
std::string ProcCgroup(const std::string& pid) {
  UniqueFd fd(open(("/proc/" + pid + "/cgroup").c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  if (!fd) return "";
  char buf[4096];
  ssize_t n = read(fd.get(), buf, sizeof buf);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
}

}  // namespace

Result<void> Toolbox::StartShell() {
  if (shell_) return {};
  BashOptions options;
  options.shell = options_.shell;
  options.cwd = root_.path();
  options.env = options_.shell_env ? *options_.shell_env : ShellEnvironment();
  options.cgroup_fds = options_.work_cgroup_fds;
  Result<std::unique_ptr<BashSession>> started = BashSession::Start(options);
  if (!started && !work_cgroup_.empty()) {
    // What the agent left running can keep any shell from starting: a fork bomb at the pids
    // limit, a process holding the memory. The shell is gone, so its work is: end it all, once,
    // and try again.
    EndWorkProcesses();
    started = BashSession::Start(options);
  }
  if (!started) return std::move(started).error();
  shell_ = std::move(*started);
  if (work_cgroup_.empty() && !options_.work_cgroup_fds.empty()) {
    std::string cgroup = ProcCgroup(std::to_string(shell_->pid()));
    if (!cgroup.empty() && cgroup != ProcCgroup("self")) work_cgroup_ = std::move(cgroup);
  }
  return {};
}

void Toolbox::EndWorkProcesses() {
  const std::string self = std::to_string(getpid());
  // A fork bomb forks while we kill: rounds until one finds nothing, a bounded number of them
  // (the pids limit bounds each).
  for (int round = 0; round < 100; ++round) {
    DIR* d = opendir("/proc");
    if (d == nullptr) return;
    int killed = 0;
    while (const dirent* e = readdir(d)) {
      const std::string pid = e->d_name;
      if (pid.empty() || pid.find_first_not_of("0123456789") != std::string::npos) continue;
      if (pid == "1" || pid == self) continue;
      if (ProcCgroup(pid) == work_cgroup_ && kill(std::stoi(pid), SIGKILL) == 0) ++killed;
    }
    closedir(d);
    if (killed == 0) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

ToolResult Toolbox::Run(std::string_view tool, const nlohmann::json& input,
                        std::chrono::milliseconds tool_timeout, Interrupt& interrupt) {
  if (tool_timeout <= std::chrono::milliseconds::zero()) tool_timeout = kDefaultToolTimeout;
  tool_timeout = std::min(tool_timeout, kMaxTimeout);
  const Clock::time_point deadline = Clock::now() + tool_timeout;
  // The runner's deadline message (GO-SDK betasessiontoolrunner.go).
  const std::string timed_out_text =
      "tool " + GoQuote(tool) + " timed out after " + GoDuration(tool_timeout);
  static const nlohmann::json kEmpty = nlohmann::json::object();
  const nlohmann::json& in = input.is_null() ? kEmpty : input;
  if (!in.is_object()) {
    return Fail("invalid " + std::string(tool) + " input: input must be a JSON object");
  }
  try {
    if (tool == "bash") return Bash(in, deadline, tool_timeout, interrupt);
    if (tool == "read") return ReadTool(root_, in);
    if (tool == "write") return WriteTool(root_, in);
    if (tool == "edit") return EditTool(root_, in);
    if (tool == "glob") return GlobTool(root_, in);
    if (tool == "grep") {
      ToolResult r = GrepTool(root_, in, GrepContext{deadline, &interrupt});
      if (r.timed_out) return Fail(timed_out_text);
      return r;
    }
  } catch (const std::bad_alloc&) {
    throw;  // OOM is fatal (house style §2.3)
  } catch (const std::exception& e) {
    return Fail(std::string(tool) + ": internal error: " + e.what());
  }
  return Fail("unknown tool " + GoQuote(tool));
}

ToolResult Toolbox::Bash(const nlohmann::json& in, Clock::time_point deadline,
                         std::chrono::milliseconds tool_timeout, Interrupt& interrupt) {
  auto command = InputString(in, "command");
  if (!command) return Fail("invalid bash input: " + command.error().message());
  auto restart = InputBool(in, "restart");
  if (!restart) return Fail("invalid bash input: " + restart.error().message());
  auto timeout_ms = InputInt(in, "timeout_ms");
  if (!timeout_ms) return Fail("invalid bash input: " + timeout_ms.error().message());
  if (*restart) {
    shell_.reset();
    if (command->empty()) return {"bash session restarted", false, false};
  }
  if (command->empty()) return Fail("bash: command is required");
  if (command->size() > kMaxBashCommandBytes) {
    return Fail("bash: command is " + std::to_string(command->size()) + " bytes, exceeds " +
                std::to_string(kMaxBashCommandBytes) + "-byte limit");
  }
  if (auto started = StartShell(); !started) return Fail("bash: " + started.error().message());
  std::chrono::milliseconds timeout = kBashDefaultTimeout;
  if (*timeout_ms > 0)
    timeout = std::chrono::milliseconds(std::min<long long>(*timeout_ms, kMaxTimeout.count()));

  BashSession::Outcome o = shell_->Exec(*command, timeout, deadline, interrupt);
  if (o.status == BashSession::Status::kDone) {
    if (o.exit_code != 0) {
      return Fail(o.output + "\nexit code: " + std::to_string(o.exit_code));
    }
    return {std::move(o.output), false, false};
  }
  // Any other outcome leaves the shell in an unknown state (a command may still run on the
  // other side of the PTY and its marker would land in the next call): always restart.
  shell_.reset();
  switch (o.status) {
    case BashSession::Status::kTimedOut:
      return Fail(o.output + "\nsession restarted after timeout");
    case BashSession::Status::kDeadline:
      return Fail("tool \"bash\" timed out after " + GoDuration(tool_timeout));
    case BashSession::Status::kInterrupted:
      return {"", true, true};
    default:
      return Fail("bash: " + o.error);
  }
}

}  // namespace srt::poller::toolbox
