// `srt`: the command-line front end of libsrt. The only place in srt that prints to stderr,
// exits, and catches exceptions.
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#include "args.h"
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

bool FileExists(const std::string& path) {
  return access(path.c_str(), F_OK) == 0 || errno != ENOENT;
}

int Run(int argc, char** argv) {
  std::vector<std::string_view> args(argv + 1, argv + argc);
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
  options.argv = std::move(cli.argv);
  options.inherit_fds = cli.pass_fds;
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
  for (int s : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2}) sigaddset(&relayed, s);
  sigprocmask(SIG_BLOCK, &relayed, nullptr);
  int sfd = signalfd(-1, &relayed, SFD_CLOEXEC);
  if (sfd < 0) return Fail(std::string("signalfd: ") + std::strerror(errno));

  srt::Result<srt::Sandbox> sandbox = srt::Sandbox::Start(std::move(options));
  if (!sandbox) return Fail(sandbox.error().message());
  srt::Result<srt::ExitStatus> status = sandbox->Wait(sfd);
  if (!status) return Fail(status.error().message());
  if (status->exec_errno) {
    const std::string& name = args.empty() ? std::string() : std::string();
    (void)name;
    Print(std::string("srt: cannot run the command: ") + std::strerror(status->exec_errno));
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
  }
}
