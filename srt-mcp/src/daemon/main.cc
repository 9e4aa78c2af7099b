// SPDX-License-Identifier: Apache-2.0
// srt-mcp: MCP stdio servers, each session's process in its own srt sandbox, and HTTP upstreams,
// over MCP's Streamable HTTP transport on one listener. The only place in srt-mcp that prints
// for people, exits and catches.
#include <signal.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <new>
#include <sstream>
#include <string>
#include <vector>

#include "base/system_text.h"
#include "base/unique_fd.h"
#include "config/config.h"
#include "daemon/daemon.h"
#include "srt/sandbox.h"

namespace {

constexpr const char* kUsage =
    "usage: srt-mcp --config FILE [--check]\n"
    "  Serves each configured stdio MCP server (one sandboxed process per MCP session) and HTTP\n"
    "  route over MCP's Streamable HTTP transport at http://HOST:PORT/mcp/NAME.\n"
    "  --config FILE   the configuration (JSON with comments; see docs/mcp.md)\n"
    "  --check         check the configuration and the token files, then exit\n"
    "  --version       print the version\n"
    "  --help          this text\n";

// The configuration file, parsed, with the daemon's secrets hidden from every server.
srt::Result<srt::mcp::McpConfig> LoadConfig(const std::string& config_path) {
  std::ifstream in(config_path, std::ios::binary);
  if (!in) {
    return srt::MakeError(srt::Errc::kNotFound,
                          "cannot read '" + config_path + "': " + srt::ErrnoText(errno));
  }
  std::stringstream text;
  text << in.rdbuf();
  SRT_ASSIGN_OR_RETURN(srt::mcp::McpConfig config,
                       srt::mcp::ParseMcpConfig(text.str(), config_path));
  // The servers' sandboxes must not read the tokens or this file (it names them).
  std::error_code ec;
  const std::filesystem::path absolute = std::filesystem::absolute(config_path, ec);
  srt::mcp::HideDaemonSecrets(config, ec ? config_path : absolute.lexically_normal().string());
  return config;
}

int Run(int argc, char** argv) {
  // First: srt-mcp holds the bearer tokens and its servers' proxy credentials, which no server
  // (each runs as srt-mcp's user) may see. Non-dumpable, a crash leaves no core in the working
  // directory and no server can ptrace it or read /proc/PID/{mem,environ}.
  if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) {
    std::fprintf(stderr, "srt-mcp: prctl(PR_SET_DUMPABLE): %s\n", srt::ErrnoText(errno));
    return 1;
  }
  std::string config_path;
  bool check = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--config" && i + 1 < argc) {
      config_path = argv[++i];
    } else if (a.starts_with("--config=")) {
      config_path = a.substr(9);
    } else if (a == "--check") {
      check = true;
    } else if (a == "--help" || a == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (a == "--version" || a == "-V") {
      std::printf("srt-mcp %s\n", std::string(srt::Version()).c_str());
      return 0;
    } else {
      std::fprintf(stderr, "srt-mcp: unknown argument '%s'\n%s", a.c_str(), kUsage);
      return 2;
    }
  }
  if (config_path.empty()) {
    std::fprintf(stderr, "srt-mcp: --config FILE is required\n%s", kUsage);
    return 2;
  }
  srt::Result<srt::mcp::McpConfig> config = LoadConfig(config_path);
  if (!config) {
    std::fprintf(stderr, "srt-mcp: %s\n", config.error().message().c_str());
    return 2;
  }
  for (const std::string& w : config->warnings) {
    std::fprintf(stderr, "srt-mcp: warning: %s\n", w.c_str());
  }
  // SIGTERM and SIGINT (stop) and SIGHUP (reload) are read from a signalfd on the loop; blocked
  // before any thread starts, so every supervisor thread inherits the mask. A client that goes away
  // mid-write is EPIPE, not a death.
  sigset_t mask;
  sigemptyset(&mask);
  sigaddset(&mask, SIGTERM);
  sigaddset(&mask, SIGINT);
  sigaddset(&mask, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &mask, nullptr);
  signal(SIGPIPE, SIG_IGN);
  // Inherited through exec when ignored; every server's Sandbox::Start refuses it.
  signal(SIGCHLD, SIG_DFL);
  srt::UniqueFd sfd(signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK));
  if (!sfd) {
    std::fprintf(stderr, "srt-mcp: signalfd: %s\n", srt::ErrnoText(errno));
    return 1;
  }
  if (check) {
    // The token files as the daemon would read them; nothing is bound (a running srt-mcp may
    // hold the port).
    for (const std::string& path : config->bearer_token_files) {
      if (auto token = srt::mcp::LoadBearerToken(path); !token) {
        std::fprintf(stderr, "srt-mcp: %s\n", token.error().message().c_str());
        return 2;
      }
    }
    std::printf("srt-mcp: %s is valid (%zu servers, %zu routes)\n", config_path.c_str(),
                config->servers.size(), config->routes.size());
    return 0;
  }
  srt::mcp::DaemonOptions options;
  options.reload = [config_path] { return LoadConfig(config_path); };
  auto daemon = srt::mcp::Daemon::Create(std::move(*config), options);
  if (!daemon) {
    std::fprintf(stderr, "srt-mcp: %s\n", daemon.error().message().c_str());
    return 2;
  }
  if (auto watched = (*daemon)->WatchSignals(sfd.get()); !watched) {
    std::fprintf(stderr, "srt-mcp: %s\n", watched.error().message().c_str());
    return 1;
  }
  (*daemon)->Run();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return Run(argc, argv);
  } catch (const std::bad_alloc&) {
    std::fputs("srt-mcp: out of memory\n", stderr);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "srt-mcp: internal error: %s\n", e.what());
  }
  return 1;
}
