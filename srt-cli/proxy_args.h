// SPDX-License-Identifier: Apache-2.0
// proxy_args: `srt proxy`'s command line (upstream srt 0.0.83's flags and messages). Pure.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "srt/result.h"

namespace srt::cli {

struct ProxyCliOptions {
  enum class Action { kRun, kHelp, kVersion };
  Action action = Action::kRun;
  std::optional<int> listen_fd;
  // --listen: host ("" never: the parser refuses it), unbracketed, and port (0: any).
  std::optional<std::string> listen_host;
  uint16_t listen_port = 0;
  std::string listen_text;  // as given, for messages
  bool listen_any_interface = false;
  std::optional<int> decider_fd;
  std::optional<int> decider_in;
  std::optional<int> decider_out;
  std::optional<int> lifeline_fd;
  std::optional<int> ca_fd;
  std::vector<std::string> strip_response_headers;
  bool plaintext_header_set = false;
  bool debug = false;
  // A warning to print before running (--listen-any-interface).
  std::string warning;
};

// `args`: what follows "proxy". An error's message is the whole stderr line (upstream's:
// "error: unknown option '--bogus'", "srt proxy: a decider is required (...)"); srt exits 2.
[[nodiscard]] Result<ProxyCliOptions> ParseProxyArgs(const std::vector<std::string_view>& args);

// Whether a --listen host is reachable from this machine only: localhost, 127.0.0.0/8, ::1.
[[nodiscard]] bool IsLoopbackListenHost(std::string_view host);

[[nodiscard]] std::string ProxyHelpText();

// SRT_PROXY_REPORT_RSS_MS (upstream's diagnostics): `srt proxy` writes "srt-proxy rss <bytes>"
// to stderr every that many milliseconds. nullopt (unset), "" and "0": off; 1 to 2147483647:
// on. Anything else is refused (upstream ignores it silently, and takes "1e3" or " 5"); the
// message is the whole stderr line.
inline constexpr std::string_view kReportRssVariable = "SRT_PROXY_REPORT_RSS_MS";
[[nodiscard]] Result<uint32_t> ParseReportRssMs(std::optional<std::string_view> value);

}  // namespace srt::cli
