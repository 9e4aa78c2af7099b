// SPDX-License-Identifier: Apache-2.0
// config/settings.cc: settings JSON text -> srt::Settings. With json_text.cc (and srt-mcp's
// configuration reader, which reads its text through json_text too) the only code in srt that
// sees nlohmann::json (house style §2.7): json_text's SAX pass finds syntax errors (with
// line:column) and duplicate keys, then a hand-written decoder walks the document with a
// JSON-pointer path stack and returns the first schema error, quoting the bad value.
#include "srt/settings.h"

#include <fcntl.h>
#include <pwd.h>
#include <re2/re2.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>
#include <span>
#include <unordered_set>

#include "base/address.h"
#include "base/ascii.h"
#include "base/domain_pattern.h"
#include "base/path.h"
#include "base/proxy_url.h"
#include "base/strings.h"
#include "base/system_text.h"
#include "base/unique_fd.h"
#include "config/json_text.h"
#include "config/settings_keys.h"

namespace srt {
namespace {

using config::kAwsPairKeys;
using config::kCredentialEnvVarKeys;
using config::kCredentialFileKeys;
using config::kCredentialsKeys;
using config::KeyAction;
using config::kFilesystemKeys;
using config::kGitKeys;
using config::kMitmProxyKeys;
using config::kNetworkKeys;
using config::kNetworkSpecialKeys;
using config::kParentProxyKeys;
using config::kSchemaKey;
using config::kSigV4Keys;
using config::kTlsTerminateKeys;
using config::kTopLevelKeys;
using config::kTopLevelSpecialKeys;
using config::SpecialKey;

// ordered_json keeps keys in document order, so "the first error" is the first one in the file.
using Json = nlohmann::ordered_json;

// Limits on what a settings file may make us allocate (systemd: limit every user-controlled
// resource). Real settings are a few KiB and nest four levels deep.
constexpr size_t kMaxSettingsBytes = size_t{4} << 20;
constexpr std::string_view kMaxSettingsSizeText = "4 MiB";
constexpr size_t kMaxNestingDepth = 64;
// credentials: entries per list, an extract pattern's length, a variable name's length.
constexpr size_t kMaxCredentialEntries = 256;
constexpr size_t kMaxExtractPatternBytes = 4096;
constexpr size_t kMaxEnvNameBytes = 1024;
// git.safeDirectories: more than 8 become one "*" anyway.
constexpr size_t kMaxSafeDirectories = 4096;

// ---------------------------------------------------------------------------------------------
// Messages

std::string JoinPointer(std::span<const std::string> tokens) {
  std::string out;
  for (const std::string& token : tokens) {
    out += '/';
    out += config::JsonPointerToken(token);
  }
  return out;
}

// "origin: /a/b: " or, at the document root, "origin: ".
std::string Prefix(std::string_view origin, const std::string& pointer) {
  std::string out(origin);
  out += ": ";
  if (!pointer.empty()) {
    out += pointer;
    out += ": ";
  }
  return out;
}

// Double-quoted like upstream's messages, with JSON escapes.
std::string JsonQuote(std::string_view s) {
  return Json(std::string(s)).dump(-1, ' ', false, Json::error_handler_t::replace);
}

// A JSON value as JSON text (ASCII only, so nothing reaches a terminal raw), cut at 80 bytes.
std::string Shown(const Json& j) {
  std::string text = j.dump(-1, ' ', /*ensure_ascii=*/true, Json::error_handler_t::replace);
  if (text.size() > 80) text = text.substr(0, 77) + "...";
  return text;
}

// ---------------------------------------------------------------------------------------------
// Pass 2: the schema decoder.

std::string_view TypeName(const Json& j) {
  switch (j.type()) {
    case Json::value_t::object:
      return "an object";
    case Json::value_t::array:
      return "an array";
    case Json::value_t::string:
      return "a string";
    case Json::value_t::boolean:
      return "a boolean";
    case Json::value_t::null:
      return "null";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
    case Json::value_t::number_float:
      return "a number";
    case Json::value_t::binary:
    case Json::value_t::discarded:
      break;
  }
  return "an unexpected value";
}

bool IsGlob(std::string_view p) { return p.find_first_of("*?[") != std::string_view::npos; }

bool HasControlCharacter(std::string_view s) {
  return std::any_of(s.begin(), s.end(), [](char c) {
    auto u = static_cast<unsigned char>(c);
    return u < 0x20 || u == 0x7f;
  });
}

// True if every host `inner` matches (ports aside: injection is per host) is matched by `outer`.
bool Covers(const DomainPattern& outer, const DomainPattern& inner) {
  using Kind = DomainPattern::Kind;
  if (outer.kind == Kind::kWildcard) {
    // *.b covers a.b, x.a.b, *.b and *.a.b; never b itself.
    if (inner.kind == Kind::kExact) return inner.host.ends_with("." + outer.host);
    if (inner.kind == Kind::kWildcard) {
      return inner.host == outer.host || inner.host.ends_with("." + outer.host);
    }
    return false;
  }
  return outer.kind == inner.kind && outer.host == inner.host;
}

bool CoveredByAny(const DomainPattern& inner, const std::vector<DomainPattern>& outer) {
  return std::any_of(outer.begin(), outer.end(),
                     [&](const DomainPattern& o) { return Covers(o, inner); });
}

// Whether a masked credential's real value has a transport it may cross: a TLS-terminated,
// verified connection (network.tlsTerminate), or plain HTTP by the user's explicit choice
// (credentials.allowPlaintextInject). The one place that decides it.
bool MaskTransportAvailable(const Settings& s) {
  return s.network.tls_terminate.has_value() || s.credentials.allow_plaintext_inject;
}

// What an unknown key is: at the top level, where other tools keep keys of their own, a warning;
// inside filesystem and network an error, because a misspelt rule (denyReed) ignored would leave
// the sandbox weaker than the file says. A key near a known one is a typo, an error anywhere.
enum class Unknown { kWarn, kFail };

// The known key nearest to `key`, when it is near enough to be a typo of it.
std::optional<std::string_view> NearestKey(std::string_view key,
                                           std::span<const std::string_view> known,
                                           std::span<const SpecialKey> special) {
  const size_t allowed = key.size() < 5 ? 1 : 2;
  std::optional<std::string_view> best;
  size_t best_distance = allowed + 1;
  auto consider = [&](std::string_view candidate) {
    const size_t d = strings::EditDistance(key, candidate);
    if (d < best_distance) {
      best_distance = d;
      best = candidate;
    }
  };
  for (std::string_view k : known) consider(k);
  for (const SpecialKey& k : special) consider(k.key);
  return best;
}

class Decoder {
 public:
  explicit Decoder(std::string_view origin) : origin_(origin) {}

  Result<Settings> Root(const Json& j) {
    if (!j.is_object()) {
      return Fail("expected a settings object, got " + std::string(TypeName(j)));
    }
    Settings s;
    for (const auto& [key, value] : j.items()) {
      PathScope scope(*this, key);
      if (key == "network") {
        SRT_ASSIGN_OR_RETURN(s.network, Network(value));
      } else if (key == "filesystem") {
        SRT_ASSIGN_OR_RETURN(s.filesystem, Filesystem(value));
      } else if (key == "enableWeakerNestedSandbox") {
        SRT_ASSIGN_OR_RETURN(s.enable_weaker_nested_sandbox, Bool(value));
      } else if (key == "allowNestedUserNamespaces") {
        SRT_ASSIGN_OR_RETURN(s.allow_nested_user_namespaces, Bool(value));
      } else if (key == "mandatoryDenySearchDepth") {
        SRT_ASSIGN_OR_RETURN(int64_t depth, Integer(value, 1, 10));
        s.mandatory_deny_search_depth = static_cast<int>(depth);
      } else if (key == "bwrapPath") {
        SRT_ASSIGN_OR_RETURN(s.bwrap_path, AbsolutePath(value));
      } else if (key == "credentials") {
        SRT_ASSIGN_OR_RETURN(s.credentials, Credentials(value));
      } else if (key == "git") {
        SRT_ASSIGN_OR_RETURN(s.git, Git(value));
      } else if (key == "javaAgentJarPath") {
        SRT_ASSIGN_OR_RETURN(s.java_agent_jar_path, AbsolutePath(value));
      } else if (key == kSchemaKey) {
        // The file names its JSON Schema for editors (share/srt/srt-settings.schema.json).
        if (!value.is_string()) return Expected("a string (the schema's path or URL)", value);
      } else {
        SRT_RETURN_IF_ERROR(OtherKey(kTopLevelSpecialKeys, kTopLevelKeys, Unknown::kWarn, key));
      }
    }
    // Across objects: credentials against network (either may come first in the file).
    SRT_RETURN_IF_ERROR(CheckCredentials(s));
    return s;
  }

  std::vector<std::string> TakeWarnings() { return std::move(warnings_); }

 private:
  // Pushes a reference token for the lifetime of the scope.
  class PathScope {
   public:
    PathScope(Decoder& d, std::string token) : d_(d) { d_.path_.push_back(std::move(token)); }
    PathScope(Decoder& d, size_t index) : PathScope(d, std::to_string(index)) {}
    PathScope(const PathScope&) = delete;
    PathScope& operator=(const PathScope&) = delete;
    ~PathScope() { d_.path_.pop_back(); }

   private:
    Decoder& d_;
  };

  Error Fail(std::string_view message) const {
    return MakeError(Errc::kInvalidArgument,
                     Prefix(origin_, JoinPointer(path_)) + std::string(message));
  }
  void Warn(std::string_view message) {
    warnings_.push_back(Prefix(origin_, JoinPointer(path_)) + std::string(message));
  }
  Error Expected(std::string_view what, const Json& got) const {
    return Fail("expected " + std::string(what) + ", got " + std::string(TypeName(got)));
  }

  // A key that is not part of the schema srt implements (the current path names it). `known`
  // are the object's keys, `unknown` what a key that is none of them (nor special) is.
  Result<void> OtherKey(std::span<const SpecialKey> table, std::span<const std::string_view> known,
                        Unknown unknown, std::string_view key) {
    for (const SpecialKey& special : table) {
      if (special.key != key) {
        continue;
      }
      switch (special.action) {
        case KeyAction::kNoEffectOnLinux:
          Warn("has no effect on Linux, ignoring");
          return Ok();
        case KeyAction::kNotUsed:
          Warn("is not used by this srt (it needs no " + std::string(special.needs_no) +
               "), ignoring");
          return Ok();
        case KeyAction::kUnsupported:
          return Fail(
              "is not supported by this srt yet; remove it (ignoring it would weaken the "
              "sandbox)");
      }
    }
    const std::optional<std::string_view> nearest = NearestKey(key, known, table);
    constexpr std::string_view kWeaker =
        "Ignoring it could leave the sandbox weaker than this file says";
    if (nearest) {
      // A typo of a known key, even where unknown keys are only warned about (netwrk).
      return Fail("unknown key; did you mean " + strings::Quote(*nearest) + "? " +
                  std::string(kWeaker));
    }
    if (unknown == Unknown::kWarn) {
      Warn("unknown key, ignoring");
      return Ok();
    }
    std::string message = "unknown key; the keys here are";
    for (size_t i = 0; i < known.size(); ++i) {
      message += (i == 0 ? " " : ", ") + std::string(known[i]);
    }
    return Fail(message + ". " + std::string(kWeaker));
  }

  Result<bool> Bool(const Json& j) const {
    if (!j.is_boolean()) {
      return Expected("a boolean", j);
    }
    return j.get<bool>();
  }

  // An integer in [lo, hi]. A float with an integral value (3.0, 1e1) counts, as in upstream's
  // JavaScript; 2.5 and "3" do not.
  Result<int64_t> Integer(const Json& j, int64_t lo, int64_t hi) const {
    std::string range = " is out of range (" + std::to_string(lo) + ".." + std::to_string(hi) + ")";
    if (j.is_number_unsigned()) {
      uint64_t v = j.get<uint64_t>();
      if (v > static_cast<uint64_t>(hi) || static_cast<int64_t>(v) < lo) {
        return Fail(std::to_string(v) + range);
      }
      return static_cast<int64_t>(v);
    }
    if (j.is_number_integer()) {
      int64_t v = j.get<int64_t>();
      if (v < lo || v > hi) {
        return Fail(std::to_string(v) + range);
      }
      return v;
    }
    if (j.is_number_float()) {
      double v = j.get<double>();
      if (!std::isfinite(v)) {
        return Fail("the number" + range);
      }
      if (std::trunc(v) != v) {
        return Fail(j.dump() + " is not an integer");
      }
      if (v < static_cast<double>(lo) || v > static_cast<double>(hi)) {
        return Fail(j.dump() + range);
      }
      return static_cast<int64_t>(v);
    }
    return Expected("an integer", j);
  }

  Result<uint16_t> Port(const Json& j) const {
    SRT_ASSIGN_OR_RETURN(int64_t port, Integer(j, 1, 65535));
    return static_cast<uint16_t>(port);
  }

  Result<std::string> AbsolutePath(const Json& j) const {
    if (!j.is_string()) {
      return Expected("an absolute path", j);
    }
    const std::string& p = j.get_ref<const std::string&>();
    if (p.empty()) {
      return Fail("expected an absolute path, got an empty string");
    }
    if (p.find('\0') != std::string::npos) {
      return Fail(strings::Quote(p) + " contains a NUL byte");
    }
    if (!path::IsAbsolute(p)) {
      return Fail(strings::Quote(p) + " must be an absolute path");
    }
    return p;
  }

  // ---- git --------------------------------------------------------------------------------

  // Upstream strips unknown keys here; srt warns (and refuses a near miss, as everywhere).
  Result<GitSettings> Git(const Json& j) {
    if (!j.is_object()) {
      return Expected("an object", j);
    }
    GitSettings git;
    for (const auto& [key, value] : j.items()) {
      PathScope scope(*this, key);
      if (key == "safeDirectories") {
        SRT_ASSIGN_OR_RETURN(git.safe_directories, SafeDirectories(value));
      } else {
        SRT_RETURN_IF_ERROR(OtherKey({}, kGitKeys, Unknown::kWarn, key));
      }
    }
    return git;
  }

  // Strings as git reads safe.directory (a path, "~/..." or "*"); empty ones are skipped, as
  // upstream does. They become environment values, so no NUL.
  Result<std::vector<std::string>> SafeDirectories(const Json& j) {
    if (!j.is_array()) {
      return Expected("an array of directories", j);
    }
    if (j.size() > kMaxSafeDirectories) {
      return Fail("has " + std::to_string(j.size()) + " entries, more than " +
                  std::to_string(kMaxSafeDirectories));
    }
    std::vector<std::string> out;
    for (size_t i = 0; i < j.size(); ++i) {
      PathScope scope(*this, i);
      if (!j[i].is_string()) {
        return Expected("a directory", j[i]);
      }
      const std::string& dir = j[i].get_ref<const std::string&>();
      if (dir.find('\0') != std::string::npos) {
        return Fail(strings::Quote(dir) + " contains a NUL byte");
      }
      if (!dir.empty()) out.push_back(dir);
    }
    return out;
  }

  // ---- filesystem -------------------------------------------------------------------------

  Result<FilesystemSettings> Filesystem(const Json& j) {
    if (!j.is_object()) {
      return Expected("an object", j);
    }
    FilesystemSettings fs;
    for (const auto& [key, value] : j.items()) {
      PathScope scope(*this, key);
      if (key == "denyRead") {
        SRT_ASSIGN_OR_RETURN(fs.deny_read, PathList(value, /*is_deny=*/true));
      } else if (key == "allowRead") {
        SRT_ASSIGN_OR_RETURN(fs.allow_read, PathList(value, /*is_deny=*/false));
      } else if (key == "allowWrite") {
        SRT_ASSIGN_OR_RETURN(fs.allow_write, PathList(value, /*is_deny=*/false));
      } else if (key == "denyWrite") {
        SRT_ASSIGN_OR_RETURN(fs.deny_write, PathList(value, /*is_deny=*/true));
      } else if (key == "allowGitConfig") {
        SRT_ASSIGN_OR_RETURN(fs.allow_git_config, Bool(value));
      } else if (key == "disabled") {
        SRT_ASSIGN_OR_RETURN(fs.disabled, Bool(value));
      } else {
        SRT_RETURN_IF_ERROR(OtherKey({}, kFilesystemKeys, Unknown::kFail, key));
      }
    }
    return fs;
  }

  Result<std::vector<PathEntry>> PathList(const Json& j, bool is_deny) {
    if (!j.is_array()) {
      return Expected("an array of paths", j);
    }
    std::vector<PathEntry> entries;
    entries.reserve(j.size());
    for (size_t i = 0; i < j.size(); ++i) {
      PathScope scope(*this, i);
      SRT_ASSIGN_OR_RETURN(PathEntry entry, Path(j[i], is_deny));
      entries.push_back(std::move(entry));
    }
    return entries;
  }

  // "p" or the strict object {"path": "p", "literal": true}.
  Result<PathEntry> Path(const Json& j, bool is_deny) {
    static constexpr std::string_view kExpectedEntry =
        "a path, or { \"path\": \"<path>\", \"literal\": true }";
    PathEntry entry;
    if (j.is_string()) {
      entry.path = j.get_ref<const std::string&>();
      if (entry.path.empty()) {
        return Fail("expected a path, got an empty string");
      }
    } else if (j.is_object()) {
      if (!j.contains("path")) {
        return Fail("expected " + std::string(kExpectedEntry) + ", got an object without \"path\"");
      }
      for (const auto& [key, value] : j.items()) {
        if (key == "path") {
          PathScope scope(*this, key);
          if (!value.is_string()) {
            return Expected("a path", value);
          }
          entry.path = value.get_ref<const std::string&>();
          if (entry.path.empty()) {
            return Fail("expected a path, got an empty string");
          }
        } else if (key == "literal") {
          PathScope scope(*this, key);
          SRT_ASSIGN_OR_RETURN(entry.literal, Bool(value));
        } else {
          return Fail("unknown key " + strings::Quote(key) + " in a path entry; expected " +
                      std::string(kExpectedEntry));
        }
      }
    } else {
      return Expected(kExpectedEntry, j);
    }
    if (entry.path.find('\0') != std::string::npos) {
      return Fail(strings::Quote(entry.path) + " contains a NUL byte");
    }
    // Upstream's rule: a rooted deny glob ending in '/' can match no path, so the deny would
    // silently do nothing.
    const std::string& p = entry.path;
    if (is_deny && !entry.literal && IsGlob(p) && (p.front() == '/' || p.front() == '~') &&
        p.back() == '/') {
      std::string_view fixed = p;
      while (fixed.size() > 1 && fixed.back() == '/') {
        fixed.remove_suffix(1);
      }
      return Fail("Deny glob " + JsonQuote(p) +
                  " ends in a separator, so as a pattern it can match no path. Write " +
                  JsonQuote(fixed) +
                  ", which is also read as the path of that name where it exists, or add a "
                  "\"**\" segment to match at any depth.");
    }
    return entry;
  }

  // ---- network ----------------------------------------------------------------------------

  Result<NetworkSettings> Network(const Json& j) {
    if (!j.is_object()) {
      return Expected("an object", j);
    }
    NetworkSettings net;
    const Json* reasons = nullptr;
    for (const auto& [key, value] : j.items()) {
      PathScope scope(*this, key);
      if (key == "allowedDomains") {
        SRT_ASSIGN_OR_RETURN(net.allowed_domains, DomainList(value, PatternList::kAllow));
      } else if (key == "deniedDomains") {
        SRT_ASSIGN_OR_RETURN(net.denied_domains, DomainList(value, PatternList::kDeny));
      } else if (key == "deniedDomainReasons") {
        SRT_ASSIGN_OR_RETURN(net.denied_domain_reasons, Reasons(value));
        reasons = &value;
      } else if (key == "strictAllowlist") {
        SRT_ASSIGN_OR_RETURN(net.strict_allowlist, Bool(value));
      } else if (key == "deniedResolvedAddresses") {
        SRT_ASSIGN_OR_RETURN(net.denied_resolved_addresses, AddressList(value));
      } else if (key == "allowAllUnixSockets") {
        SRT_ASSIGN_OR_RETURN(net.allow_all_unix_sockets, Bool(value));
      } else if (key == "httpProxyPort") {
        SRT_ASSIGN_OR_RETURN(net.http_proxy_port, Port(value));
      } else if (key == "socksProxyPort") {
        SRT_ASSIGN_OR_RETURN(net.socks_proxy_port, Port(value));
      } else if (key == "parentProxy") {
        SRT_ASSIGN_OR_RETURN(net.parent_proxy, ParentProxy(value));
      } else if (key == "refuseOpaqueTunnels") {
        SRT_ASSIGN_OR_RETURN(net.refuse_opaque_tunnels, Bool(value));
      } else if (key == "requireHostMatch") {
        SRT_ASSIGN_OR_RETURN(net.require_host_match, Bool(value));
      } else if (key == "stripResponseHeaders") {
        SRT_ASSIGN_OR_RETURN(net.strip_response_headers, HeaderNames(value));
      } else if (key == "transparentCapture") {
        SRT_ASSIGN_OR_RETURN(net.transparent_capture, Bool(value));
      } else if (key == "dnsServers") {
        SRT_ASSIGN_OR_RETURN(net.dns_servers, DnsServers(value));
      } else if (key == "tlsTerminate") {
        SRT_ASSIGN_OR_RETURN(net.tls_terminate, TlsTerminate(value));
      } else if (key == "mitmProxy") {
        SRT_ASSIGN_OR_RETURN(net.mitm_proxy, MitmProxy(value));
      } else {
        SRT_RETURN_IF_ERROR(OtherKey(kNetworkSpecialKeys, kNetworkKeys, Unknown::kFail, key));
      }
    }
    if (net.tls_terminate && net.mitm_proxy) {
      // Upstream's words (its initialize() throws them).
      return Fail("network.tlsTerminate and network.mitmProxy are mutually exclusive");
    }
    // Checked once the whole object is read: deniedDomains may come after the reasons.
    if (reasons != nullptr) {
      PathScope scope(*this, "deniedDomainReasons");
      for (const auto& [key, value] : reasons->items()) {
        if (std::find(net.denied_domains.begin(), net.denied_domains.end(), key) ==
            net.denied_domains.end()) {
          PathScope entry_scope(*this, key);
          return Fail(strings::Quote(key) +
                      " is not an entry of deniedDomains (a reason is keyed by the exact entry)");
        }
      }
    }
    return net;
  }

  Result<std::vector<std::string>> DomainList(const Json& j, PatternList list) {
    if (!j.is_array()) {
      return Expected("an array of domain patterns", j);
    }
    std::vector<std::string> out;
    out.reserve(j.size());
    for (size_t i = 0; i < j.size(); ++i) {
      PathScope scope(*this, i);
      if (!j[i].is_string()) {
        return Expected("a domain pattern string", j[i]);
      }
      const std::string& text = j[i].get_ref<const std::string&>();
      Result<DomainPattern> pattern = ParseDomainPattern(text, list);
      if (!pattern) {
        return Fail(pattern.error().message());
      }
      out.push_back(text);
    }
    return out;
  }

  Result<std::map<std::string, std::string>> Reasons(const Json& j) {
    if (!j.is_object()) {
      return Expected("an object mapping deniedDomains entries to reasons", j);
    }
    std::map<std::string, std::string> out;
    for (const auto& [key, value] : j.items()) {
      PathScope scope(*this, key);
      if (!value.is_string()) {
        return Expected("a non-empty string", value);
      }
      const std::string& reason = value.get_ref<const std::string&>();
      if (reason.empty()) {
        return Fail("expected a non-empty string, got an empty string");
      }
      // The reason becomes an HTTP status phrase: CR/LF there would split the response.
      if (HasControlCharacter(reason)) {
        return Fail(strings::Quote(reason) + " contains a control character");
      }
      out.emplace(key, reason);
    }
    return out;
  }

  Result<std::vector<std::string>> AddressList(const Json& j) {
    if (!j.is_array()) {
      return Expected("an array of IP addresses or CIDR ranges", j);
    }
    std::vector<std::string> out;
    out.reserve(j.size());
    for (size_t i = 0; i < j.size(); ++i) {
      PathScope scope(*this, i);
      if (!j[i].is_string()) {
        return Expected("an IP address or CIDR range string", j[i]);
      }
      const std::string& text = j[i].get_ref<const std::string&>();
      Result<IpNetwork> network = ParseIpNetwork(text);
      if (!network) {
        return Fail(network.error().message());
      }
      out.push_back(text);
    }
    return out;
  }

  Result<ParentProxySettings> ParentProxy(const Json& j) {
    if (!j.is_object()) {
      return Expected("an object", j);
    }
    ParentProxySettings proxy;
    for (const auto& [key, value] : j.items()) {
      PathScope scope(*this, key);
      if (key == "http") {
        SRT_ASSIGN_OR_RETURN(proxy.http, ProxyUrl(value));
      } else if (key == "https") {
        SRT_ASSIGN_OR_RETURN(proxy.https, ProxyUrl(value));
      } else if (key == "noProxy") {
        if (!value.is_string()) {
          return Expected("a string", value);
        }
        const std::string& no_proxy = value.get_ref<const std::string&>();
        if (HasControlCharacter(no_proxy)) {
          return Fail(strings::Quote(no_proxy) + " contains a control character");
        }
        proxy.no_proxy = no_proxy;
      } else {
        SRT_RETURN_IF_ERROR(OtherKey({}, kParentProxyKeys, Unknown::kFail, key));
      }
    }
    return proxy;
  }

  // network.tlsTerminate (upstream-srt.md §1.3.1).
  // {"socketPath": "/abs", "domains": [pattern, ...]}, both required. Upstream takes a relative
  // socketPath too (relative to wherever srt runs); srt wants the path it will connect to.
  Result<MitmProxySettings> MitmProxy(const Json& j) {
    if (!j.is_object()) {
      return Expected("an object", j);
    }
    MitmProxySettings mitm;
    bool has_path = false;
    bool has_domains = false;
    for (const auto& [key, value] : j.items()) {
      PathScope scope(*this, key);
      if (key == "socketPath") {
        SRT_ASSIGN_OR_RETURN(mitm.socket_path, AbsolutePath(value));
        has_path = true;
      } else if (key == "domains") {
        SRT_ASSIGN_OR_RETURN(mitm.domains, DomainList(value, PatternList::kAllow));
        if (mitm.domains.empty()) {
          return Fail("expected at least one domain pattern, got an empty array");
        }
        has_domains = true;
      } else {
        SRT_RETURN_IF_ERROR(OtherKey({}, kMitmProxyKeys, Unknown::kFail, key));
      }
    }
    if (!has_path) return Fail("socketPath is required");
    if (!has_domains) return Fail("domains is required");
    return mitm;
  }

  Result<TlsTerminateSettings> TlsTerminate(const Json& j) {
    if (!j.is_object()) {
      return Expected("an object", j);
    }
    TlsTerminateSettings tls;
    for (const auto& [key, value] : j.items()) {
      PathScope scope(*this, key);
      if (key == "caCertPath") {
        SRT_ASSIGN_OR_RETURN(tls.ca_cert_path, FilePath(value));
      } else if (key == "caKeyPath") {
        SRT_ASSIGN_OR_RETURN(tls.ca_key_path, FilePath(value));
      } else if (key == "excludeDomains") {
        SRT_ASSIGN_OR_RETURN(tls.exclude_domains, DomainList(value, PatternList::kAllow));
      } else if (key == "extraCaCertPaths") {
        if (!value.is_array()) {
          return Expected("an array of paths", value);
        }
        for (size_t i = 0; i < value.size(); ++i) {
          PathScope item(*this, i);
          SRT_ASSIGN_OR_RETURN(std::string path, FilePath(value[i]));
          tls.extra_ca_cert_paths.push_back(std::move(path));
        }
      } else if (key == "maxTunnels") {
        SRT_ASSIGN_OR_RETURN(const int64_t n, Integer(value, 1, 65536));
        tls.max_tunnels = static_cast<uint32_t>(n);
      } else if (key == "handshakeTimeoutMs") {
        SRT_ASSIGN_OR_RETURN(const int64_t n, Integer(value, 100, 600000));
        tls.handshake_timeout_ms = static_cast<uint32_t>(n);
      } else {
        SRT_RETURN_IF_ERROR(OtherKey({}, kTlsTerminateKeys, Unknown::kFail, key));
      }
    }
    // Upstream's refinement, and its message.
    if (tls.ca_cert_path.has_value() != tls.ca_key_path.has_value()) {
      return Fail("caCertPath and caKeyPath must be provided together");
    }
    return tls;
  }

  // A path to a file srt opens itself (as upstream: any non-empty string; a relative one is
  // relative to srt's working directory).
  Result<std::string> FilePath(const Json& j) const {
    if (!j.is_string()) {
      return Expected("a non-empty path", j);
    }
    const std::string& path = j.get_ref<const std::string&>();
    if (path.empty()) {
      return Fail("expected a non-empty path, got an empty string");
    }
    if (HasControlCharacter(path)) {
      return Fail(strings::Quote(path) + " contains a control character");
    }
    return path;
  }

  // A parent proxy srt chains to: plain HTTP (the proxy speaks CONNECT and absolute-form to it).
  // The scheme is required here (the environment's HTTP_PROXY may omit it); the rest is the one
  // proxy URL grammar (base/proxy_url.h), so a bad host or port fails at load.
  Result<std::string> ProxyUrl(const Json& j) const {
    if (!j.is_string()) {
      return Expected("a proxy URL string", j);
    }
    const std::string& url = j.get_ref<const std::string&>();
    const std::string lower = ascii::ToLower(url);
    constexpr std::string_view kScheme = "http://";
    bool ok = !HasControlCharacter(url) && url.find(' ') == std::string::npos &&
              lower.starts_with(kScheme) && lower.size() > kScheme.size();
    if (!ok) {
      return Fail(strings::Quote(url) +
                  " is not a proxy URL srt can chain to; expected http://[user:password@]host"
                  "[:port] (srt speaks plain HTTP to a parent proxy: https:// and socks5:// "
                  "parents are not supported)");
    }
    if (Result<srt::ProxyUrl> parsed = ParseProxyUrl(url); !parsed) {
      return Fail(parsed.error().message());
    }
    return url;
  }

  // network.stripResponseHeaders: HTTP field names (RFC 9110 §5.1 tokens). The framing fields
  // are refused: without them the client could not tell where a response ends.
  Result<std::vector<std::string>> HeaderNames(const Json& j) {
    if (!j.is_array()) {
      return Expected("an array of header names", j);
    }
    std::vector<std::string> out;
    for (size_t i = 0; i < j.size(); ++i) {
      PathScope scope(*this, i);
      if (!j[i].is_string()) {
        return Expected("a header name string", j[i]);
      }
      const std::string& name = j[i].get_ref<const std::string&>();
      if (name.empty()) {
        return Fail("expected a non-empty string, got an empty string");
      }
      if (!std::all_of(name.begin(), name.end(), [](char c) { return ascii::IsTchar(c); })) {
        return Fail(strings::Quote(name) + " is not an HTTP header name");
      }
      const std::string folded = ascii::FoldHeaderName(name);
      if (folded == "content-length" || folded == "transfer-encoding") {
        return Fail(strings::Quote(name) +
                    " frames the response and cannot be stripped (the client could not tell "
                    "where the response ends)");
      }
      out.push_back(name);
    }
    return out;
  }

  // network.dnsServers: "ip", "ip:port", "[v6]" or "[v6]:port".
  Result<std::vector<std::string>> DnsServers(const Json& j) {
    if (!j.is_array()) {
      return Expected("an array of DNS server addresses", j);
    }
    std::vector<std::string> out;
    for (size_t i = 0; i < j.size(); ++i) {
      PathScope scope(*this, i);
      if (!j[i].is_string()) {
        return Expected("a DNS server address string", j[i]);
      }
      const std::string& text = j[i].get_ref<const std::string&>();
      if (!ParseEndpoint(text, 53)) {
        return Fail(strings::Quote(text) +
                    " is not a DNS server address; expected an IP literal with an optional port, "
                    "e.g. \"127.0.0.1\", \"127.0.0.1:5353\", \"[::1]:53\"");
      }
      out.push_back(text);
    }
    return out;
  }

  // ---- credentials ------------------------------------------------------------------------

  Result<CredentialSettings> Credentials(const Json& j) {
    if (!j.is_object()) {
      return Expected("an object", j);
    }
    CredentialSettings out;
    for (const auto& [key, value] : j.items()) {
      PathScope scope(*this, key);
      if (key == "envVars") {
        if (!value.is_array()) return Expected("an array of environment variable entries", value);
        if (value.size() > kMaxCredentialEntries) return TooManyEntries();
        for (size_t i = 0; i < value.size(); ++i) {
          PathScope entry_scope(*this, i);
          SRT_ASSIGN_OR_RETURN(CredentialEnvVar v, CredentialEnv(value[i]));
          out.env_vars.push_back(std::move(v));
        }
      } else if (key == "files") {
        if (!value.is_array()) return Expected("an array of credential file entries", value);
        if (value.size() > kMaxCredentialEntries) return TooManyEntries();
        for (size_t i = 0; i < value.size(); ++i) {
          PathScope entry_scope(*this, i);
          SRT_ASSIGN_OR_RETURN(CredentialFile f, CredentialFileEntry(value[i]));
          out.files.push_back(std::move(f));
        }
      } else if (key == "allowPlaintextInject") {
        SRT_ASSIGN_OR_RETURN(out.allow_plaintext_inject, Bool(value));
      } else if (key == "awsPairs") {
        if (!value.is_array()) return Expected("an array of AWS key pair entries", value);
        if (value.size() > kMaxCredentialEntries) return TooManyEntries();
        for (size_t i = 0; i < value.size(); ++i) {
          PathScope entry_scope(*this, i);
          SRT_ASSIGN_OR_RETURN(AwsPairSettings p, AwsPair(value[i]));
          out.aws_pairs.push_back(std::move(p));
        }
      } else if (key == "sigv4") {
        SRT_ASSIGN_OR_RETURN(out.sigv4, SigV4(value));
      } else {
        SRT_RETURN_IF_ERROR(OtherKey({}, kCredentialsKeys, Unknown::kFail, key));
      }
    }
    return out;
  }

  // {accessKeyIdVar, secretAccessKeyVar, sessionTokenVar?} (strict).
  Result<AwsPairSettings> AwsPair(const Json& j) {
    if (!j.is_object()) {
      return Expected("an object {\"accessKeyIdVar\", \"secretAccessKeyVar\", ...}", j);
    }
    AwsPairSettings p;
    for (const auto& [key, value] : j.items()) {
      PathScope scope(*this, key);
      std::string* slot = key == "accessKeyIdVar"       ? &p.access_key_id_var
                          : key == "secretAccessKeyVar" ? &p.secret_access_key_var
                          : key == "sessionTokenVar"    ? &p.session_token_var.emplace()
                                                        : nullptr;
      if (slot == nullptr) {
        SRT_RETURN_IF_ERROR(OtherKey({}, kAwsPairKeys, Unknown::kFail, key));
        continue;
      }
      if (!value.is_string()) return Expected("an environment variable name", value);
      *slot = value.get<std::string>();
      if (!IsEnvName(*slot)) {
        return Fail(JsonQuote(*slot) +
                    " is not an environment variable name (expected [A-Za-z_][A-Za-z0-9_]*)");
      }
    }
    if (p.access_key_id_var.empty()) return Fail("an awsPairs entry needs \"accessKeyIdVar\"");
    if (p.secret_access_key_var.empty()) {
      return Fail("an awsPairs entry needs \"secretAccessKeyVar\"");
    }
    return p;
  }

  // {streaming?, presigned?, sigv4a?: "deny" | "passthrough"} (strict).
  Result<SigV4Settings> SigV4(const Json& j) {
    if (!j.is_object()) return Expected("an object {\"streaming\", \"presigned\", \"sigv4a\"}", j);
    SigV4Settings out;
    for (const auto& [key, value] : j.items()) {
      PathScope scope(*this, key);
      SigV4Policy* slot = key == "streaming"   ? &out.streaming
                          : key == "presigned" ? &out.presigned
                          : key == "sigv4a"    ? &out.sigv4a
                                               : nullptr;
      if (slot == nullptr) {
        SRT_RETURN_IF_ERROR(OtherKey({}, kSigV4Keys, Unknown::kFail, key));
        continue;
      }
      const std::string text = value.is_string() ? value.get<std::string>() : "";
      if (text == "deny") {
        *slot = SigV4Policy::kDeny;
      } else if (text == "passthrough") {
        *slot = SigV4Policy::kPassthrough;
      } else {
        return Fail("expected \"deny\" or \"passthrough\", got " + Shown(value));
      }
    }
    return out;
  }

  Error TooManyEntries() const {
    return Fail("has more than " + std::to_string(kMaxCredentialEntries) + " entries");
  }

  Result<CredentialMode> Mode(const Json& j) const {
    if (j.is_string() && j.get_ref<const std::string&>() == "deny") return CredentialMode::kDeny;
    if (j.is_string() && j.get_ref<const std::string&>() == "mask") return CredentialMode::kMask;
    return Fail("expected \"deny\" or \"mask\", got " + Shown(j));
  }

  // A key of the mask options both entry kinds share; false if `key` is not one of them.
  Result<bool> MaskOption(const std::string& key, const Json& value, CredentialMaskOptions& m,
                          bool is_file) {
    if (key == "extract") {
      SRT_ASSIGN_OR_RETURN(m.extract, ExtractPattern(value));
    } else if (key == "onExtractNoMatch") {
      const std::string text = value.is_string() ? value.get<std::string>() : "";
      if (text == "warn") {
        m.on_extract_no_match = ExtractNoMatch::kWarn;
      } else if (text == "deny") {
        m.on_extract_no_match = ExtractNoMatch::kDeny;
      } else if (text == "error") {
        m.on_extract_no_match = ExtractNoMatch::kError;
      } else {
        return Fail("expected \"warn\", \"deny\" or \"error\", got " + Shown(value));
      }
    } else if (key == "decode") {
      if (!value.is_string() || value.get_ref<const std::string&>() != "jwt") {
        return Fail("expected \"jwt\" (the only decoding srt knows), got " + Shown(value));
      }
      m.decode_jwt = true;
    } else if (key == "maskClaims") {
      if (!value.is_array()) return Expected("an array of claim names", value);
      if (value.empty()) {
        return Fail(
            "maskClaims is explicitly empty \u2014 no claim would ever be masked. Omit maskClaims "
            "to mask the whole token, or list the claims to protect.");
      }
      for (size_t i = 0; i < value.size(); ++i) {
        PathScope scope(*this, i);
        if (!value[i].is_string() || value[i].get_ref<const std::string&>().empty()) {
          return Expected("a non-empty claim name", value[i]);
        }
        m.mask_claims.push_back(value[i].get<std::string>());
      }
    } else if (key == "maskDuplicates" && is_file) {
      SRT_ASSIGN_OR_RETURN(m.mask_duplicates, Bool(value));
    } else if (key == "injectHosts") {
      if (!value.is_array()) return Expected("an array of domain patterns", value);
      if (value.empty()) {
        return Fail(
            "injectHosts is explicitly empty \u2014 the credential would be masked but never "
            "injected. Omit injectHosts to default to network.allowedDomains, or list the "
            "intended hosts.");
      }
      SRT_ASSIGN_OR_RETURN(m.inject_hosts, DomainList(value, PatternList::kAllow));
    } else {
      return false;
    }
    return true;
  }

  // RE2 syntax (upstream takes JavaScript's; the common subset is the same) with a group 1.
  Result<std::string> ExtractPattern(const Json& j) const {
    if (!j.is_string()) return Expected("a regular expression string", j);
    const std::string& text = j.get_ref<const std::string&>();
    if (text.size() > kMaxExtractPatternBytes) {
      return Fail("extract is longer than " + std::to_string(kMaxExtractPatternBytes) + " bytes");
    }
    RE2::Options options;
    options.set_log_errors(false);
    const RE2 re(text, options);
    if (!re.ok()) {
      return Fail("extract is not a valid regular expression: " +
                  strings::EscapeNonPrintable(re.error()));
    }
    if (re.NumberOfCapturingGroups() < 1) {
      return Fail(
          "extract must contain at least one capturing group \u2014 group 1 is the credential "
          "value to mask (e.g. \"token:\\\\s*(\\\\S+)\").");
    }
    return text;
  }

  Result<CredentialEnvVar> CredentialEnv(const Json& j) {
    if (!j.is_object()) return Expected("an object {\"name\", \"mode\", ...}", j);
    CredentialEnvVar v;
    bool has_name = false;
    bool has_mode = false;
    for (const auto& [key, value] : j.items()) {
      PathScope scope(*this, key);
      if (key == "name") {
        if (!value.is_string()) return Expected("an environment variable name", value);
        v.name = value.get<std::string>();
        if (!IsEnvName(v.name)) {
          return Fail(JsonQuote(v.name) +
                      " is not an environment variable name (expected [A-Za-z_][A-Za-z0-9_]*)");
        }
        has_name = true;
      } else if (key == "mode") {
        SRT_ASSIGN_OR_RETURN(v.mode, Mode(value));
        has_mode = true;
      } else {
        SRT_ASSIGN_OR_RETURN(const bool known, MaskOption(key, value, v.mask, /*is_file=*/false));
        if (!known) SRT_RETURN_IF_ERROR(OtherKey({}, kCredentialEnvVarKeys, Unknown::kFail, key));
      }
    }
    if (!has_name) return Fail("an envVars entry needs \"name\"");
    if (!has_mode) return Fail("an envVars entry needs \"mode\" (\"deny\" or \"mask\")");
    SRT_RETURN_IF_ERROR(CheckMaskClaims(v.mask, j, /*is_file=*/false));
    return v;
  }

  Result<CredentialFile> CredentialFileEntry(const Json& j) {
    if (!j.is_object()) return Expected("an object {\"path\", \"mode\", ...}", j);
    CredentialFile f;
    const Json* path = nullptr;
    bool has_mode = false;
    for (const auto& [key, value] : j.items()) {
      if (key == "path") {
        path = &value;
        continue;
      }
      PathScope scope(*this, key);
      if (key == "mode") {
        SRT_ASSIGN_OR_RETURN(f.mode, Mode(value));
        has_mode = true;
      } else {
        SRT_ASSIGN_OR_RETURN(const bool known, MaskOption(key, value, f.mask, /*is_file=*/true));
        if (!known) SRT_RETURN_IF_ERROR(OtherKey({}, kCredentialFileKeys, Unknown::kFail, key));
      }
    }
    if (path == nullptr) return Fail("a files entry needs \"path\"");
    if (!has_mode) return Fail("a files entry needs \"mode\" (\"deny\" or \"mask\")");
    {
      PathScope scope(*this, "path");
      // A denied path joins filesystem.denyRead, with its grammar and checks.
      SRT_ASSIGN_OR_RETURN(f.path, Path(*path, /*is_deny=*/f.mode == CredentialMode::kDeny));
      if (f.mode == CredentialMode::kMask && f.path.path.back() == '/') {
        return Fail(
            "Credential mode \"mask\" applies to a single file, not a directory. Use mode "
            "\"deny\" for " +
            JsonQuote(f.path.path) + ", or point at the credential file inside it.");
      }
    }
    SRT_RETURN_IF_ERROR(CheckMaskClaims(f.mask, j, /*is_file=*/true));
    return f;
  }

  Result<void> CheckMaskClaims(const CredentialMaskOptions& m, const Json& entry, bool is_file) {
    if (!m.decode_jwt && entry.contains("maskClaims")) {
      PathScope scope(*this, "maskClaims");
      return Fail(std::string("maskClaims requires decode \u2014 it names claims inside the "
                              "decoded payload. Set decode (e.g. \"jwt\"), or remove maskClaims "
                              "to mask the ") +
                  (is_file ? "extracted value whole." : "whole value."));
    }
    return Ok();
  }

  static bool IsEnvName(std::string_view name) {
    if (name.empty() || name.size() > kMaxEnvNameBytes) return false;
    auto alpha = [](char c) {
      return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
    };
    if (!alpha(name.front())) return false;
    return std::all_of(name.begin(), name.end(),
                       [&](char c) { return alpha(c) || (c >= '0' && c <= '9'); });
  }

  // Cross-field rules (upstream's superRefine): every injectHosts entry is reachable through
  // allowedDomains, and a masked credential has a transport its real value may cross.
  Result<void> CheckCredentials(const Settings& s) {
    const CredentialSettings& c = s.credentials;
    std::vector<DomainPattern> allowed;
    for (const std::string& entry : s.network.allowed_domains) {
      Result<DomainPattern> p = ParseDomainPattern(entry, PatternList::kAllow);
      if (p) allowed.push_back(std::move(*p));
    }
    bool has_masked = false;
    auto check = [&](const CredentialMaskOptions& m, CredentialMode mode, std::string_view list,
                     size_t index) -> Result<void> {
      has_masked = has_masked || mode == CredentialMode::kMask;
      if (!m.inject_hosts) return Ok();
      PathScope a(*this, "credentials");
      PathScope b(*this, std::string(list));
      PathScope e(*this, index);
      PathScope h(*this, "injectHosts");
      for (size_t i = 0; i < m.inject_hosts->size(); ++i) {
        const std::string& host = (*m.inject_hosts)[i];
        Result<DomainPattern> p = ParseDomainPattern(host, PatternList::kAllow);
        if (p && CoveredByAny(*p, allowed)) continue;
        PathScope scope(*this, i);
        return Fail("injectHosts entry " + JsonQuote(host) +
                    " is not reachable via network.allowedDomains \u2014 add " + JsonQuote(host) +
                    " (or a covering wildcard) to allowedDomains, or remove it from injectHosts.");
      }
      return Ok();
    };
    for (size_t i = 0; i < c.env_vars.size(); ++i) {
      SRT_RETURN_IF_ERROR(check(c.env_vars[i].mask, c.env_vars[i].mode, "envVars", i));
    }
    for (size_t i = 0; i < c.files.size(); ++i) {
      SRT_RETURN_IF_ERROR(check(c.files[i].mask, c.files[i].mode, "files", i));
    }
    // awsPairs name whole-value masked envVars, each variable in one slot: the re-signer's
    // trigger is the exact sentinel of the key id, and it signs with the entire real secret.
    std::vector<std::string> seen;
    for (size_t i = 0; i < c.aws_pairs.size(); ++i) {
      const AwsPairSettings& pair = c.aws_pairs[i];
      std::vector<std::pair<std::string_view, std::string>> slots = {
          {"accessKeyIdVar", pair.access_key_id_var},
          {"secretAccessKeyVar", pair.secret_access_key_var}};
      if (pair.session_token_var) slots.emplace_back("sessionTokenVar", *pair.session_token_var);
      for (const auto& slot : slots) {
        const std::string_view field = slot.first;
        const std::string& name = slot.second;
        PathScope a(*this, "credentials");
        PathScope b(*this, "awsPairs");
        PathScope e(*this, i);
        PathScope f(*this, std::string(field));
        if (std::find(seen.begin(), seen.end(), name) != seen.end()) {
          return Fail(JsonQuote(name) +
                      " appears in more than one awsPairs slot (within or across pairs) \u2014 "
                      "each variable can fill exactly one slot.");
        }
        seen.push_back(name);
        const auto entry = std::find_if(c.env_vars.begin(), c.env_vars.end(),
                                        [&](const CredentialEnvVar& v) { return v.name == name; });
        if (entry == c.env_vars.end() || entry->mode != CredentialMode::kMask) {
          return Fail(JsonQuote(name) +
                      " does not reference a credentials.envVars entry with mode \"mask\" "
                      "\u2014 an AWS pair links already-masked variables; add the entry "
                      "(masking is the opt-in for SigV4 re-signing).");
        }
        if (entry->mask.extract || entry->mask.decode_jwt) {
          return Fail(JsonQuote(name) +
                      " uses extract/decode, but an AWS pair member must be masked whole-value: "
                      "the SigV4 trigger is an exact match of the fake access key id, and the "
                      "signer needs the entire real value.");
        }
      }
    }
    if (has_masked && !MaskTransportAvailable(s)) {
      PathScope scope(*this, "credentials");
      return Fail(
          "Credential masking requires network.tlsTerminate so substitution runs only over a "
          "verified TLS connection. Enable tlsTerminate, or set "
          "credentials.allowPlaintextInject to opt out (not recommended).");
    }
    return Ok();
  }

  std::string_view origin_;
  std::vector<std::string> path_;
  std::vector<std::string> warnings_;
};

bool IsJsonWhitespace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

Error FileError(const std::string& path, int err) {
  if (err == ENOENT) {
    return Error(Errc::kNotFound, path + ": does not exist", err);
  }
  Errc code = Errc::kSystem;
  if (err == EACCES || err == EPERM) {
    code = Errc::kPermissionDenied;
  } else if (err == EISDIR) {
    code = Errc::kInvalidArgument;
  }
  return Error(code, path + ": cannot be read: " + ErrnoText(err), err);
}

Error TooLarge(const std::string& path) {
  return MakeError(Errc::kInvalidArgument,
                   path + ": is larger than " + std::string(kMaxSettingsSizeText));
}

// Reads the whole file, at most kMaxSettingsBytes. Works for pipes too (`--settings <(...)`).
Result<std::string> ReadSettingsText(const std::string& path) {
  if (path.empty()) {
    return MakeError(Errc::kInvalidArgument, "the settings file path is empty");
  }
  if (path.find('\0') != std::string::npos) {
    return MakeError(Errc::kInvalidArgument, strings::Quote(path) + ": contains a NUL byte");
  }
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY));
  if (!fd) {
    return FileError(path, errno);
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) {
    return FileError(path, errno);
  }
  if (S_ISDIR(st.st_mode)) {
    return FileError(path, EISDIR);
  }
  if (S_ISREG(st.st_mode) && static_cast<uint64_t>(st.st_size) > kMaxSettingsBytes) {
    return TooLarge(path);
  }
  std::string text;
  char buf[64 * 1024];
  for (;;) {
    ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      return FileError(path, errno);
    }
    if (n == 0) {
      break;
    }
    text.append(buf, static_cast<size_t>(n));
    if (text.size() > kMaxSettingsBytes) {
      return TooLarge(path);
    }
  }
  return text;
}

}  // namespace

Result<LoadedSettings> ParseSettings(std::string_view text, std::string_view origin) {
  if (std::all_of(text.begin(), text.end(), IsJsonWhitespace)) {
    return MakeError(Errc::kInvalidArgument,
                     std::string(origin) + ": is empty; delete it or put a settings object in it");
  }
  if (text.size() > kMaxSettingsBytes) {
    return MakeError(Errc::kInvalidArgument,
                     std::string(origin) + ": is larger than " + std::string(kMaxSettingsSizeText));
  }
  // Nothing below may let an exception escape (house style §2.3); the SAX pass reports errors
  // through the handler, parse() is told not to throw, and the decoder only calls accessors after
  // checking the type. The catch is the backstop that keeps that promise.
  try {
    // Pass 1: syntax, duplicate keys, nesting depth (config/json_text, srt-mcp's reader too).
    if (std::optional<config::JsonTextError> e =
            config::CheckJsonText(text, {.max_depth = kMaxNestingDepth, .comments = false})) {
      switch (e->kind) {
        case config::JsonTextError::Kind::kSyntax:
          return MakeError(Errc::kInvalidArgument,
                           std::string(origin) + ":" + std::to_string(e->line) + ":" +
                               std::to_string(e->column) + ": not valid JSON: " + e->reason);
        case config::JsonTextError::Kind::kTooDeep:
          return MakeError(Errc::kInvalidArgument, std::string(origin) + ": nested more than " +
                                                       std::to_string(kMaxNestingDepth) +
                                                       " levels deep");
        case config::JsonTextError::Kind::kDuplicateKey:
          return MakeError(Errc::kInvalidArgument, Prefix(origin, e->object_pointer) +
                                                       "duplicate key " + strings::Quote(e->key));
      }
    }

    Json doc = Json::parse(text.begin(), text.end(), /*cb=*/nullptr, /*allow_exceptions=*/false);
    if (doc.is_discarded()) {
      return MakeError(Errc::kInternal, std::string(origin) +
                                            ": the JSON parser rejected text its checker accepted");
    }
    Decoder decoder(origin);
    SRT_ASSIGN_OR_RETURN(Settings settings, decoder.Root(doc));
    return LoadedSettings{std::move(settings), decoder.TakeWarnings()};
  } catch (const nlohmann::json::exception& e) {
    return MakeError(Errc::kInternal,
                     std::string(origin) + ": " + config::ShortJsonReason(e.what()));
  }
}

Result<LoadedSettings> LoadSettingsFile(const std::string& path) {
  SRT_ASSIGN_OR_RETURN(std::string text, ReadSettingsText(path));
  return ParseSettings(text, path);
}

std::string DefaultSettingsPath() {
  static constexpr std::string_view kFileName = ".srt-settings.json";
  const char* home = std::getenv("HOME");
  if (home != nullptr && path::IsAbsolute(home)) {
    return path::Join(home, kFileName);
  }
  // Like os.homedir(): the password database when HOME is unset or unusable.
  long size_hint = ::sysconf(_SC_GETPW_R_SIZE_MAX);
  std::vector<char> buf(size_hint > 0 ? static_cast<size_t>(size_hint) : size_t{16384});
  for (;;) {
    passwd pw{};
    passwd* result = nullptr;
    int rc = ::getpwuid_r(::geteuid(), &pw, buf.data(), buf.size(), &result);
    if (rc == ERANGE && buf.size() < (size_t{1} << 20)) {
      buf.resize(buf.size() * 2);
      continue;
    }
    if (rc == 0 && result != nullptr && result->pw_dir != nullptr &&
        path::IsAbsolute(result->pw_dir)) {
      return path::Join(result->pw_dir, kFileName);
    }
    break;
  }
  // No home at all (a bare container): a path that will not exist, so the caller falls back to
  // its defaults exactly as for a missing file.
  return path::Join("/", kFileName);
}

}  // namespace srt
