// SPDX-License-Identifier: Apache-2.0
// MCP test client over the stdio transport (MCP spec, "Transports": stdio messages are JSON-RPC
// 2.0, one per line, UTF-8, with no embedded newlines; the server writes nothing else on stdout).
#include "mcp_session.h"

#include <fcntl.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <thread>

namespace srt::mcp {

namespace {

using Clock = std::chrono::steady_clock;

int MillisLeft(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  return left.count() <= 0 ? 0 : static_cast<int>(left.count());
}

std::vector<std::string> AsIdentity(it::Identity who, const std::vector<std::string>& argv) {
  if (who == it::Identity::kRoot) {
    return argv;
  }
  const passwd* pw = getpwnam("nobody");
  if (!pw) {
    throw std::runtime_error("no user 'nobody' on this host");
  }
  std::vector<std::string> out = {"setpriv", "--reuid=" + std::to_string(pw->pw_uid),
                                  "--regid=" + std::to_string(pw->pw_gid), "--clear-groups", "--"};
  out.insert(out.end(), argv.begin(), argv.end());
  return out;
}

}  // namespace

McpSession::McpSession(it::Identity who, const std::vector<std::string>& argv,
                       const std::string& cwd, const std::string& home) {
  // A server that dies mid-test must fail the test, not kill the test binary with SIGPIPE.
  signal(SIGPIPE, SIG_IGN);
  int in[2], out[2], err[2];
  if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0) {
    throw std::runtime_error(std::string("pipe2: ") + std::strerror(errno));
  }
  std::vector<std::string> full = AsIdentity(who, argv);
  std::vector<std::string> env = {"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + home,
                                  "LANG=C.UTF-8"};
  std::vector<char*> cargv, cenv;
  for (std::string& a : full) {
    cargv.push_back(a.data());
  }
  cargv.push_back(nullptr);
  for (std::string& e : env) {
    cenv.push_back(e.data());
  }
  cenv.push_back(nullptr);

  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, in[0], 0);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  posix_spawn_file_actions_adddup2(&fa, err[1], 2);
  posix_spawn_file_actions_addchdir_np(&fa, cwd.c_str());
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setpgroup(&attr, 0);  // own group: the destructor kills all of it
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  sigset_t pipe_default;
  sigemptyset(&pipe_default);
  sigaddset(&pipe_default, SIGPIPE);
  posix_spawnattr_setsigdefault(&attr, &pipe_default);
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  int rc = posix_spawnp(&pid_, cargv[0], &fa, &attr, cargv.data(), cenv.data());
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  close(in[0]);
  close(out[1]);
  close(err[1]);
  in_ = in[1];
  out_ = out[0];
  errfd_ = err[0];
  if (rc != 0) {
    pid_ = -1;
    exited_ = true;
    throw std::runtime_error(std::string("spawn '") + cargv[0] + "': " + std::strerror(rc));
  }
}

McpSession::~McpSession() {
  if (!exited_) {
    KillGroup();
  }
  for (int fd : {in_, out_, errfd_}) {
    if (fd >= 0) {
      close(fd);
    }
  }
}

void McpSession::KillGroup() {
  if (pid_ <= 0 || exited_) {
    return;
  }
  // srt, bwrap and the sandbox's PID 1 die with it (bwrap --die-with-parent); the sandboxed
  // server is in bwrap's own session but goes with its PID namespace.
  kill(-pid_, SIGKILL);
  waitpid(pid_, nullptr, 0);
  exited_ = true;
}

void McpSession::Send(const nlohmann::json& message) {
  // dump() escapes control characters, so the message is one line as the stdio transport needs.
  std::string line = message.dump() + "\n";
  size_t done = 0;
  while (done < line.size() && in_ >= 0) {
    ssize_t n = write(in_, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      failure_ = std::string("write to the server's stdin: ") + std::strerror(errno);
      return;
    }
    done += static_cast<size_t>(n);
  }
}

void McpSession::Notify(const std::string& method, const nlohmann::json& params) {
  Send({{"jsonrpc", "2.0"}, {"method", method}, {"params", params}});
}

std::optional<std::string> McpSession::NextLine(Clock::time_point deadline) {
  while (true) {
    size_t nl = out_buf_.find('\n');
    if (nl != std::string::npos) {
      std::string line = out_buf_.substr(0, nl);
      out_buf_.erase(0, nl + 1);
      return line;
    }
    if (out_ < 0) {
      failure_ = "the server closed its stdout";
      return std::nullopt;
    }
    int wait_ms = MillisLeft(deadline);
    if (wait_ms == 0) {
      failure_ = "no answer in time";
      return std::nullopt;
    }
    pollfd p[2] = {{out_, POLLIN, 0}, {errfd_, POLLIN, 0}};
    int ready = poll(p, errfd_ >= 0 ? 2 : 1, wait_ms);
    if (ready < 0 && errno != EINTR) {
      failure_ = std::string("poll: ") + std::strerror(errno);
      return std::nullopt;
    }
    char buf[65536];
    if (errfd_ >= 0 && (p[1].revents & (POLLIN | POLLHUP | POLLERR))) {
      ssize_t n = read(errfd_, buf, sizeof buf);
      if (n > 0) {
        err_.append(buf, static_cast<size_t>(n));
      } else {
        close(errfd_);
        errfd_ = -1;
      }
    }
    if (p[0].revents & (POLLIN | POLLHUP | POLLERR)) {
      ssize_t n = read(out_, buf, sizeof buf);
      if (n > 0) {
        out_buf_.append(buf, static_cast<size_t>(n));
      } else {
        close(out_);
        out_ = -1;
      }
    }
  }
}

std::optional<nlohmann::json> McpSession::Call(const std::string& method,
                                               const nlohmann::json& params,
                                               std::chrono::milliseconds limit) {
  long id = next_id_++;
  Send({{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", params}});
  Clock::time_point deadline = Clock::now() + limit;
  while (std::optional<std::string> line = NextLine(deadline)) {
    nlohmann::json msg = nlohmann::json::parse(*line, nullptr, /*allow_exceptions=*/false);
    if (msg.is_discarded() || !msg.is_object() || msg.value("jsonrpc", "") != "2.0") {
      stray_.push_back(*line);
      continue;
    }
    if (msg.contains("id") && msg["id"] == id &&
        (msg.contains("result") || msg.contains("error"))) {
      return msg;
    }
    if (!msg.contains("method") || msg.contains("id")) {
      unexpected_.push_back(msg);  // a response to something else, or a request to the client
    }
  }
  failure_ = method + " (id " + std::to_string(id) + "): " + failure_;
  return std::nullopt;
}

int McpSession::CloseAndWait(std::chrono::milliseconds limit) {
  if (in_ >= 0) {
    close(in_);
    in_ = -1;
  }
  return WaitForExit(limit);
}

void McpSession::Signal(int sig) {
  if (pid_ > 0 && !exited_) {
    kill(pid_, sig);
  }
}

int McpSession::WaitForExit(std::chrono::milliseconds limit) {
  Clock::time_point deadline = Clock::now() + limit;
  // Keep draining both pipes so a chatty server cannot block on a full pipe while exiting.
  while (out_ >= 0 && NextLine(deadline)) {
  }
  if (out_ < 0) {
    failure_.clear();  // EOF on stdout is what we are waiting for here
  }
  while (errfd_ >= 0 && MillisLeft(deadline) > 0) {
    pollfd p = {errfd_, POLLIN, 0};
    if (poll(&p, 1, MillisLeft(deadline)) <= 0) {
      continue;
    }
    char buf[4096];
    ssize_t n = read(errfd_, buf, sizeof buf);
    if (n > 0) {
      err_.append(buf, static_cast<size_t>(n));
    } else {
      close(errfd_);
      errfd_ = -1;
    }
  }
  while (MillisLeft(deadline) > 0) {
    int status = 0;
    pid_t r = waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      exited_ = true;
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  failure_ = "the command did not exit within " + std::to_string(limit.count()) + " ms; killed";
  KillGroup();
  return -1;
}

std::string ToolText(const nlohmann::json& result) {
  std::string text;
  if (!result.contains("content") || !result["content"].is_array()) {
    return text;
  }
  for (const nlohmann::json& item : result["content"]) {
    if (item.value("type", "") == "text") {
      if (!text.empty()) {
        text += "\n";
      }
      text += item.value("text", "");
    }
  }
  return text;
}

}  // namespace srt::mcp
