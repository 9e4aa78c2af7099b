// SPDX-License-Identifier: Apache-2.0
// `srt`: the command-line front end of libsrt. The only place in srt that prints to stderr,
// exits, and catches exceptions.
#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <netdb.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <optional>
#include <string_view>

#include "args.h"
#include "attach_client.h"
#include "base/strings.h"
#include "base/system_text.h"
#include "base/unique_fd.h"
#include "command_timeout.h"
#include "control_channel.h"
#include "denial_notices.h"
#include "proxy/proxy_only.h"
#include "proxy_args.h"
#include "serve.h"
#include "srt/result.h"
#include "srt/sandbox.h"
#include "srt/settings.h"

namespace {

void Print(const std::string& line) {
  std::string s = line + "\n";
  (void)!write(STDERR_FILENO, s.data(), s.size());
}

int Fail(const std::string& message) {
  Print("srt: " + message);
  return srt::kExitSetupFailure;
}

bool DebugFromEnvironment() {
  const char* v = getenv("SRT_DEBUG");
  return v && (std::strcmp(v, "1") == 0 || std::strcmp(v, "true") == 0);
}

// --log-file, which srt appends to on the host: a sandbox may have planted something where it
// points (a run whose write roots held it). No symlink is followed anywhere on the way, and
// only a regular file with no other name is written (a FIFO would stall srt; a hard link would
// carry the lines to another file).
srt::Result<srt::UniqueFd> OpenLogFile(const std::string& path) {
  const std::string what = "--log-file " + path;
  open_how how{};
  how.flags = O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK;
  how.mode = 0600;
  how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  srt::UniqueFd fd(
      static_cast<int>(syscall(SYS_openat2, AT_FDCWD, path.c_str(), &how, sizeof how)));
  if (!fd && errno == ENOSYS) {
    // FIXME: remove once Linux 5.6 is the baseline: the last component alone is checked.
    fd = srt::UniqueFd(open(path.c_str(), static_cast<int>(how.flags), 0600));
  }
  if (!fd && errno == ELOOP) {
    return srt::MakeError(srt::Errc::kInvalidArgument,
                          what +
                              ": the path goes through a symlink, which srt does not follow in "
                              "a path it writes (a sandbox could have planted it); name the real "
                              "path");
  }
  if (!fd && errno == ENXIO) {
    return srt::MakeError(srt::Errc::kInvalidArgument, what + ": not a regular file");
  }
  if (!fd) return srt::SysError(what);
  struct stat st {};
  if (fstat(fd.get(), &st) != 0) return srt::SysError(what);
  if (!S_ISREG(st.st_mode)) {
    return srt::MakeError(srt::Errc::kInvalidArgument, what + ": not a regular file");
  }
  if (st.st_nlink > 1) {
    return srt::MakeError(srt::Errc::kInvalidArgument,
                          what + ": the file has " + std::to_string(st.st_nlink) +
                              " names (hard links), so srt's lines could land in a file a sandbox "
                              "reads; give srt a file of its own");
  }
  if (fcntl(fd.get(), F_SETFL, O_APPEND) != 0) return srt::SysError(what);
  return fd;
}

bool FileExists(const std::string& path) {
  return access(path.c_str(), F_OK) == 0 || errno != ENOENT;
}

// `srt proxy`: exit 2 for bad arguments, 1 if it could not start, 0 once it stopped.
constexpr int kProxyExitUsage = 2;
constexpr int kProxyExitStartFailed = 1;

// An inherited descriptor the caller named: it must be open; made CLOEXEC (nothing srt starts
// inherits it).
srt::Result<srt::UniqueFd> TakeFd(int fd, const std::string& flag) {
  if (fd < 3 || fcntl(fd, F_SETFD, FD_CLOEXEC) < 0) {
    return srt::MakeError(srt::Errc::kInvalidArgument,
                          flag + " " + std::to_string(fd) +
                              " is not an open descriptor above 2 (0-2 are stdin, stdout and "
                              "stderr)");
  }
  return srt::UniqueFd(fd);
}

// Binds --listen's loopback address (port 0: any) and says where.
srt::Result<srt::UniqueFd> Listen(const std::string& host, uint16_t port, std::string& where) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  if (getaddrinfo(host.c_str(), service.c_str(), &hints, &found) != 0 || found == nullptr) {
    return srt::MakeError(srt::Errc::kInvalidArgument, "--listen: cannot resolve " + host);
  }
  std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> list(found, &freeaddrinfo);
  srt::UniqueFd fd(socket(found->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd) return srt::SysError("socket");
  const int one = 1;
  (void)setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (bind(fd.get(), found->ai_addr, found->ai_addrlen) != 0) return srt::SysError("bind " + host);
  if (listen(fd.get(), 4096) != 0) return srt::SysError("listen");
  sockaddr_storage bound{};
  socklen_t len = sizeof bound;
  (void)getsockname(fd.get(), reinterpret_cast<sockaddr*>(&bound), &len);
  char text[INET6_ADDRSTRLEN] = {};
  uint16_t bound_port = 0;
  if (bound.ss_family == AF_INET6) {
    const auto* a = reinterpret_cast<const sockaddr_in6*>(&bound);
    inet_ntop(AF_INET6, &a->sin6_addr, text, sizeof text);
    bound_port = ntohs(a->sin6_port);
  } else {
    const auto* a = reinterpret_cast<const sockaddr_in*>(&bound);
    inet_ntop(AF_INET, &a->sin_addr, text, sizeof text);
    bound_port = ntohs(a->sin_port);
  }
  where = std::string(text) + ":" + std::to_string(bound_port);
  return fd;
}

// The environment variable `name`, if set.
std::optional<std::string_view> EnvironmentValue(std::string_view name) {
  const char* v = getenv(std::string(name).c_str());
  if (v == nullptr) return std::nullopt;
  return std::string_view(v);
}

// The most --ca-fd may carry: a PEM key and certificate are a few KiB.
constexpr size_t kMaxCaFdBytes = size_t{1} << 20;

// --ca-fd: everything until EOF, at most kMaxCaFdBytes. The descriptor is closed after; what was
// read is wiped on every error path (it holds a private key).
srt::Result<std::string> ReadCaFd(int fd) {
  const std::string flag = "--ca-fd " + std::to_string(fd);
  srt::Result<srt::UniqueFd> owned = TakeFd(fd, "--ca-fd");
  if (!owned) return std::move(owned).error();
  std::string pem;
  auto wipe = [&pem] {
    explicit_bzero(pem.data(), pem.size());
    pem.clear();
  };
  char buf[16 * 1024];
  for (;;) {
    const ssize_t n = read(owned->get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int saved = errno;
      wipe();
      explicit_bzero(buf, sizeof buf);
      errno = saved;
      return srt::SysError(flag + ": read");
    }
    if (n == 0) break;
    if (pem.size() + static_cast<size_t>(n) > kMaxCaFdBytes) {
      wipe();
      explicit_bzero(buf, sizeof buf);
      return srt::MakeError(srt::Errc::kInvalidArgument,
                            flag + ": more than " + std::to_string(kMaxCaFdBytes) +
                                " bytes (a PEM private key and certificate are expected)");
    }
    if (pem.capacity() < kMaxCaFdBytes) pem.reserve(kMaxCaFdBytes);  // no copy left behind
    pem.append(buf, static_cast<size_t>(n));
  }
  explicit_bzero(buf, sizeof buf);
  if (pem.empty()) {
    return srt::MakeError(srt::Errc::kInvalidArgument,
                          flag + ": empty (a PEM private key and certificate are expected)");
  }
  return pem;
}

int RunProxy(const std::vector<std::string_view>& args) {
  srt::Result<srt::cli::ProxyCliOptions> parsed = srt::cli::ParseProxyArgs(args);
  if (!parsed) {
    Print(parsed.error().message());
    return kProxyExitUsage;
  }
  srt::cli::ProxyCliOptions& cli = *parsed;
  if (cli.action == srt::cli::ProxyCliOptions::Action::kHelp) {
    std::string help = srt::cli::ProxyHelpText();
    (void)!write(STDOUT_FILENO, help.data(), help.size());
    return 0;
  }
  if (cli.action == srt::cli::ProxyCliOptions::Action::kVersion) {
    std::string version = "srt-proxy " + std::string(srt::Version()) + "\n";
    (void)!write(STDOUT_FILENO, version.data(), version.size());
    return 0;
  }
  if (!cli.warning.empty()) Print(cli.warning);
  auto usage = [](const srt::Error& e) {
    Print("srt proxy: " + e.message());
    return kProxyExitUsage;
  };
  srt::proxy::ProxyOnlyOptions o;
  srt::Result<uint32_t> rss_every =
      srt::cli::ParseReportRssMs(EnvironmentValue(srt::cli::kReportRssVariable));
  if (!rss_every) {
    Print(rss_every.error().message());
    return kProxyExitUsage;
  }
  o.report_rss_every = std::chrono::milliseconds(*rss_every);
  if (cli.ca_fd) {
    // Read whole here (a pipe the host closes after writing, as upstream), before anything else
    // is opened; parsed by the proxy (mitm/certs.h ParseCaPem), never logged.
    srt::Result<std::string> pem = ReadCaFd(*cli.ca_fd);
    if (!pem) return usage(pem.error());
    o.ca_pem = std::move(*pem);
    o.ca_source = "--ca-fd " + std::to_string(*cli.ca_fd);
    // Upstream's Node runtime trusts NODE_EXTRA_CA_CERTS for the origins it verifies.
    if (std::optional<std::string_view> extra = EnvironmentValue("NODE_EXTRA_CA_CERTS");
        extra && !extra->empty()) {
      o.extra_ca_cert_paths.emplace_back(*extra);
    }
  }
  int decider_in = cli.decider_fd ? *cli.decider_fd : *cli.decider_in;
  int decider_out = cli.decider_fd ? *cli.decider_fd : *cli.decider_out;
  srt::Result<srt::UniqueFd> in =
      TakeFd(decider_in, cli.decider_fd ? "--decider-fd" : "--decider-in");
  if (!in) return usage(in.error());
  o.decider_in = std::move(*in);
  if (decider_out == decider_in) {
    o.decider_out = srt::UniqueFd(fcntl(o.decider_in.get(), F_DUPFD_CLOEXEC, 3));
    if (!o.decider_out) return usage(srt::SysError("dup the decider descriptor"));
  } else {
    srt::Result<srt::UniqueFd> out = TakeFd(decider_out, "--decider-out");
    if (!out) return usage(out.error());
    o.decider_out = std::move(*out);
  }
  if (cli.lifeline_fd) {
    srt::Result<srt::UniqueFd> lifeline = TakeFd(*cli.lifeline_fd, "--lifeline-fd");
    if (!lifeline) return usage(lifeline.error());
    o.lifeline = std::move(*lifeline);
  }
  if (cli.listen_fd) {
    srt::Result<srt::UniqueFd> listener = TakeFd(*cli.listen_fd, "--listen-fd");
    if (!listener) return usage(listener.error());
    o.listener = std::move(*listener);
    o.listening_on = "fd " + std::to_string(*cli.listen_fd);
  } else {
    srt::Result<srt::UniqueFd> listener = Listen(*cli.listen_host, cli.listen_port, o.listening_on);
    if (!listener) {
      Print("srt proxy: stopped (start failed: " + listener.error().message() + ")");
      return kProxyExitStartFailed;
    }
    o.listener = std::move(*listener);
  }
  sigset_t stop_set;
  sigemptyset(&stop_set);
  sigaddset(&stop_set, SIGTERM);
  sigaddset(&stop_set, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_set, nullptr);
  // Writes to a gone client or decider fail with EPIPE instead of killing srt.
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGPIPE, &ignore, nullptr);
  o.stop_signals = srt::UniqueFd(signalfd(-1, &stop_set, SFD_CLOEXEC | SFD_NONBLOCK));
  o.strip_response_headers = cli.strip_response_headers;
  o.plaintext_header_set = cli.plaintext_header_set;
  o.debug = cli.debug || DebugFromEnvironment();
  o.log = [](const std::string& line) { Print(line); };
  srt::Result<std::string> stopped = srt::proxy::RunProxyOnly(std::move(o));
  if (!stopped && stopped.error().message().starts_with("--ca-fd ")) {
    // A CA that cannot be used is a bad argument (upstream: exit 2 with its message).
    return usage(stopped.error());
  }
  if (!stopped) {
    Print("srt proxy: stopped (start failed: " + stopped.error().message() + ")");
    return kProxyExitStartFailed;
  }
  Print("srt proxy: stopped (" + *stopped + ")");
  return stopped->starts_with("start failed") ? kProxyExitStartFailed : 0;
}

int Run(int argc, char** argv) {
  // Before anything secret is read: srt holds what the sandbox must never see (masked
  // credentials' real values, a CA key, the proxy's per-run credentials). Non-dumpable, a crash
  // leaves no core (with Debian's default core_pattern it would land in the working directory,
  // usually a write root the next sandbox reads) and no other process of the user can ptrace it
  // or read its /proc/PID/{mem,environ}. bwrap and srt-init regain or set their own at execve.
  if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) return Fail("prctl(PR_SET_DUMPABLE)");
  // An ignored SIGCHLD is inherited through exec; libsrt refuses to start with one (the kernel
  // would reap bwrap before srt does). srt reaps its children itself, so it takes the default.
  signal(SIGCHLD, SIG_DFL);
  // A closed standard descriptor would be the number of the next one srt opens (its signalfd,
  // the log file), which the command would then inherit as its stdin or stdout.
  for (int fd = 0; fd <= 2; ++fd) {
    if (fcntl(fd, F_GETFD) < 0 && errno == EBADF) {
      int null = open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
      if (null != fd) return srt::kExitSetupFailure;
    }
  }
  std::vector<std::string_view> args(argv + 1, argv + argc);
  // `srt proxy ...` is always the subcommand (a command named proxy needs -c).
  if (!args.empty() && args[0] == "proxy") {
    return RunProxy(std::vector<std::string_view>(args.begin() + 1, args.end()));
  }
  srt::Result<srt::cli::CliOptions> parsed = srt::cli::ParseArgs(args);
  if (!parsed) return Fail(parsed.error().message());
  srt::cli::CliOptions& cli = *parsed;
  if (cli.action == srt::cli::CliOptions::Action::kHelp) {
    std::string help = srt::cli::HelpText();
    (void)!write(STDOUT_FILENO, help.data(), help.size());
    return 0;
  }
  if (cli.action == srt::cli::CliOptions::Action::kVersion) {
    std::string version = "srt " + std::string(srt::Version()) + "\n";
    (void)!write(STDOUT_FILENO, version.data(), version.size());
    return 0;
  }
  const bool debug = cli.debug || DebugFromEnvironment();
  if (cli.attach_socket) return srt::cli::Attach(*cli.attach_socket, cli.argv, debug, Print);

  srt::SandboxOptions options;
  const std::string settings_path = cli.settings_path.value_or(srt::DefaultSettingsPath());
  if (!cli.settings_path && !FileExists(settings_path)) {
    if (debug) Print("srt: debug: no " + settings_path + "; using the built-in defaults");
  } else {
    srt::Result<srt::LoadedSettings> loaded = srt::LoadSettingsFile(settings_path);
    if (!loaded) return Fail(loaded.error().message());
    for (const std::string& w : loaded->warnings) Print("srt: warning: " + w);
    options.settings = std::move(loaded->settings);
    if (debug) Print("srt: debug: settings from " + settings_path);
  }
  // The settings decide the next run's policy: the file in use and the default one are
  // read-only in the sandbox (their directories pinned), and a missing default cannot be
  // planted (the write guard).
  for (const std::string& p : {settings_path, srt::DefaultSettingsPath()}) {
    options.settings.filesystem.deny_write.push_back(srt::PathEntry{p, /*literal=*/true});
  }
  options.argv = std::move(cli.argv);
  options.serve = cli.serve_socket.has_value();
  const std::string command = options.argv.empty() ? std::string() : options.argv[0];
  options.warn = [](std::string_view w) { Print("srt: warning: " + std::string(w)); };
  options.inherit_fds = cli.pass_fds;
  if (cli.memory_bytes || cli.cpu_millis || cli.pids) {
    // Start() fails, naming what is missing, where the host cannot enforce a limit.
    options.limits = srt::ResourceLimits{};
    options.limits->memory_bytes = cli.memory_bytes.value_or(0);
    options.limits->cpu_millis = cli.cpu_millis.value_or(0);
    options.limits->pids = cli.pids.value_or(0);
  }
  // Ctrl-Z on the command's terminal: srt stops as the command did, so the shell's job control
  // works as without srt (`fg` continues both; a shell's orphaned job is not stopped).
  options.on_terminal_stop = [] { (void)raise(SIGTSTP); };

  // The network decision log: JSON lines to a file or descriptor, readable lines with --debug.
  srt::UniqueFd log_file;
  int log_fd = cli.log_fd.value_or(-1);
  if (cli.log_file) {
    srt::Result<srt::UniqueFd> opened = OpenLogFile(*cli.log_file);
    if (!opened) return Fail(opened.error().message());
    log_file = std::move(opened).value();
    log_fd = log_file.get();
  } else if (cli.log_fd && fcntl(*cli.log_fd, F_GETFL) < 0) {
    return Fail("--log-fd " + std::to_string(*cli.log_fd) + " is not open");
  }
  // Without --debug, a denial is still said once per destination: a command that fails for
  // want of the network says why (its own error is often a bare reset or a retry loop).
  auto notices = std::make_shared<srt::cli::DenialNotices>();
  options.on_connection = [log_fd, debug, notices](const srt::ConnectionEvent& event) {
    // O_APPEND (or a pipe) keeps each line whole: one write(2) per line.
    if (log_fd >= 0) (void)!write(log_fd, event.json.data(), event.json.size());
    if (debug) {
      Print("srt: network: " + event.summary);
    } else if (!event.allowed) {
      if (std::string line = notices->Line(event.destination, event.reason); !line.empty()) {
        Print(line);
      }
    }
  };
  if (cli.control_fd) {
    if (srt::Result<void> ok = srt::cli::ControlChannel::Check(*cli.control_fd); !ok) {
      return Fail(ok.error().message());
    }
  }
  if (debug) {
    // Each line carries the time since srt started, to show where start-up time goes.
    options.debug = [start = std::chrono::steady_clock::now()](std::string_view line) {
      double ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
              .count();
      char stamp[32];
      std::snprintf(stamp, sizeof stamp, "[%7.3f ms] ", ms);
      Print("srt: debug: " + std::string(stamp) + std::string(line));
    };
  }

  // Signals for the command are taken through a signalfd, blocked before the sandbox starts so
  // none is lost in between; the children get an empty mask back (posix_spawn in libsrt).
  sigset_t relayed;
  sigemptyset(&relayed);
  for (int s : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH, SIGCONT}) {
    sigaddset(&relayed, s);
  }
  pthread_sigmask(SIG_BLOCK, &relayed, nullptr);
  int sfd = signalfd(-1, &relayed, SFD_CLOEXEC);
  if (sfd < 0) return Fail(std::string("signalfd: ") + srt::ErrnoText(errno));

  // --serve: the socket's directory first, so that a path srt refuses costs no sandbox; Start
  // refuses one the command could write to before a sandbox exists; only then is it bound, so
  // no client ever finds a socket that will not be served.
  std::unique_ptr<srt::cli::ServeSocket> serve_socket;
  if (cli.serve_socket) {
    srt::Result<std::unique_ptr<srt::cli::ServeSocket>> opened =
        srt::cli::ServeSocket::Open(*cli.serve_socket);
    if (!opened) return Fail(opened.error().message());
    serve_socket = std::move(opened).value();
    options.outside_writable.push_back(
        {"--serve " + srt::strings::Quote(*cli.serve_socket), serve_socket->real_path()});
  }
  srt::Result<srt::Sandbox> sandbox = srt::Sandbox::Start(std::move(options));
  if (!sandbox) return Fail(sandbox.error().message());
  if (serve_socket) {
    if (srt::Result<void> listening = serve_socket->Listen(); !listening) {
      (void)sandbox->Stop();
      (void)sandbox->Wait();
      return Fail(listening.error().message());
    }
  }
  srt::cli::ControlChannel control;
  if (cli.control_fd) {
    if (srt::Result<void> ok = control.Start(*cli.control_fd, *sandbox, Print); !ok) {
      (void)sandbox->Signal(SIGKILL);
      (void)sandbox->Wait();
      return Fail("--control-fd: " + ok.error().message());
    }
  }
  if (serve_socket) {
    srt::Result<srt::ExitStatus> served = srt::cli::Serve(*serve_socket, *sandbox, sfd, Print);
    control.Stop();
    if (!served) return Fail(served.error().message());
    return control.failed() ? srt::kExitSetupFailure : 0;
  }
  srt::cli::CommandTimeout timeout;
  if (cli.timeout) {
    if (srt::Result<void> ok = timeout.Start(*sandbox, *cli.timeout, srt::cli::kTimeoutKillAfter,
                                             "--timeout " + cli.timeout_text, Print);
        !ok) {
      control.Stop();
      (void)sandbox->Signal(SIGKILL);
      (void)sandbox->Wait();
      return Fail(ok.error().message());
    }
  }
  srt::Result<srt::ExitStatus> status = sandbox->Wait(sfd);
  timeout.Stop();
  control.Stop();
  if (!status) return Fail(status.error().message());
  if (control.failed()) return srt::kExitSetupFailure;
  if (status->oom_killed) {
    // The exit status says only what happened to the command; the OOM killer may have taken a
    // child of it instead.
    Print(
        "srt: --memory: the sandbox reached its memory limit, and the kernel killed a process "
        "of it");
  }
  if (timeout.fired()) return srt::cli::kExitTimedOut;
  if (status->exec_errno) {
    // As a shell says it: a name looked up in PATH is "command not found".
    const bool looked_up = command.find('/') == std::string::npos;
    Print("srt: " + srt::strings::EscapeNonPrintable(command.substr(0, 200)) + ": " +
          (status->exec_errno == ENOENT && looked_up ? std::string("command not found")
                                                     : srt::ErrnoText(status->exec_errno)));
  }
  switch (status->relayed_signal) {
    case SIGINT:
    case SIGTERM:
    case SIGHUP:
    case SIGQUIT:
      return srt::kExitSignalBase + status->relayed_signal;
    default:
      return status->code;
  }
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return Run(argc, argv);
  } catch (const std::bad_alloc&) {
    Print("srt: out of memory");
    return srt::kExitSetupFailure;
  } catch (const std::exception& e) {
    // The edge: libsrt returns errors as values, but a library below it may still throw.
    Print(std::string("srt: ") + e.what());
    return srt::kExitSetupFailure;
  }
}
