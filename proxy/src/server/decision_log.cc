// SPDX-License-Identifier: Apache-2.0
#include "server/decision_log.h"

#include <cinttypes>
#include <cstdio>
#include <ctime>

#include "base/strings.h"

namespace srt::proxy {

std::string_view ProtocolName(Protocol protocol) {
  switch (protocol) {
    case Protocol::kHttp:
      return "http";
    case Protocol::kConnect:
      return "connect";
    case Protocol::kSocks5:
      return "socks5";
    case Protocol::kCapture:
      return "capture";
    case Protocol::kDns:
      return "dns";
    case Protocol::kExternal:
      return "external";
    case Protocol::kHttps:
      return "https";
  }
  return "unknown";
}

namespace {

// A byte a shell reading a log line would act on ($(...), `...`, quotes, separators,
// redirections, history), or a terminal would (controls, and what is not ASCII): escaped wherever
// srt logs what a sandbox sent.
bool Unsafe(unsigned char c) {
  switch (c) {
    case '$':
    case '`':
    case '\\':
    case '"':
    case '\'':
    case ';':
    case '&':
    case '|':
    case '<':
    case '>':
    case '(':
    case ')':
    case '!':
      return true;
    default:
      return c < 0x20 || c >= 0x7f;
  }
}

}  // namespace

std::string JsonQuote(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 2);
  out.push_back('"');
  for (char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (Unsafe(c)) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out.push_back(ch);
    }
  }
  out.push_back('"');
  return out;
}

std::string LogSafe(std::string_view text) { return strings::EscapeBytes(text, Unsafe); }

namespace {

std::string FormatTime(std::chrono::system_clock::time_point t) {
  const auto since = t.time_since_epoch();
  const auto secs = std::chrono::duration_cast<std::chrono::seconds>(since);
  const auto millis = std::chrono::duration_cast<std::chrono::milliseconds>(since - secs).count();
  const std::time_t tt = static_cast<std::time_t>(secs.count());
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                static_cast<int>(millis));
  return buf;
}

std::string FormatBytes(uint64_t n) {
  char buf[32];
  if (n < 1024) {
    std::snprintf(buf, sizeof buf, "%" PRIu64 " B", n);
  } else if (n < 1024ull * 1024) {
    std::snprintf(buf, sizeof buf, "%.1f KiB", static_cast<double>(n) / 1024);
  } else if (n < 1024ull * 1024 * 1024) {
    std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(n) / (1024 * 1024));
  } else {
    std::snprintf(buf, sizeof buf, "%.2f GiB", static_cast<double>(n) / (1024.0 * 1024 * 1024));
  }
  return buf;
}

std::string Authority(const ConnectionRecord& r) {
  const bool v6 = r.host.find(':') != std::string::npos;
  return (v6 ? "[" + LogSafe(r.host) + "]" : LogSafe(r.host)) + ":" + std::to_string(r.port);
}

}  // namespace

std::string FormatRecordJson(const ConnectionRecord& r, std::string_view sandbox_id) {
  char duration[32];
  std::snprintf(duration, sizeof duration, "%.3f", static_cast<double>(r.duration.count()) / 1000);
  std::string out = "{\"time\":\"" + FormatTime(r.time) + "\"";
  out += ",\"sandbox\":" + JsonQuote(sandbox_id);
  out += ",\"protocol\":\"" + std::string(ProtocolName(r.protocol)) + "\"";
  out += ",\"host\":" + JsonQuote(r.host);
  out += ",\"port\":" + std::to_string(r.port);
  out += ",\"address\":" + JsonQuote(r.address);
  out += std::string(",\"via\":\"") + (r.via_parent ? "parent" : "direct") + "\"";
  out += std::string(",\"decision\":\"") + (r.allowed ? "allow" : "deny") + "\"";
  out += ",\"reason\":" + JsonQuote(r.reason);
  out += ",\"entry\":" + JsonQuote(r.matched_entry);
  out += ",\"bytes_up\":" + std::to_string(r.bytes_up);
  out += ",\"bytes_down\":" + std::to_string(r.bytes_down);
  out += ",\"duration_ms\":" + std::string(duration);
  out += ",\"end\":" + JsonQuote(r.end);
  out += ",\"error\":" + JsonQuote(r.error);
  // Only where credentials were met, so lines of sandboxes without any keep their shape.
  if (!r.credentials.empty()) {
    out += ",\"credentials\":[";
    for (size_t i = 0; i < r.credentials.size(); ++i) {
      const ConnectionRecord::CredentialUse& u = r.credentials[i];
      out += (i == 0 ? "{\"name\":" : ",{\"name\":") + JsonQuote(u.name);
      out += ",\"injected\":" + std::to_string(u.injected);
      out += ",\"kept\":" + std::to_string(u.kept);
      out += ",\"masked\":" + std::to_string(u.masked) + "}";
    }
    out += "]";
  }
  if (r.protocol == Protocol::kHttps) {
    out += ",\"method\":" + JsonQuote(r.method);
    out += ",\"path\":" + JsonQuote(r.path);
    out += ",\"status\":" + std::to_string(r.status);
  }
  out += "}\n";
  return out;
}

std::string FormatDestination(const ConnectionRecord& r) {
  return r.protocol == Protocol::kDns ? LogSafe(r.host) : Authority(r);
}

std::string FormatRecordText(const ConnectionRecord& r) {
  std::string out = r.allowed ? "allow " : "deny ";
  const bool socks_tunnel_refused =
      r.protocol == Protocol::kSocks5 && !r.allowed && r.reason == kRefuseOpaqueTunnelsReason;
  out += socks_tunnel_refused ? std::string_view("socks-tunnel") : ProtocolName(r.protocol);
  out += " " + Authority(r);
  if (r.protocol == Protocol::kHttps) {
    out += " " + LogSafe(r.method) + " " + LogSafe(r.path);
    if (r.status != 0) out += " " + std::to_string(r.status);
  }
  if (!r.allowed) return out + " (" + LogSafe(r.reason) + ")";
  if (!r.address.empty()) out += (r.via_parent ? " via parent " : " -> ") + r.address;
  char ms[32];
  std::snprintf(ms, sizeof ms, "%.0f ms", static_cast<double>(r.duration.count()) / 1000);
  out += " (" + FormatBytes(r.bytes_up) + " up, " + FormatBytes(r.bytes_down) + " down, " + ms;
  if (!r.end.empty()) out += ", " + LogSafe(r.end);
  if (!r.error.empty()) out += ": " + LogSafe(r.error);
  for (const ConnectionRecord::CredentialUse& u : r.credentials) {
    out += "; credential " + LogSafe(u.name) + ": " + std::to_string(u.injected) + " injected, " +
           std::to_string(u.kept) + " kept, " + std::to_string(u.masked) + " masked";
  }
  return out + ")";
}

}  // namespace srt::proxy
