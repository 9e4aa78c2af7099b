// SPDX-License-Identifier: Apache-2.0
#include "proxy_args.h"

#include "base/address.h"
#include "base/ascii.h"
#include "base/strings.h"

namespace srt::cli {
namespace {

Error Bad(std::string line) { return MakeError(Errc::kInvalidArgument, std::move(line)); }

std::string JsonQuoted(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

struct Flag {
  std::string_view name;
  std::string_view arg;  // "" for a switch
};
constexpr Flag kFlags[] = {
    {"--listen-fd", "<fd>"},
    {"--listen", "<host:port>"},
    {"--listen-any-interface", ""},
    {"--decider-fd", "<fd>"},
    {"--decider-in", "<fd>"},
    {"--decider-out", "<fd>"},
    {"--lifeline-fd", "<fd>"},
    {"--ca-fd", "<fd>"},
    {"--strip-response-header", "<name...>"},
    {"--plaintext-header-set", ""},
    {"-d", ""},
    {"--debug", ""},
    {"-h", ""},
    {"--help", ""},
    {"--version", ""},
};

Result<int> Fd(std::string_view flag, std::string_view text) {
  int fd = 0;
  bool ok = !text.empty() && text.size() <= 9;
  for (char c : text) {
    if (!ascii::IsDigit(c)) ok = false;
    fd = fd * 10 + (c - '0');
  }
  if (!ok) {
    return Bad("srt proxy: " + std::string(flag) + " needs a file descriptor number (got " +
               JsonQuoted(text) + ")");
  }
  return fd;
}

}  // namespace

bool IsLoopbackListenHost(std::string_view host) {
  if (ascii::EqualsIgnoreCase(host, "localhost")) return true;
  if (std::optional<IpAddress> v4 = ParseIpv4(host)) return v4->bytes[0] == 127;
  if (std::optional<IpAddress> v6 = ParseIpv6(host)) {
    IpAddress loopback;
    loopback.family = IpAddress::Family::kIpv6;
    loopback.bytes[15] = 1;
    return *v6 == loopback;
  }
  return false;
}

Result<ProxyCliOptions> ParseProxyArgs(const std::vector<std::string_view>& args) {
  ProxyCliOptions o;
  // --version anywhere: one line, nothing else parsed (upstream's rule).
  for (std::string_view a : args) {
    if (a == "--version") {
      o.action = ProxyCliOptions::Action::kVersion;
      return o;
    }
  }
  for (size_t i = 0; i < args.size(); ++i) {
    std::string_view a = args[i];
    std::string_view value;
    bool inline_value = false;
    if (a.starts_with("--") && a.find('=') != std::string_view::npos) {
      value = a.substr(a.find('=') + 1);
      a = a.substr(0, a.find('='));
      inline_value = true;
    }
    const Flag* flag = nullptr;
    for (const Flag& f : kFlags) {
      if (f.name == a) flag = &f;
    }
    if (flag == nullptr) {
      if (!a.starts_with('-') || a == "-") {
        return Bad("error: too many arguments. Expected 0 arguments but got " +
                   std::to_string(args.size() - i) + ".");
      }
      return Bad("error: unknown option '" + std::string(args[i]) + "'");
    }
    const std::string spelled = std::string(flag->name) + " " + std::string(flag->arg);
    if (flag->arg.empty()) {
      if (inline_value) return Bad("error: unknown option '" + std::string(args[i]) + "'");
      if (a == "--listen-any-interface") o.listen_any_interface = true;
      if (a == "--plaintext-header-set") o.plaintext_header_set = true;
      if (a == "-d" || a == "--debug") o.debug = true;
      if (a == "-h" || a == "--help") {
        o.action = ProxyCliOptions::Action::kHelp;
        return o;
      }
      continue;
    }
    if (a == "--strip-response-header") {
      size_t taken = 0;
      if (inline_value) {
        o.strip_response_headers.emplace_back(value);
        ++taken;
      }
      while (i + 1 < args.size() && !args[i + 1].starts_with('-')) {
        o.strip_response_headers.emplace_back(args[++i]);
        ++taken;
      }
      if (taken == 0) return Bad("error: option '" + spelled + "' argument missing");
      continue;
    }
    if (!inline_value) {
      if (i + 1 >= args.size()) return Bad("error: option '" + spelled + "' argument missing");
      value = args[++i];
    }
    if (a == "--listen") {
      o.listen_text = std::string(value);
      continue;
    }
    SRT_ASSIGN_OR_RETURN(int fd, Fd(a, value));
    if (a == "--listen-fd") o.listen_fd = fd;
    if (a == "--decider-fd") o.decider_fd = fd;
    if (a == "--decider-in") o.decider_in = fd;
    if (a == "--decider-out") o.decider_out = fd;
    if (a == "--lifeline-fd") o.lifeline_fd = fd;
    if (a == "--ca-fd") o.ca_fd = fd;
  }
  const bool has_in = o.decider_fd || o.decider_in;
  const bool has_out = o.decider_fd || o.decider_out;
  if (!has_in || !has_out) {
    return Bad(
        "srt proxy: a decider is required (--decider-fd, or --decider-in and --decider-out)");
  }
  if (o.listen_fd) return o;
  if (o.listen_text.empty()) {
    return Bad("srt proxy: --listen-fd (or --listen for development) is required");
  }
  const std::string_view text = o.listen_text;
  const size_t colon = text.rfind(':');
  const std::string_view port_text =
      colon == std::string_view::npos ? std::string_view() : text.substr(colon + 1);
  bool port_ok = !port_text.empty() && port_text.size() <= 5;
  uint32_t port = 0;
  for (char c : port_text) {
    if (!ascii::IsDigit(c)) port_ok = false;
    port = port * 10 + static_cast<uint32_t>(c - '0');
  }
  if (colon == std::string_view::npos || !port_ok || port > 65535) {
    return Bad("srt proxy: --listen needs <host:port> with a port from 0 to 65535 (got " +
               JsonQuoted(text) + ")");
  }
  std::string_view host = text.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  if (!IsLoopbackListenHost(host)) {
    if (!o.listen_any_interface) {
      return Bad("srt proxy: --listen " + JsonQuoted(text) +
                 " is not a loopback address (127.0.0.0/8, [::1] or localhost); pass "
                 "--listen-any-interface to bind it anyway");
    }
    o.warning = "srt proxy: warning: --listen-any-interface: the listener on " + std::string(text) +
                " is reachable from other hosts and is unauthenticated";
  }
  o.listen_host = std::string(host);
  o.listen_port = static_cast<uint16_t>(port);
  return o;
}

Result<uint32_t> ParseReportRssMs(std::optional<std::string_view> value) {
  if (!value || value->empty()) return uint32_t{0};
  uint64_t n = 0;
  bool ok = value->size() <= 10;
  for (char c : *value) {
    if (c < '0' || c > '9') ok = false;
    if (ok) n = n * 10 + static_cast<uint64_t>(c - '0');
  }
  if (!ok || n > 2147483647) {
    return MakeError(Errc::kInvalidArgument,
                     "srt proxy: " + std::string(kReportRssVariable) + " " +
                         strings::QuoteForMessage(*value) +
                         " is not a number of milliseconds from 1 to 2147483647 (unset, empty "
                         "or 0: off)");
  }
  return static_cast<uint32_t>(n);
}

std::string ProxyHelpText() {
  return R"(Usage: srt proxy [options]

Run only the HTTP proxy, deciding every request through an external decider on
inherited fds (decider protocol v1; see srt(1)).

Options:
  --listen-fd <fd>                   accept connections on this inherited
                                     listening socket
  --listen <host:port>               listen on this loopback address instead
                                     (development); a non-loopback address
                                     needs --listen-any-interface
  --listen-any-interface             let --listen bind a non-loopback address:
                                     the listener is unauthenticated and
                                     reachable from other hosts
  --decider-fd <fd>                  bidirectional decider stream (a socket)
  --decider-in <fd>                  decider -> proxy stream (with
                                     --decider-out)
  --decider-out <fd>                 proxy -> decider stream (with
                                     --decider-in)
  --lifeline-fd <fd>                 shut down when this stream ends
  --ca-fd <fd>                       read the TLS-termination CA (key and
                                     certificate PEM) from this fd; every
                                     allowed CONNECT is then terminated and
                                     each request in it decided
  --strip-response-header <name...>  response headers never passed back
  --plaintext-header-set             let allow verdicts set headers on
                                     plain-HTTP requests (cleartext)
  -d, --debug                        enable debug logging
  --version                          print "srt-proxy <version>" and exit;
                                     every other option is ignored
  -h, --help                         display help for command

Environment:
  SRT_PROXY_REPORT_RSS_MS=<ms>       write "srt-proxy rss <bytes>" to stderr
                                     every <ms> milliseconds
  NODE_EXTRA_CA_CERTS=<file>         PEM certificates trusted for origins of
                                     terminated tunnels, besides the system's
)";
}

}  // namespace srt::cli
