// SPDX-License-Identifier: Apache-2.0
#include "poller/support/poller_process.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

namespace srt::testing {
namespace {

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

std::string PollerProcess::DefaultBinary() {
  if (const char* b = getenv("SRT_POLLER_BINARY")) return b;
#ifdef SRT_POLLER_BINARY_PATH
  return SRT_POLLER_BINARY_PATH;
#else
  return "srt-poller";
#endif
}

Result<std::unique_ptr<PollerProcess>> PollerProcess::Start(
    const std::vector<std::string>& args, const std::map<std::string, std::string>& env,
    const std::string& binary) {
  std::unique_ptr<PollerProcess> p(new PollerProcess());
  char tmpl[] = "/tmp/srt-poller-test-XXXXXX";
  if (mkdtemp(tmpl) == nullptr) return SysError("mkdtemp");
  p->dir_ = tmpl;
  std::string bin = binary.empty() ? DefaultBinary() : binary;
  std::vector<std::string> argv_s = {bin};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<std::string> env_s = {
      "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/root",
      "LANG=C.UTF-8"};
  for (const auto& [k, v] : env) env_s.push_back(k + "=" + v);
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (auto& e : env_s) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::string out = p->dir_ + "/stdout";
  std::string err = p->dir_ + "/stderr";
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) return SysError("fork");
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);
    int in = open("/dev/null", O_RDONLY);
    int o = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int e = open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (in < 0 || o < 0 || e < 0) _exit(127);
    dup2(in, 0);
    dup2(o, 1);
    dup2(e, 2);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    execve(argv[0], argv.data(), envp.data());
    _exit(127);
  }
  p->pid_ = pid;
  return p;
}

PollerProcess::~PollerProcess() {
  if (pid_ > 0 && !exit_code_) {
    kill(pid_, SIGKILL);
    int st = 0;
    waitpid(pid_, &st, 0);
  }
  if (!dir_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
}

void PollerProcess::Signal(int sig) const {
  if (pid_ > 0 && !exit_code_) kill(pid_, sig);
}

std::optional<int> PollerProcess::Wait(std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!exit_code_) {
    int st = 0;
    pid_t r = waitpid(pid_, &st, WNOHANG);
    if (r == pid_) {
      exit_code_ = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
      break;
    }
    if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return exit_code_;
}

bool PollerProcess::running() { return !Wait(std::chrono::milliseconds(0)).has_value(); }

std::string PollerProcess::Logs() const { return ReadAll(dir_ + "/stderr"); }
std::string PollerProcess::Stdout() const { return ReadAll(dir_ + "/stdout"); }

bool PollerProcess::WaitForLog(const std::string& needle, std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if (Logs().find(needle) != std::string::npos) return true;
    if (!running() || std::chrono::steady_clock::now() >= deadline) {
      return Logs().find(needle) != std::string::npos;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

size_t PollerProcess::CountLog(const std::string& needle) const {
  std::istringstream in(Logs());
  size_t n = 0;
  for (std::string line; std::getline(in, line);) n += line.find(needle) != std::string::npos;
  return n;
}

std::string PollerProcess::RootWithMountAt(const std::string& mount_point) const {
  const std::string proc = "/proc/" + std::to_string(pid_);
  std::error_code ec;
  for (const auto& task : std::filesystem::directory_iterator(proc + "/task", ec)) {
    std::ifstream in(task.path() / "mountinfo");
    for (std::string line; std::getline(in, line);) {
      std::istringstream fields(line);
      std::string id, parent, dev, root, point;
      fields >> id >> parent >> dev >> root >> point;
      if (point == mount_point) return task.path().string() + "/root";
    }
  }
  return "";
}

}  // namespace srt::testing
