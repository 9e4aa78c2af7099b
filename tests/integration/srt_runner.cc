// SPDX-License-Identifier: Apache-2.0
// Integration-test runner for the `srt` binary.
#include "srt_runner.h"

#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <spawn.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace srt::it {

namespace {

void RemoveTree(const std::string& path) {
  std::string cmd = "rm -rf '" + path + "'";
  if (std::system(cmd.c_str()) != 0) ADD_FAILURE() << "could not remove " << path;
}

std::string Slurp(int fd) {
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = read(fd, buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  return out;
}

}  // namespace

// SRT_TEST_SRT runs the suite against another build of srt (an older one, to see a new test fail).
const char* SrtBinary() {
  const char* other = getenv("SRT_TEST_SRT");
  return other && *other ? other : SRT_BINARY;
}
// srt-attach beside srt (both are built into one directory); SRT_TEST_SRT_ATTACH names another.
const char* SrtAttachBinary() {
  const char* other = getenv("SRT_TEST_SRT_ATTACH");
  if (other && *other) return other;
  static const std::string beside = [] {
    const std::string srt = SrtBinary();
    return srt.substr(0, srt.rfind('/') + 1) + "srt-attach";
  }();
  return beside.c_str();
}
const char* ProbeBinary() { return SRT_PROBE; }

bool SandboxingWorks() {
  static int works = -1;
  if (works < 0) {
    works = std::system(
                "bwrap --unshare-user --unshare-pid --ro-bind / / --dev /dev --proc /proc "
                "true >/dev/null 2>&1") == 0;
  }
  return works == 1;
}

bool KernelRunsI386() {
#if defined(__x86_64__)
  static int runs = -1;
  if (runs < 0) {
    // getpid through `int $0x80`: exit 0 where the kernel has IA32 emulation, SIGSEGV elsewhere.
    std::string cmd = std::string("'") + ProbeBinary() + "' raw-i386 20 >/dev/null 2>&1";
    runs = std::system(cmd.c_str()) == 0;
  }
  return runs == 1;
#else
  return false;
#endif
}

Runner::Runner(Identity who) : who_(who) {
  if (who == Identity::kUnprivileged) {
    const passwd* pw = getpwnam("nobody");
    if (!pw) throw std::runtime_error("no user 'nobody' on this host");
    uid_ = pw->pw_uid;
    gid_ = pw->pw_gid;
  }
  // Not under /tmp: srt gives sandboxes a private /tmp, and the scratch trees should exercise
  // the ordinary case (a project directory elsewhere) unless a test asks for /tmp.
  std::string base = "/var/tmp/srt-it-XXXXXX";
  if (!mkdtemp(base.data())) throw std::runtime_error("mkdtemp failed");
  chmod(base.c_str(), 0755);
  root_ = base + "/w";
  home_ = base + "/home";
  mkdir(root_.c_str(), 0755);
  mkdir(home_.c_str(), 0755);
  Chown(base);
  Chown(root_);
  Chown(home_);
}

Runner::~Runner() {
  for (auto& [pid, pipes] : running_) {
    kill(-pid, SIGKILL);
    waitpid(pid, nullptr, 0);
    close(pipes.first);
    close(pipes.second);
  }
  RemoveTree(std::string(root_.substr(0, root_.rfind('/'))));
}

void Runner::Chown(const std::string& path) const {
  if (who_ == Identity::kUnprivileged && lchown(path.c_str(), uid_, gid_) != 0) {
    ADD_FAILURE() << "chown " << path << ": " << std::strerror(errno);
  }
}

void Runner::MakeDir(const std::string& rel) const {
  std::string p = root_;
  std::stringstream parts(rel);
  std::string part;
  while (std::getline(parts, part, '/')) {
    if (part.empty()) continue;
    p += "/" + part;
    mkdir(p.c_str(), 0755);
    Chown(p);
  }
}

void Runner::WriteFile(const std::string& rel, const std::string& content) const {
  size_t slash = rel.rfind('/');
  if (slash != std::string::npos) MakeDir(rel.substr(0, slash));
  std::ofstream(Path(rel)) << content;
  Chown(Path(rel));
}

void Runner::MakeSymlink(const std::string& target, const std::string& rel) const {
  size_t slash = rel.rfind('/');
  if (slash != std::string::npos) MakeDir(rel.substr(0, slash));
  if (symlink(target.c_str(), Path(rel).c_str()) != 0) ADD_FAILURE() << "symlink " << rel;
  Chown(Path(rel));
}

bool Runner::Exists(const std::string& rel) const {
  struct stat st;
  return lstat(Path(rel).c_str(), &st) == 0;
}

std::string Runner::ReadFile(const std::string& rel) const {
  std::ifstream in(Path(rel));
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string Runner::SettingsFile(const std::string& settings) const {
  std::string dir = root_.substr(0, root_.rfind('/'));
  std::string file = dir + "/settings-" + std::to_string(settings_counter_++) + ".json";
  std::ofstream(file) << settings;
  Chown(file);
  return file;
}

std::vector<std::string> Runner::Wrap(const std::vector<std::string>& argv) const {
  if (who_ == Identity::kRoot) return argv;
  std::vector<std::string> out = {"setpriv", "--reuid=" + std::to_string(uid_),
                                  "--regid=" + std::to_string(gid_), "--clear-groups", "--"};
  out.insert(out.end(), argv.begin(), argv.end());
  return out;
}

Runner::Exec Runner::Prepare(const std::vector<std::string>& argv, const std::string& cwd,
                             std::vector<std::string> env,
                             const std::vector<std::string>& extra_env) const {
  Exec exec;
  exec.argv = Wrap(argv);
  exec.env = {"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + home_, "LANG=C.UTF-8"};
  exec.env.insert(exec.env.end(), env.begin(), env.end());
  exec.env.insert(exec.env.end(), extra_env.begin(), extra_env.end());
  for (auto& a : exec.argv) exec.c_argv.push_back(a.data());
  exec.c_argv.push_back(nullptr);
  for (auto& e : exec.env) exec.c_env.push_back(e.data());
  exec.c_env.push_back(nullptr);
  exec.dir = cwd.empty() ? root_ : (cwd[0] == '/' ? cwd : Path(cwd));
  return exec;
}

pid_t Runner::Spawn(const std::vector<std::string>& argv, const std::string& cwd,
                    const std::vector<std::string>& extra_env, int out_fd, int err_fd,
                    const std::vector<std::pair<int, int>>& fds) const {
  Exec exec = Prepare(argv, cwd, {}, extra_env);

  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, out_fd, 1);
  posix_spawn_file_actions_adddup2(&fa, err_fd, 2);
  for (const auto& [child_fd, here] : fds) posix_spawn_file_actions_adddup2(&fa, here, child_fd);
  posix_spawn_file_actions_addchdir_np(&fa, exec.dir.c_str());
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setpgroup(&attr, 0);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK);
  pid_t pid = -1;
  int rc = posix_spawnp(&pid, exec.c_argv[0], &fa, &attr, exec.c_argv.data(), exec.c_env.data());
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) throw std::runtime_error(std::string("spawn: ") + std::strerror(rc));
  return pid;
}

pid_t Runner::Start(const std::string& settings, const std::vector<std::string>& args,
                    const std::string& cwd) const {
  return StartWithFds(settings, args, {}, cwd);
}

pid_t Runner::StartWithFds(const std::string& settings, const std::vector<std::string>& args,
                           const std::vector<std::pair<int, int>>& fds,
                           const std::string& cwd) const {
  std::vector<std::string> argv = {SrtBinary(), "-s", SettingsFile(settings)};
  argv.insert(argv.end(), args.begin(), args.end());
  int out[2], err[2];
  if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0) throw std::runtime_error("pipe");
  pid_t pid = Spawn(argv, cwd, {}, out[1], err[1], fds);
  close(out[1]);
  close(err[1]);
  running_.push_back({pid, {out[0], err[0]}});
  return pid;
}

RunResult Runner::Finish(pid_t pid, std::chrono::milliseconds limit) const {
  auto it = running_.begin();
  while (it != running_.end() && it->first != pid) ++it;
  if (it == running_.end()) throw std::runtime_error("unknown pid");
  int out = it->second.first, err = it->second.second;
  running_.erase(it);
  RunResult r;
  // Read both pipes while waiting, so a chatty command cannot block on a full pipe.
  auto deadline = std::chrono::steady_clock::now() + limit;
  pollfd p[2] = {{out, POLLIN, 0}, {err, POLLIN, 0}};
  int open_pipes = 2;
  while (open_pipes > 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      kill(-pid, SIGKILL);
      ADD_FAILURE() << "srt did not finish within " << limit.count() << " ms";
      break;
    }
    if (poll(p, 2, static_cast<int>(left.count())) <= 0) continue;
    for (int i = 0; i < 2; ++i) {
      if (p[i].fd >= 0 && (p[i].revents & (POLLIN | POLLHUP))) {
        char buf[4096];
        ssize_t n = read(p[i].fd, buf, sizeof buf);
        if (n <= 0) {
          p[i].fd = -1;
          --open_pipes;
        } else {
          (i == 0 ? r.out : r.err).append(buf, static_cast<size_t>(n));
        }
      }
    }
  }
  r.out += Slurp(out);
  r.err += Slurp(err);
  close(out);
  close(err);
  int st = 0;
  waitpid(pid, &st, 0);
  r.exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  return r;
}

Runner::Terminal Runner::StartInTerminal(const std::string& settings,
                                         const std::vector<std::string>& args,
                                         const std::string& cwd) const {
  std::vector<std::string> argv = {SrtBinary(), "-s", SettingsFile(settings)};
  argv.insert(argv.end(), args.begin(), args.end());
  return StartProgramInTerminal(argv, cwd);
}

Runner::Terminal Runner::StartProgramInTerminal(const std::vector<std::string>& argv,
                                                const std::string& cwd,
                                                const std::vector<std::string>& extra_env) const {
  int master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (master < 0 || grantpt(master) != 0 || unlockpt(master) != 0) {
    throw std::runtime_error("posix_openpt");
  }
  winsize size{};
  size.ws_row = 40;
  size.ws_col = 100;
  ioctl(master, TIOCSWINSZ, &size);
  std::string slave = ptsname(master);
  Exec exec = Prepare(argv, cwd, {"TERM=xterm"}, extra_env);
  // Only async-signal-safe calls in the child: everything was prepared above.
  pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork");
  if (pid == 0) {
    // A session of its own whose controlling terminal is the pty (opened without O_NOCTTY by
    // the session leader); its process group is then the terminal's foreground group.
    setsid();
    int fd = open(slave.c_str(), O_RDWR);
    if (fd < 0) _exit(126);
    dup2(fd, 0);
    dup2(fd, 1);
    dup2(fd, 2);
    if (fd > 2) close(fd);
    if (chdir(exec.dir.c_str()) != 0) _exit(126);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    execvpe(exec.c_argv[0], exec.c_argv.data(), exec.c_env.data());
    _exit(127);
  }
  return Terminal{pid, master};
}

void Runner::Type(const Terminal& t, std::string_view keys) {
  if (write(t.master, keys.data(), keys.size()) != static_cast<ssize_t>(keys.size())) {
    ADD_FAILURE() << "could not type on the terminal: " << std::strerror(errno);
  }
}

bool Runner::WaitToSee(const Terminal& t, std::string_view needle, std::string& shown, size_t from,
                       std::chrono::milliseconds limit) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  pollfd p{t.master, POLLIN, 0};
  while (shown.find(needle, from) == std::string::npos) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    if (poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
    char buf[4096];
    ssize_t n = read(t.master, buf, sizeof buf);
    if (n <= 0) return false;  // EIO: nothing holds the terminal any more
    shown.append(buf, static_cast<size_t>(n));
  }
  return true;
}

RunResult Runner::FinishInTerminal(const Terminal& t, std::chrono::milliseconds limit,
                                   TerminalState* after) const {
  RunResult r;
  auto deadline = std::chrono::steady_clock::now() + limit;
  pollfd p{t.master, POLLIN, 0};
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      kill(t.pid, SIGKILL);
      ADD_FAILURE() << "srt did not finish within " << limit.count()
                    << " ms in the terminal; it showed: " << r.out;
      break;
    }
    if (poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
    char buf[4096];
    ssize_t n = read(t.master, buf, sizeof buf);
    if (n <= 0) break;  // EIO: nothing holds the slave any more
    r.out.append(buf, static_cast<size_t>(n));
  }
  if (after) {
    // The master reports its replica's modes and size.
    termios modes{};
    winsize size{};
    tcgetattr(t.master, &modes);
    ioctl(t.master, TIOCGWINSZ, &size);
    after->echo = (modes.c_lflag & ECHO) != 0;
    after->canonical = (modes.c_lflag & ICANON) != 0;
    after->signals = (modes.c_lflag & ISIG) != 0;
    after->rows = size.ws_row;
    after->cols = size.ws_col;
  }
  close(t.master);
  int st = 0;
  waitpid(t.pid, &st, 0);
  r.exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  return r;
}

RunResult Runner::Host(const std::vector<std::string>& argv, const std::string& cwd,
                       const std::vector<std::string>& extra_env) const {
  int out[2], err[2];
  if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0) throw std::runtime_error("pipe");
  pid_t pid = Spawn(argv, cwd, extra_env, out[1], err[1]);
  close(out[1]);
  close(err[1]);
  running_.push_back({pid, {out[0], err[0]}});
  return Finish(pid);
}

RunResult Runner::Srt(const std::string& settings, const std::vector<std::string>& args,
                      const std::string& cwd, std::chrono::milliseconds limit) const {
  return Finish(Start(settings, args, cwd), limit);
}

RunResult Runner::SrtRaw(const std::vector<std::string>& args, const std::string& cwd,
                         std::chrono::milliseconds limit,
                         const std::vector<std::string>& extra_env) const {
  std::vector<std::string> argv = {SrtBinary()};
  argv.insert(argv.end(), args.begin(), args.end());
  int out[2], err[2];
  if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0) throw std::runtime_error("pipe");
  pid_t pid = Spawn(argv, cwd, extra_env, out[1], err[1]);
  close(out[1]);
  close(err[1]);
  running_.push_back({pid, {out[0], err[0]}});
  return Finish(pid, limit);
}

std::vector<pid_t> ProcessesMatching(const std::string& needle) {
  std::vector<pid_t> out;
  DIR* d = opendir("/proc");
  if (!d) return out;
  while (dirent* e = readdir(d)) {
    char* end = nullptr;
    long pid = std::strtol(e->d_name, &end, 10);
    if (end == e->d_name || *end) continue;
    // Plain read(2): the process may exit while we read (ESRCH), which only means no match.
    std::string cmdline;
    int fd = open((std::string("/proc/") + e->d_name + "/cmdline").c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    char buf[4096];
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0) cmdline.append(buf, static_cast<size_t>(n));
    close(fd);
    for (char& c : cmdline) {
      if (c == '\0') c = ' ';
    }
    if (cmdline.find(needle) != std::string::npos) out.push_back(static_cast<pid_t>(pid));
  }
  closedir(d);
  return out;
}

std::string CommandLineOf(pid_t pid) {
  std::ifstream cmdline("/proc/" + std::to_string(pid) + "/cmdline");
  std::string text((std::istreambuf_iterator<char>(cmdline)), std::istreambuf_iterator<char>());
  std::replace(text.begin(), text.end(), '\0', ' ');
  return text;
}

std::vector<pid_t> ChildrenOf(pid_t pid, const std::string& needle) {
  std::vector<pid_t> out;
  std::ifstream list("/proc/" + std::to_string(pid) + "/task/" + std::to_string(pid) + "/children");
  pid_t child = 0;
  while (list >> child) {
    if (needle.empty() || CommandLineOf(child).find(needle) != std::string::npos) {
      out.push_back(child);
    }
  }
  return out;
}

size_t ThreadsNamed(pid_t pid, const std::string& name) {
  const std::string tasks = "/proc/" + std::to_string(pid) + "/task";
  DIR* d = opendir(tasks.c_str());
  if (!d) return 0;
  size_t n = 0;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] == '.') continue;
    std::ifstream comm(tasks + "/" + e->d_name + "/comm");
    std::string line;
    if (std::getline(comm, line) && line == name) ++n;
  }
  closedir(d);
  return n;
}

std::string SystemBwrap() {
  for (const char* dir : {"/usr/bin", "/usr/local/bin", "/bin"}) {
    std::string path = std::string(dir) + "/bwrap";
    if (access(path.c_str(), X_OK) == 0) return path;
  }
  return "";
}

bool Eventually(const std::function<bool()>& done, std::chrono::milliseconds limit) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return done();
}

}  // namespace srt::it
