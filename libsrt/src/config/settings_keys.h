// SPDX-License-Identifier: Apache-2.0
// config/settings_keys: the keys each object of the settings takes, and what srt does with the
// keys it knows but does not implement. The decoder (settings.cc) reads exactly these, and the
// published JSON Schema (schema/srt-settings.schema.json) must name exactly these: a unit test
// holds the two together.
#pragma once

#include <string_view>

namespace srt::config {

// The key a settings file names its JSON Schema with (editors read it); srt accepts and ignores
// it at the top level.
inline constexpr std::string_view kSchemaKey = "$schema";

// What to do with a key srt knows but does not implement.
enum class KeyAction {
  kNoEffectOnLinux,  // macOS/Windows only: warn, ignore
  kNotUsed,          // upstream needs it for a dependency srt does not have: warn, ignore
  kUnsupported,      // a security feature not implemented yet: ignoring it would weaken the sandbox
};
struct SpecialKey {
  std::string_view key;
  KeyAction action;
  std::string_view needs_no;  // kNotUsed: "it needs no <needs_no>"
};

inline constexpr SpecialKey kTopLevelSpecialKeys[] = {
    {"allowPty", KeyAction::kNoEffectOnLinux, {}},
    {"enableWeakerNetworkIsolation", KeyAction::kNoEffectOnLinux, {}},
    {"allowAppleEvents", KeyAction::kNoEffectOnLinux, {}},
    {"windows", KeyAction::kNoEffectOnLinux, {}},
    {"ripgrep", KeyAction::kNotUsed, "ripgrep"},
    {"socatPath", KeyAction::kNotUsed, "socat"},
    {"seccomp", KeyAction::kNotUsed, "seccomp helper: it compiles its own filter"},
    {"ignoreViolations", KeyAction::kNotUsed, "violation filter: it keeps no violation store"},
};

inline constexpr SpecialKey kNetworkSpecialKeys[] = {
    {"allowUnixSockets", KeyAction::kNoEffectOnLinux, {}},
    {"allowLocalBinding", KeyAction::kNoEffectOnLinux, {}},
    {"allowMachLookup", KeyAction::kNoEffectOnLinux, {}},
    {"filterRequest", KeyAction::kUnsupported, {}},
    {"allowPlaintextHeaderSet", KeyAction::kUnsupported, {}},
    {"ambiguousRequestTarget", KeyAction::kUnsupported, {}},
};

// The keys each object takes (the decoders below read exactly these), for "did you mean".
inline constexpr std::string_view kTopLevelKeys[] = {"network",
                                                     "filesystem",
                                                     "enableWeakerNestedSandbox",
                                                     "allowNestedUserNamespaces",
                                                     "mandatoryDenySearchDepth",
                                                     "bwrapPath",
                                                     "credentials",
                                                     "git",
                                                     "javaAgentJarPath"};
inline constexpr std::string_view kGitKeys[] = {"safeDirectories"};
inline constexpr std::string_view kFilesystemKeys[] = {"denyRead",  "allowRead",      "allowWrite",
                                                       "denyWrite", "allowGitConfig", "disabled"};
inline constexpr std::string_view kNetworkKeys[] = {"allowedDomains",
                                                    "deniedDomains",
                                                    "deniedDomainReasons",
                                                    "strictAllowlist",
                                                    "deniedResolvedAddresses",
                                                    "allowAllUnixSockets",
                                                    "httpProxyPort",
                                                    "socksProxyPort",
                                                    "parentProxy",
                                                    "refuseOpaqueTunnels",
                                                    "requireHostMatch",
                                                    "stripResponseHeaders",
                                                    "transparentCapture",
                                                    "dnsServers",
                                                    "tlsTerminate",
                                                    "mitmProxy"};
inline constexpr std::string_view kMitmProxyKeys[] = {"socketPath", "domains"};
inline constexpr std::string_view kParentProxyKeys[] = {"http", "https", "noProxy"};
inline constexpr std::string_view kTlsTerminateKeys[] = {"caCertPath",     "caKeyPath",
                                                         "excludeDomains", "extraCaCertPaths",
                                                         "maxTunnels",     "handshakeTimeoutMs"};

// `credentials` and its entries (upstream: strict objects, so unknown keys are errors).
inline constexpr std::string_view kCredentialsKeys[] = {"envVars", "files", "allowPlaintextInject",
                                                        "awsPairs", "sigv4"};
inline constexpr std::string_view kAwsPairKeys[] = {"accessKeyIdVar", "secretAccessKeyVar",
                                                    "sessionTokenVar"};
inline constexpr std::string_view kSigV4Keys[] = {"streaming", "presigned", "sigv4a"};
inline constexpr std::string_view kCredentialEnvVarKeys[] = {
    "name", "mode", "extract", "onExtractNoMatch", "decode", "maskClaims", "injectHosts"};
inline constexpr std::string_view kCredentialFileKeys[] = {
    "path",   "mode",       "extract",        "onExtractNoMatch",
    "decode", "maskClaims", "maskDuplicates", "injectHosts"};

}  // namespace srt::config
