// SPDX-License-Identifier: Apache-2.0
// `srt` argument parsing.
#include "args.h"

#include "base/strings.h"
#include "base/units.h"
#include "srt/sandbox.h"

namespace srt::cli {

namespace {

Error Usage(std::string message) {
  return MakeError(Errc::kInvalidArgument, std::move(message) + " (see 'srt --help')");
}

Result<int> ParseFd(std::string_view option, std::string_view v) {
  int fd = 0;
  bool ok = !v.empty() && v.size() <= 9;
  for (char c : v) {
    if (c < '0' || c > '9') ok = false;
  }
  if (ok) {
    for (char c : v) fd = fd * 10 + (c - '0');
  }
  if (!ok || fd < 3) {
    return Usage(std::string(option) +
                 " needs a descriptor number of 3 or more (0-2 are stdin, stdout and stderr), "
                 "got " +
                 strings::Quote(v));
  }
  return fd;
}

// A limit's value, with the option named in the error.
Result<uint32_t> ParsePids(std::string_view option, std::string_view v) {
  constexpr uint32_t kMaxPids = 1u << 22;
  std::optional<uint32_t> n = ParseWholeNumber(v, kMinPids, kMaxPids);
  if (!n) {
    return Usage(std::string(option) + " needs a whole number from " + std::to_string(kMinPids) +
                 " to " + std::to_string(kMaxPids) + ", got " + strings::Quote(v));
  }
  return *n;
}

}  // namespace

Result<CliOptions> ParseArgs(const std::vector<std::string_view>& args) {
  CliOptions o;
  std::optional<std::string> shell_command;
  size_t i = 0;
  auto value = [&](std::string_view name, std::string_view inline_value) -> Result<std::string> {
    if (!inline_value.empty()) return std::string(inline_value);
    if (i + 1 >= args.size()) return Usage("option " + strings::Quote(name) + " needs a value");
    return std::string(args[++i]);
  };
  for (; i < args.size(); ++i) {
    std::string_view a = args[i];
    if (a == "--") {
      ++i;
      break;
    }
    if (a.size() < 2 || a[0] != '-') break;  // the command starts here
    std::string_view name = a, inline_value;
    if (a.substr(0, 2) == "--") {
      if (size_t eq = a.find('='); eq != std::string_view::npos) {
        name = a.substr(0, eq);
        inline_value = a.substr(eq + 1);
        if (inline_value.empty()) return Usage("option " + strings::Quote(name) + " needs a value");
      }
    } else if (a.size() > 2 && (a[1] == 's' || a[1] == 'c')) {
      name = a.substr(0, 2);  // -sFILE, -cCMD
      inline_value = a.substr(2);
    }
    if (name == "-h" || name == "--help") {
      o.action = CliOptions::Action::kHelp;
      return o;
    } else if (name == "-V" || name == "--version") {
      o.action = CliOptions::Action::kVersion;
      return o;
    } else if (name == "-d" || name == "--debug") {
      o.debug = true;
    } else if (name == "-s" || name == "--settings") {
      SRT_ASSIGN_OR_RETURN(std::string v, value(name, inline_value));
      if (v.empty()) return Usage("option " + strings::Quote(name) + " needs a file name");
      o.settings_path = std::move(v);
    } else if (name == "-c") {
      SRT_ASSIGN_OR_RETURN(std::string v, value(name, inline_value));
      shell_command = std::move(v);
      ++i;
      break;  // what follows are $0, $1, ... for the shell command
    } else if (name == "--pass-fd") {
      SRT_ASSIGN_OR_RETURN(std::string v, value(name, inline_value));
      SRT_ASSIGN_OR_RETURN(int fd, ParseFd(name, v));
      o.pass_fds.push_back(fd);
    } else if (name == "--control-fd") {
      SRT_ASSIGN_OR_RETURN(std::string v, value(name, inline_value));
      SRT_ASSIGN_OR_RETURN(o.control_fd, ParseFd(name, v));
    } else if (name == "--log-fd") {
      SRT_ASSIGN_OR_RETURN(std::string v, value(name, inline_value));
      SRT_ASSIGN_OR_RETURN(o.log_fd, ParseFd(name, v));
    } else if (name == "--log-file") {
      SRT_ASSIGN_OR_RETURN(std::string v, value(name, inline_value));
      if (v.empty()) return Usage("option " + strings::Quote(name) + " needs a file name");
      o.log_file = std::move(v);
    } else if (name == "--memory") {
      SRT_ASSIGN_OR_RETURN(std::string v, value(name, inline_value));
      Result<uint64_t> bytes = ParseByteSize(v);
      if (!bytes) return Usage("--memory: " + bytes.error().message());
      if (*bytes < kMinMemoryBytes) return Usage("--memory " + v + " is below the 16M floor");
      o.memory_bytes = *bytes;
    } else if (name == "--cpus") {
      SRT_ASSIGN_OR_RETURN(std::string v, value(name, inline_value));
      Result<uint32_t> millis = ParseCpus(v);
      if (!millis) return Usage("--cpus: " + millis.error().message());
      o.cpu_millis = *millis;
    } else if (name == "--pids") {
      SRT_ASSIGN_OR_RETURN(std::string v, value(name, inline_value));
      SRT_ASSIGN_OR_RETURN(o.pids, ParsePids(name, v));
    } else if (name == "--serve" || name == "--attach") {
      SRT_ASSIGN_OR_RETURN(std::string v, value(name, inline_value));
      if (v.empty()) return Usage("option " + strings::Quote(name) + " needs a socket path");
      if (o.serve_socket || o.attach_socket) {
        return Usage("--serve and --attach are given once, and not together");
      }
      (name == "--serve" ? o.serve_socket : o.attach_socket) = std::move(v);
    } else if (name == "--timeout") {
      SRT_ASSIGN_OR_RETURN(std::string v, value(name, inline_value));
      Result<std::chrono::milliseconds> d = ParseGoDuration(v);
      if (!d) return Usage("--timeout: " + d.error().message());
      if (d->count() == 0) return Usage("--timeout needs a duration above 0, e.g. 30s or 5m");
      o.timeout = *d;
      o.timeout_text = v;
    } else {
      return Usage("unknown option " + strings::Quote(a));
    }
  }
  std::vector<std::string> rest(args.begin() + static_cast<std::ptrdiff_t>(i), args.end());
  if (o.pass_fds.size() > kMaxInheritFds) {
    return Usage("--pass-fd is given " + std::to_string(o.pass_fds.size()) + " times; at most " +
                 std::to_string(kMaxInheritFds) + " descriptors can be passed");
  }
  if (o.log_fd && o.log_file) return Usage("--log-fd and --log-file cannot be used together");
  if (o.serve_socket) {
    if (shell_command || !rest.empty()) {
      return Usage("--serve runs no command of its own; run each with 'srt --attach " +
                   *o.serve_socket + " COMMAND'");
    }
    if (!o.pass_fds.empty() || o.timeout) {
      return Usage("--pass-fd and --timeout are for one command, not for --serve");
    }
    return o;
  }
  if (o.attach_socket) {
    // The policy, limits and logs are the serving srt's.
    const char* serve_only = o.settings_path       ? "--settings"
                             : o.control_fd        ? "--control-fd"
                             : o.log_fd            ? "--log-fd"
                             : o.log_file          ? "--log-file"
                             : o.memory_bytes      ? "--memory"
                             : o.cpu_millis        ? "--cpus"
                             : o.pids              ? "--pids"
                             : !o.pass_fds.empty() ? "--pass-fd"
                             : o.timeout           ? "--timeout"
                                                   : nullptr;
    if (serve_only) {
      return Usage(std::string(serve_only) +
                   " cannot be used with --attach: the command runs under the settings, limits "
                   "and log of 'srt --serve'; give it there");
    }
  }
  if (shell_command) {
    if (shell_command->empty()) return Usage("-c needs a non-empty command");
    o.argv = {"bash", "-c", *shell_command};
    o.argv.insert(o.argv.end(), rest.begin(), rest.end());
  } else if (rest.size() == 1) {
    if (rest[0].empty()) return Usage("the command is empty");
    o.argv = {"bash", "-c", rest[0]};
  } else if (rest.size() >= 2) {
    o.argv = std::move(rest);
  } else {
    return Usage(
        "no command given; run 'srt COMMAND [ARG...]', 'srt \"shell command\"' or "
        "'srt -c \"shell command\"'");
  }
  return o;
}

std::string HelpText() {
  return R"(Usage: srt [OPTIONS] COMMAND [ARG...]
       srt [OPTIONS] "SHELL COMMAND"
       srt [OPTIONS] -c "SHELL COMMAND" [ARG0 [ARG...]]
       srt [OPTIONS] --serve SOCKET
       srt --attach SOCKET [-c] COMMAND [ARG...]
       srt proxy --decider-fd FD --listen-fd FD [OPTIONS]

Run a command in a sandbox: it may write only where the settings allow, cannot read what they
hide, cannot open Unix sockets, and reaches the network only through srt's allowlist proxy.

A command of two or more words runs exactly as given (no shell); a single word runs with
`bash -c`, so `srt "curl example.com | head"` works.

Options:
  -c CMD               run CMD with bash -c (further words become $0, $1, ...)
  -s, --settings FILE  settings file (default: ~/.srt-settings.json; a missing default file
                       means the built-in defaults: nothing writable but a private TMPDIR,
                       no network)
  -d, --debug          print every decision and the full bubblewrap command on stderr
                       (also enabled by SRT_DEBUG=1)
      --pass-fd N      let the command inherit descriptor N (repeatable, up to 64 times; by
                       default only stdin, stdout and stderr reach the sandbox)
      --log-file FILE  append every network decision (allowed or denied) to FILE as one JSON
                       line; --debug also prints a readable line for each on stderr
      --log-fd N       the same, written to descriptor N
      --control-fd N   read JSON lines from descriptor N, each a whole settings document whose
                       network lists (allowedDomains, deniedDomains, deniedDomainReasons,
                       deniedResolvedAddresses) replace the running ones for new connections
      --memory SIZE    limit the sandbox's memory (e.g. 512M, 2G; at least 16M)
      --cpus N         limit its CPU time to N CPUs (e.g. 2, 0.5)
      --pids N         limit its processes and threads to N (at least 16)
      --timeout DUR    SIGTERM the command after DUR (e.g. 30s, 5m, 1h30m), SIGKILL 5 s later
      --serve SOCKET   keep one warm sandbox up (until SIGTERM) and run in it each command
                       that `srt --attach SOCKET` sends; SOCKET is made 0600, in a directory
                       no other user may write to. Its commands share /tmp, the network
                       and one pid namespace (see srt(1))
      --attach SOCKET  run the command in the warm sandbox of `srt --serve SOCKET`, with this
                       srt's stdio, environment and working directory; exit status and
                       signals as a plain run's
  -V, --version        print the version
  -h, --help           print this help
  --                   end of options

Subcommands:
  proxy                the proxy alone, every request decided by an external decider
                       ('srt proxy --help'); a command named proxy needs -c

The limits use a cgroup of the sandbox's own (cgroup v2 with the controller delegated to srt's
cgroup, or writable by srt; or the controller's v1 hierarchy); where the host cannot enforce one,
srt says why and runs nothing.

Exit status: the command's own; 128+N if it was killed by signal N (or srt was, by SIGINT,
SIGTERM or SIGHUP, which srt relays to the command), so 137 when the memory limit's OOM killer
ended the command; 124 if --timeout ended it; 126 if it could not be executed; 127 if it was not
found; 125 if srt itself failed (bad settings or arguments, a limit the host cannot enforce, no
sandbox possible).
)";
}

}  // namespace srt::cli
