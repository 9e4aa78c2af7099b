// SPDX-License-Identifier: Apache-2.0
// srt/settings.h: the sandbox settings (schema-compatible with upstream srt's settings file) and
// the functions that load them. Nothing here depends on a JSON library.
//
// Usage:
//   srt::Result<srt::LoadedSettings> s = srt::LoadSettingsFile("/home/me/.srt-settings.json");
//   if (!s) { print s.error().message(); }   // names the file, line:column or JSON path
//   for (auto& w : s->warnings) print w;      // unknown keys, keys ignored on Linux
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "srt/result.h"

namespace srt {

// A filesystem entry: a path (with `~`, relative and glob forms) or, when `literal` is set, a path
// taken exactly as written (no glob characters are special). JSON: "p" or {"path": "p", "literal":
// true}.
struct PathEntry {
  std::string path;
  bool literal = false;
  bool operator==(const PathEntry&) const = default;
};

struct ParentProxySettings {
  std::optional<std::string> http;
  std::optional<std::string> https;
  std::optional<std::string> no_proxy;
  bool operator==(const ParentProxySettings&) const = default;
};

// `network.tlsTerminate` (upstream-srt.md §1.3.1): srt's proxy terminates the TLS of CONNECT
// tunnels to allowed hosts with a certificate it mints per host, and forwards each request over
// a verified TLS connection of its own.
struct TlsTerminateSettings {
  // Both or neither (then srt makes an ephemeral CA in its own memory for the run).
  std::optional<std::string> ca_cert_path;
  std::optional<std::string> ca_key_path;
  std::vector<std::string> exclude_domains;      // patterns (allowedDomains grammar): opaque
  std::vector<std::string> extra_ca_cert_paths;  // PEM files trusted too; missing ones skipped
  uint32_t max_tunnels = 256;                    // 1..65536, terminated tunnels open at once
  uint32_t handshake_timeout_ms = 10000;         // 100..600000, CONNECT to finished handshake
  bool operator==(const TlsTerminateSettings&) const = default;
};

// `network.mitmProxy`: allowed hosts that match `domains` are reached through another proxy
// listening on a unix socket of the host (an HTTP CONNECT for tunnels, an absolute-form request
// for plain HTTP), instead of directly or through the parent proxy.
struct MitmProxySettings {
  std::string socket_path;           // absolute
  std::vector<std::string> domains;  // patterns (allowedDomains grammar), at least one
  bool operator==(const MitmProxySettings&) const = default;
};

// `network.*`, enforced by srt's proxy.
struct NetworkSettings {
  std::vector<std::string> allowed_domains;                  // patterns, upstream grammar (§1.6)
  std::vector<std::string> denied_domains;                   // same, plus "*" and "*:port"
  std::map<std::string, std::string> denied_domain_reasons;  // keyed by a deniedDomains entry
  bool strict_allowlist = false;
  std::vector<std::string> denied_resolved_addresses;  // IP literals or CIDRs
  bool allow_all_unix_sockets = false;                 // lifts the seccomp AF_UNIX rule
  std::optional<uint16_t> http_proxy_port;
  std::optional<uint16_t> socks_proxy_port;
  std::optional<ParentProxySettings> parent_proxy;
  std::optional<TlsTerminateSettings> tls_terminate;
  std::optional<MitmProxySettings> mitm_proxy;  // never together with tls_terminate
  // A tunnel whose first bytes name another host than its target (a TLS ClientHello's SNI, an
  // HTTP request's Host) is refused: opaque CONNECT and SOCKS5 tunnels too, not only terminated
  // ones and plain HTTP, where it is always on.
  bool require_host_match = false;
  // CONNECT tunnels srt does not terminate, and every SOCKS5 tunnel, are refused.
  bool refuse_opaque_tunnels = false;
  // Response header names dropped on plain HTTP and terminated tunnels, as written.
  std::vector<std::string> strip_response_headers;
  // srt's own keys (upstream has neither):
  // Programs that ignore the proxy variables are still served: every address the sandbox
  // connects to lands on srt's proxy, and names resolve through srt's DNS stub.
  bool transparent_capture = true;
  // The DNS servers the proxy resolves names with ("ip", "ip:port", "[v6]:port"); empty: the
  // host's resolv.conf.
  std::vector<std::string> dns_servers;
  bool operator==(const NetworkSettings&) const = default;
};

// `filesystem.*`.
struct FilesystemSettings {
  std::vector<PathEntry> deny_read;
  std::vector<PathEntry> allow_read;
  std::vector<PathEntry> allow_write;
  std::vector<PathEntry> deny_write;
  bool allow_git_config = false;
  bool disabled = false;
  bool operator==(const FilesystemSettings&) const = default;
};

// `credentials.*`: secrets the sandbox must not see. A denied one is absent (an environment
// variable unset, a file unreadable); a masked one is replaced inside the sandbox by a sentinel of
// the same byte length where possible, and srt's proxy puts the real value back only in requests
// to the credential's injectHosts (docs/credentials.md).
enum class CredentialMode { kDeny, kMask };
// What to do when `extract` (or `decode`) finds nothing to mask in a value.
enum class ExtractNoMatch {
  kWarn,   // pass the real value through, with a warning (upstream's default)
  kDeny,   // treat the credential as denied (srt's default: fail closed)
  kError,  // refuse to start the sandbox
};

// The masking fields an envVars and a files entry share.
struct CredentialMaskOptions {
  // An RE2 regular expression with at least one capturing group: only group 1's spans are
  // masked. Unset: the whole value is.
  std::optional<std::string> extract;
  std::optional<ExtractNoMatch> on_extract_no_match;  // unset: kDeny
  bool decode_jwt = false;                            // decode: "jwt"
  std::vector<std::string> mask_claims;               // requires decode_jwt; empty: whole token
  bool mask_duplicates = false;                       // files only
  // Domain patterns (the allowedDomains grammar) where the real value may be injected; unset:
  // network.allowedDomains. Never empty when set.
  std::optional<std::vector<std::string>> inject_hosts;
  bool operator==(const CredentialMaskOptions&) const = default;
};

struct CredentialEnvVar {
  std::string name;  // [A-Za-z_][A-Za-z0-9_]*
  CredentialMode mode = CredentialMode::kDeny;
  CredentialMaskOptions mask;
  bool operator==(const CredentialEnvVar&) const = default;
};

struct CredentialFile {
  PathEntry path;  // deny: any path entry (globs too); mask: one file
  CredentialMode mode = CredentialMode::kDeny;
  CredentialMaskOptions mask;
  bool operator==(const CredentialFile&) const = default;
};

// credentials.awsPairs[]: masked envVars that together are one AWS key pair, for SigV4
// re-signing. AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN need no entry.
struct AwsPairSettings {
  std::string access_key_id_var;
  std::string secret_access_key_var;
  std::optional<std::string> session_token_var;
  bool operator==(const AwsPairSettings&) const = default;
};

// credentials.sigv4: a SigV4 request over a masked pair that cannot be re-signed is refused
// (kDeny, the default) or forwarded as signed (kPassthrough; the origin then refuses it).
enum class SigV4Policy { kDeny, kPassthrough };
struct SigV4Settings {
  SigV4Policy streaming = SigV4Policy::kDeny;  // x-amz-content-sha256: STREAMING-*
  SigV4Policy presigned = SigV4Policy::kDeny;  // X-Amz-Signature in the query
  SigV4Policy sigv4a = SigV4Policy::kDeny;     // AWS4-ECDSA-P256-SHA256
  bool operator==(const SigV4Settings&) const = default;
};

struct CredentialSettings {
  std::vector<CredentialEnvVar> env_vars;
  std::vector<CredentialFile> files;
  // Inject masked values into plain-HTTP requests too (not recommended: the real value then
  // crosses the network in clear). Without it, masking needs network.tlsTerminate.
  bool allow_plaintext_inject = false;
  std::vector<AwsPairSettings> aws_pairs;
  SigV4Settings sigv4;
  bool operator==(const CredentialSettings&) const = default;
};

// `git.*`: git configuration srt gives the command through GIT_CONFIG_COUNT/KEY_n/VALUE_n.
struct GitSettings {
  // Directories git trusts although the sandbox sees them owned by another user (its
  // `safe.directory`, the directory and every repository below it). Grants no write.
  std::vector<std::string> safe_directories;
  bool operator==(const GitSettings&) const = default;
};

struct Settings {
  NetworkSettings network;
  FilesystemSettings filesystem;
  CredentialSettings credentials;
  bool enable_weaker_nested_sandbox = false;
  bool allow_nested_user_namespaces = false;
  int mandatory_deny_search_depth = 3;    // 1..10
  std::optional<std::string> bwrap_path;  // absolute
  GitSettings git;
  // A JVM agent (upstream's srt-proxy-agent.jar) JAVA_TOOL_OPTIONS loads with -javaagent:.
  std::optional<std::string> java_agent_jar_path;  // absolute
  bool operator==(const Settings&) const = default;
};

struct LoadedSettings {
  Settings settings;
  // Non-fatal findings, each a full sentence naming the origin and JSON path, e.g.
  // "settings.json: /filesystem/allowWrites: unknown key, ignoring".
  std::vector<std::string> warnings;
};

// Parses settings text. `origin` names the source in every message (usually the file path).
// Errors: Errc::kInvalidArgument with "origin:LINE:COL: ..." for JSON syntax errors and
// "origin: /json/pointer: ..." (quoting the bad value) for schema errors. Never throws.
[[nodiscard]] Result<LoadedSettings> ParseSettings(std::string_view text, std::string_view origin);

// Reads and parses a settings file. A file that is missing, empty, unreadable, not JSON or
// invalid is an error naming the file; there is no fallback to defaults.
[[nodiscard]] Result<LoadedSettings> LoadSettingsFile(const std::string& path);

// The default settings file, `$HOME/.srt-settings.json`.
[[nodiscard]] std::string DefaultSettingsPath();

}  // namespace srt
