// SPDX-License-Identifier: Apache-2.0
// srt-mcp/config/config.cc: configuration text -> McpConfig. Two passes over the text: libsrt's
// JSON text reader (config/json_text, the one libsrt's settings use too, here with comments)
// finds syntax errors and where every key and array element starts (so schema errors can say
// line:column), then a decoder walks the DOM.
#include "config/config.h"

#include <algorithm>
#include <cstddef>
#include <nlohmann/json.hpp>
#include <set>
#include <unordered_map>

#include "base/address.h"
#include "base/strings.h"
#include "base/units.h"
#include "config/json_text.h"

namespace srt::mcp {
namespace {

using Json = nlohmann::ordered_json;

constexpr size_t kMaxConfigBytes = size_t{1} << 20;
constexpr size_t kMaxNestingDepth = 32;
constexpr size_t kMaxNameBytes = 64;
constexpr size_t kMaxServers = 256;

using config::JsonPointerToken;
using config::LineAndColumn;

// ---------------------------------------------------------------------------------------------
// The decoder

class Decoder {
 public:
  Decoder(std::string_view text, std::string_view origin, const config::JsonPositions& starts)
      : text_(text), origin_(origin), starts_(starts) {}

  Result<McpConfig> Decode(const Json& root) {
    McpConfig c;
    SRT_RETURN_IF_ERROR(ExpectObject(root, ""));
    SRT_RETURN_IF_ERROR(Keys(
        root, "", {"$schema", "listen", "auth", "allowedOrigins", "servers", "routes", "limits"}));
    if (root.contains("listen")) SRT_RETURN_IF_ERROR(Listen(root["listen"], c));
    if (root.contains("auth")) {
      const Json& a = root["auth"];
      SRT_RETURN_IF_ERROR(ExpectObject(a, "/auth"));
      SRT_RETURN_IF_ERROR(Keys(a, "/auth", {"bearerTokenFiles"}));
      if (a.contains("bearerTokenFiles")) {
        SRT_ASSIGN_OR_RETURN(c.bearer_token_files,
                             Strings(a["bearerTokenFiles"], "/auth/bearerTokenFiles"));
        for (size_t i = 0; i < c.bearer_token_files.size(); ++i) {
          if (!c.bearer_token_files[i].starts_with('/')) {
            return Fail("/auth/bearerTokenFiles/" + std::to_string(i),
                        Quote(c.bearer_token_files[i]) + " is not an absolute path");
          }
        }
        if (c.bearer_token_files.empty()) {
          return Fail("/auth/bearerTokenFiles",
                      "is empty (leave `auth` out for no authentication)");
        }
      }
    }
    if (root.contains("allowedOrigins")) {
      SRT_ASSIGN_OR_RETURN(c.allowed_origins, Strings(root["allowedOrigins"], "/allowedOrigins"));
      for (size_t i = 0; i < c.allowed_origins.size(); ++i) {
        const std::string& o = c.allowed_origins[i];
        if (!(o.starts_with("http://") || o.starts_with("https://")) || o.ends_with('/') ||
            o.find_first_of(" \t\r\n") != std::string::npos || o == "http://" || o == "https://") {
          return Fail("/allowedOrigins/" + std::to_string(i),
                      Quote(o) + " is not an origin (scheme://host[:port], no path)");
        }
      }
    }
    if (root.contains("limits")) SRT_RETURN_IF_ERROR(Limits(root["limits"], c.limits));
    std::set<std::string> names;
    if (root.contains("servers")) {
      const Json& s = root["servers"];
      SRT_RETURN_IF_ERROR(ExpectObject(s, "/servers"));
      if (s.size() > kMaxServers) return Fail("/servers", "has more than 256 servers");
      for (auto it = s.begin(); it != s.end(); ++it) {
        const std::string path = "/servers/" + JsonPointerToken(it.key());
        SRT_RETURN_IF_ERROR(Name(it.key(), path));
        names.insert(it.key());
        SRT_ASSIGN_OR_RETURN(StdioServer server, Server(it.value(), path, it.key()));
        for (std::string& w : server.settings_warnings) c.warnings.push_back(w);
        c.servers.emplace(it.key(), std::move(server));
      }
    }
    if (root.contains("routes")) {
      const Json& r = root["routes"];
      if (!r.is_array()) return Fail("/routes", "must be an array, not " + TypeName(r));
      for (size_t i = 0; i < r.size(); ++i) {
        const std::string path = "/routes/" + std::to_string(i);
        SRT_ASSIGN_OR_RETURN(HttpRoute route, Route(r[i], path));
        if (!names.insert(route.name).second) {
          return Fail(path + "/name",
                      Quote(route.name) + " is already the name of a server or route");
        }
        c.routes.push_back(std::move(route));
      }
    }
    if (c.bearer_token_files.empty() && !IsLoopbackHost(c.listen_host)) {
      return Fail("/listen/hostname",
                  Quote(c.listen_host) +
                      " is not a loopback address, and there is no `auth`: srt-mcp listens "
                      "beyond this host only with auth.bearerTokenFiles");
    }
    return c;
  }

 private:
  Error Fail(const std::string& pointer, const std::string& what) const {
    std::string where = std::string(origin_);
    // The pointer's own position, else its nearest recorded ancestor's.
    std::string p = pointer;
    while (true) {
      auto it = starts_.find(p);
      if (it != starts_.end()) {
        auto [line, column] = LineAndColumn(text_, it->second);
        where += ":" + std::to_string(line) + ":" + std::to_string(column);
        break;
      }
      size_t slash = p.rfind('/');
      if (slash == std::string::npos || p.empty()) break;
      p.resize(slash);
    }
    return MakeError(Errc::kInvalidArgument,
                     where + ": " + (pointer.empty() ? "/" : pointer) + ": " + what);
  }
  static std::string Quote(std::string_view s) { return strings::QuoteForMessage(s, 200); }
  static std::string TypeName(const Json& j) {
    if (j.is_object()) return "an object";
    if (j.is_array()) return "an array";
    if (j.is_string()) return "a string";
    if (j.is_boolean()) return "a boolean";
    if (j.is_null()) return "null";
    return "a number";
  }
  Result<void> ExpectObject(const Json& j, const std::string& path) const {
    if (!j.is_object()) return Fail(path, "must be an object, not " + TypeName(j));
    return Ok();
  }
  Result<void> Keys(const Json& j, const std::string& path,
                    std::initializer_list<std::string_view> known) const {
    for (auto it = j.begin(); it != j.end(); ++it) {
      if (std::find(known.begin(), known.end(), it.key()) == known.end()) {
        std::string list;
        for (std::string_view k : known) list += (list.empty() ? "" : ", ") + std::string(k);
        return Fail(path + "/" + JsonPointerToken(it.key()), "unknown key (known: " + list + ")");
      }
    }
    return Ok();
  }
  Result<std::string> String(const Json& j, const std::string& path) const {
    if (!j.is_string()) return Fail(path, "must be a string, not " + TypeName(j));
    std::string s = j.get<std::string>();
    if (s.find('\0') != std::string::npos) return Fail(path, "contains a NUL byte");
    return s;
  }
  Result<std::vector<std::string>> Strings(const Json& j, const std::string& path) const {
    if (!j.is_array()) return Fail(path, "must be an array of strings, not " + TypeName(j));
    std::vector<std::string> out;
    for (size_t i = 0; i < j.size(); ++i) {
      SRT_ASSIGN_OR_RETURN(std::string s, String(j[i], path + "/" + std::to_string(i)));
      out.push_back(std::move(s));
    }
    return out;
  }
  Result<uint64_t> Whole(const Json& j, const std::string& path, uint64_t min, uint64_t max) const {
    if (!j.is_number_unsigned() && !j.is_number_integer()) {
      return Fail(path, "must be a whole number, not " + TypeName(j));
    }
    if (j.is_number_integer() && j.get<int64_t>() < 0) {
      return Fail(path, j.dump() + " is negative");
    }
    uint64_t v = j.get<uint64_t>();
    if (v < min || v > max) {
      return Fail(path, j.dump() + " is out of range (" + std::to_string(min) + " to " +
                            std::to_string(max) + ")");
    }
    return v;
  }
  Result<std::chrono::milliseconds> Duration(const Json& j, const std::string& path) const {
    SRT_ASSIGN_OR_RETURN(std::string s, String(j, path));
    Result<std::chrono::milliseconds> d = ParseGoDuration(s);
    if (!d) return Fail(path, Quote(s) + " is not a duration (30s, 5m, 1h30m)");
    return *d;
  }
  Result<void> Name(const std::string& name, const std::string& path) const {
    bool ok = !name.empty() && name.size() <= kMaxNameBytes &&
              std::all_of(name.begin(), name.end(), [](char ch) {
                return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                       (ch >= '0' && ch <= '9') || ch == '-' || ch == '_';
              });
    if (!ok) {
      return Fail(path, Quote(name) +
                            " is not a name (1 to 64 letters, digits, '-' and '_': it becomes "
                            "the path /mcp/NAME and the host NAME.<domain>)");
    }
    return Ok();
  }

  Result<void> Listen(const Json& l, McpConfig& c) const {
    SRT_RETURN_IF_ERROR(ExpectObject(l, "/listen"));
    SRT_RETURN_IF_ERROR(Keys(l, "/listen", {"hostname", "port", "domains"}));
    if (l.contains("hostname")) {
      SRT_ASSIGN_OR_RETURN(c.listen_host, String(l["hostname"], "/listen/hostname"));
      if (c.listen_host != "localhost" && !ParseIpAddress(c.listen_host)) {
        return Fail("/listen/hostname",
                    Quote(c.listen_host) + " is not an IP address or \"localhost\"");
      }
    }
    if (l.contains("port")) {
      SRT_ASSIGN_OR_RETURN(uint64_t port, Whole(l["port"], "/listen/port", 0, 65535));
      c.listen_port = static_cast<uint16_t>(port);
    }
    if (l.contains("domains")) {
      SRT_ASSIGN_OR_RETURN(c.domains, Strings(l["domains"], "/listen/domains"));
      for (size_t i = 0; i < c.domains.size(); ++i) {
        std::string& d = c.domains[i];
        bool ok = !d.empty() && d.size() <= 253 &&
                  std::all_of(d.begin(), d.end(),
                              [](char ch) {
                                return (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
                                       ch == '-' || ch == '.';
                              }) &&
                  !d.starts_with('.') && !d.ends_with('.');
        if (!ok) {
          return Fail("/listen/domains/" + std::to_string(i),
                      Quote(d) + " is not a lower-case DNS name");
        }
      }
    }
    return Ok();
  }

  Result<void> Limits(const Json& j, DaemonLimits& l) const {
    SRT_RETURN_IF_ERROR(ExpectObject(j, "/limits"));
    SRT_RETURN_IF_ERROR(
        Keys(j, "/limits",
             {"maxBodyBytes", "maxMessageBytes", "maxConnections", "maxConnectionsPerClient",
              "maxSessions", "maxSessionsPerClient", "maxInflightPerSession", "sessionIdle",
              "headTimeout", "keepAliveIdle", "upstreamTimeout", "replayEvents"}));
    auto whole = [&](const char* key, uint64_t min, uint64_t max, auto& out) -> Result<void> {
      if (!j.contains(key)) return Ok();
      SRT_ASSIGN_OR_RETURN(uint64_t v, Whole(j[key], std::string("/limits/") + key, min, max));
      out = static_cast<std::remove_reference_t<decltype(out)>>(v);
      return Ok();
    };
    auto duration = [&](const char* key, std::chrono::milliseconds& out) -> Result<void> {
      if (!j.contains(key)) return Ok();
      SRT_ASSIGN_OR_RETURN(out, Duration(j[key], std::string("/limits/") + key));
      if (out.count() == 0) return Fail(std::string("/limits/") + key, "must not be 0");
      return Ok();
    };
    SRT_RETURN_IF_ERROR(whole("maxBodyBytes", 1024, uint64_t{64} << 20, l.max_body_bytes));
    SRT_RETURN_IF_ERROR(whole("maxMessageBytes", 1024, uint64_t{64} << 20, l.max_message_bytes));
    SRT_RETURN_IF_ERROR(whole("maxConnections", 1, 65536, l.max_connections));
    SRT_RETURN_IF_ERROR(whole("maxConnectionsPerClient", 1, 65536, l.max_connections_per_client));
    SRT_RETURN_IF_ERROR(whole("maxSessions", 1, 65536, l.max_sessions));
    SRT_RETURN_IF_ERROR(whole("maxSessionsPerClient", 1, 65536, l.max_sessions_per_client));
    SRT_RETURN_IF_ERROR(whole("maxInflightPerSession", 1, 65536, l.max_inflight_per_session));
    SRT_RETURN_IF_ERROR(whole("replayEvents", 0, 4096, l.replay_events));
    SRT_RETURN_IF_ERROR(duration("sessionIdle", l.session_idle));
    SRT_RETURN_IF_ERROR(duration("headTimeout", l.head_timeout));
    SRT_RETURN_IF_ERROR(duration("keepAliveIdle", l.keepalive_idle));
    SRT_RETURN_IF_ERROR(duration("upstreamTimeout", l.upstream_timeout));
    return Ok();
  }

  Result<StdioServer> Server(const Json& j, const std::string& path,
                             const std::string& name) const {
    StdioServer s;
    s.name = name;
    SRT_RETURN_IF_ERROR(ExpectObject(j, path));
    SRT_RETURN_IF_ERROR(Keys(j, path, {"type", "command", "args", "env", "cwd", "srt", "limits"}));
    if (j.contains("type")) {
      SRT_ASSIGN_OR_RETURN(std::string type, String(j["type"], path + "/type"));
      if (type != "stdio") {
        return Fail(path + "/type", Quote(type) +
                                        ": only \"stdio\" servers run in sandboxes "
                                        "(put an HTTP server in `routes`)");
      }
    }
    if (!j.contains("command")) return Fail(path, "has no \"command\"");
    SRT_ASSIGN_OR_RETURN(std::string command, String(j["command"], path + "/command"));
    if (command.empty()) return Fail(path + "/command", "is empty");
    s.argv.push_back(std::move(command));
    if (j.contains("args")) {
      SRT_ASSIGN_OR_RETURN(std::vector<std::string> args, Strings(j["args"], path + "/args"));
      s.argv.insert(s.argv.end(), args.begin(), args.end());
    }
    if (j.contains("env")) {
      const Json& e = j["env"];
      SRT_RETURN_IF_ERROR(ExpectObject(e, path + "/env"));
      for (auto it = e.begin(); it != e.end(); ++it) {
        const std::string kp = path + "/env/" + JsonPointerToken(it.key());
        if (it.key().empty() || it.key().find('=') != std::string::npos ||
            it.key().find('\0') != std::string::npos) {
          return Fail(kp, Quote(it.key()) + " is not a variable name");
        }
        SRT_ASSIGN_OR_RETURN(std::string v, String(it.value(), kp));
        s.env[it.key()] = std::move(v);
      }
    }
    if (j.contains("cwd")) {
      SRT_ASSIGN_OR_RETURN(std::string cwd, String(j["cwd"], path + "/cwd"));
      if (!cwd.starts_with('/'))
        return Fail(path + "/cwd", Quote(cwd) + " is not an absolute path");
      s.cwd = std::move(cwd);
    }
    if (j.contains("srt")) {
      const Json& block = j["srt"];
      SRT_RETURN_IF_ERROR(ExpectObject(block, path + "/srt"));
      // libsrt's own parser, so the block means exactly what a settings file would. Its messages
      // name the block by our position and pointer, then its own pointer inside it.
      std::string where = std::string(origin_);
      if (auto it = starts_.find(path + "/srt"); it != starts_.end()) {
        auto [line, column] = LineAndColumn(text_, it->second);
        where += ":" + std::to_string(line) + ":" + std::to_string(column);
      }
      where += ": " + path + "/srt";
      Result<LoadedSettings> loaded = ParseSettings(block.dump(), where);
      if (!loaded) return loaded.error();
      s.settings = std::move(loaded->settings);
      s.settings_warnings = std::move(loaded->warnings);
    }
    if (j.contains("limits")) {
      const Json& l = j["limits"];
      const std::string lp = path + "/limits";
      SRT_RETURN_IF_ERROR(ExpectObject(l, lp));
      SRT_RETURN_IF_ERROR(Keys(l, lp, {"memory", "cpus", "pids", "time"}));
      ServerLimits limits;
      limits.pids = kDefaultServerPids;
      if (l.contains("memory")) {
        const Json& m = l["memory"];
        std::string text = m.is_string()            ? m.get<std::string>()
                           : m.is_number_unsigned() ? m.dump()
                                                    : "";
        Result<uint64_t> bytes = ParseByteSize(text);
        if (text.empty() || !bytes) {
          return Fail(lp + "/memory", Quote(m.dump()) + " is not a size (512M, 2G, 1048576)");
        }
        limits.memory_bytes = *bytes;
      }
      if (l.contains("cpus")) {
        const Json& cpu = l["cpus"];
        std::string text = cpu.is_string()   ? cpu.get<std::string>()
                           : cpu.is_number() ? cpu.dump()
                                             : "";
        Result<uint32_t> millis = ParseCpus(text);
        if (text.empty() || !millis) {
          return Fail(lp + "/cpus", Quote(cpu.dump()) + " is not a CPU count (1, 0.5)");
        }
        limits.cpu_millis = *millis;
      }
      if (l.contains("pids")) {
        SRT_ASSIGN_OR_RETURN(uint64_t pids, Whole(l["pids"], lp + "/pids", 0, 1u << 22));
        if (pids != 0 && pids < 16) {
          return Fail(lp + "/pids", l["pids"].dump() + " is out of range (16 to " +
                                        std::to_string(1u << 22) + "; 0: no limit)");
        }
        limits.pids = static_cast<uint32_t>(pids);
      }
      if (l.contains("time")) {
        SRT_ASSIGN_OR_RETURN(limits.time, Duration(l["time"], lp + "/time"));
      }
      s.limits = limits;
    } else {
      // A fork bomb in one session's sandbox must not take the host's process table.
      s.limits = ServerLimits{.pids = kDefaultServerPids};
    }
    return s;
  }

  Result<HttpRoute> Route(const Json& j, const std::string& path) const {
    HttpRoute r;
    SRT_RETURN_IF_ERROR(ExpectObject(j, path));
    SRT_RETURN_IF_ERROR(Keys(j, path, {"name", "upstream"}));
    if (!j.contains("name")) return Fail(path, "has no \"name\"");
    if (!j.contains("upstream")) return Fail(path, "has no \"upstream\"");
    SRT_ASSIGN_OR_RETURN(r.name, String(j["name"], path + "/name"));
    SRT_RETURN_IF_ERROR(Name(r.name, path + "/name"));
    SRT_ASSIGN_OR_RETURN(r.upstream, String(j["upstream"], path + "/upstream"));
    const std::string up = path + "/upstream";
    std::string_view u = r.upstream;
    if (!u.starts_with("http://")) {
      return Fail(up, Quote(r.upstream) +
                          " is not an http:// URL (srt-mcp speaks plain HTTP "
                          "to upstreams on this host)");
    }
    u.remove_prefix(7);
    size_t slash = u.find('/');
    std::string_view authority = u.substr(0, slash);
    std::string_view rest = slash == std::string_view::npos ? "" : u.substr(slash);
    if (rest.find_first_of("?#") != std::string_view::npos) {
      return Fail(up, Quote(r.upstream) + " has a query or fragment");
    }
    while (rest.ends_with('/')) rest.remove_suffix(1);
    r.base_path = std::string(rest);
    std::optional<Endpoint> ep = ParseEndpoint(authority, 80);
    if (ep) {
      r.host = FormatIpAddress(ep->address);
      r.port = ep->port;
    } else if (authority == "localhost" || authority.starts_with("localhost:")) {
      r.host = "127.0.0.1";
      std::optional<uint32_t> port = authority == "localhost"
                                         ? std::optional<uint32_t>(80)
                                         : ParseWholeNumber(authority.substr(10), 1, 65535);
      if (!port) return Fail(up, Quote(r.upstream) + " has a bad port");
      r.port = static_cast<uint16_t>(*port);
    } else {
      return Fail(up, Quote(r.upstream) +
                          ": the host must be an IP address or localhost (no DNS at run time)");
    }
    return r;
  }

  std::string_view text_;
  std::string_view origin_;
  const std::unordered_map<std::string, size_t>& starts_;
};

}  // namespace

bool IsLoopbackHost(std::string_view host) {
  if (host == "localhost") return true;
  std::optional<IpAddress> ip = ParseIpAddress(host);
  if (!ip) return false;
  if (ip->family == IpAddress::Family::kIpv4) return ip->bytes[0] == 127;
  IpAddress one;
  one.family = IpAddress::Family::kIpv6;
  one.bytes[15] = 1;
  return *ip == one;
}

Result<McpConfig> ParseMcpConfig(std::string_view text, std::string_view origin) {
  if (text.size() > kMaxConfigBytes) {
    return MakeError(Errc::kInvalidArgument,
                     std::string(origin) + ": larger than 1 MiB, not a configuration file");
  }
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    return MakeError(Errc::kInvalidArgument, std::string(origin) + ": empty");
  }
  // One reader of JSON text for srt's configuration files (libsrt's config/json_text): syntax,
  // depth, duplicate keys, and where each key starts for the decoder's messages.
  config::JsonPositions starts;
  if (std::optional<config::JsonTextError> e =
          config::CheckJsonText(text, {.max_depth = kMaxNestingDepth, .comments = true}, &starts)) {
    const std::string at =
        std::string(origin) + ":" + std::to_string(e->line) + ":" + std::to_string(e->column);
    switch (e->kind) {
      case config::JsonTextError::Kind::kSyntax:
        return MakeError(Errc::kInvalidArgument, at + ": " + e->reason);
      case config::JsonTextError::Kind::kTooDeep:
        return MakeError(Errc::kInvalidArgument,
                         std::string(origin) + ": nested deeper than 32 levels");
      case config::JsonTextError::Kind::kDuplicateKey:
        return MakeError(Errc::kInvalidArgument,
                         at + ": " + e->object_pointer + "/" + JsonPointerToken(e->key) +
                             ": the key appears twice (which one counts would be a guess)");
    }
  }
  Decoder decoder(text, origin, starts);
  Json root;
  try {
    root = Json::parse(text, nullptr, /*allow_exceptions=*/true, /*ignore_comments=*/true);
  } catch (const Json::exception& e) {
    return MakeError(Errc::kInvalidArgument, std::string(origin) + ": " + e.what());
  }
  return decoder.Decode(root);
}

void HideDaemonSecrets(McpConfig& config, const std::string& config_path) {
  std::vector<std::string> secrets = config.bearer_token_files;
  if (!config_path.empty()) secrets.push_back(config_path);
  for (auto& [name, server] : config.servers) {
    for (const std::string& path : secrets) {
      server.settings.filesystem.deny_read.push_back(PathEntry{path, /*literal=*/true});
    }
  }
}

}  // namespace srt::mcp
