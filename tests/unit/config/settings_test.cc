// SPDX-License-Identifier: Apache-2.0
// ParseSettings: exact error and warning texts, JSON pointers included (house style §2.9).
#include "srt/settings.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace srt {
namespace {

constexpr std::string_view kOrigin = "settings.json";

// The error message, or "<ok>" so a wrongly accepted document fails with a readable diff.
std::string ErrorOf(std::string_view text) {
  Result<LoadedSettings> r = ParseSettings(text, kOrigin);
  if (r.has_value()) {
    return "<ok>";
  }
  EXPECT_EQ(r.error().code(), Errc::kInvalidArgument) << r.error().message();
  return r.error().message();
}

LoadedSettings Parse(std::string_view text) {
  Result<LoadedSettings> r = ParseSettings(text, kOrigin);
  EXPECT_TRUE(r.has_value()) << r.error().message();
  return r.has_value() ? *r : LoadedSettings{};
}

const std::string kDomainGrammar =
    "Invalid domain pattern. Must be a valid domain (e.g., \"example.com\"), a wildcard (e.g., "
    "\"*.example.com\"), or a bracketed IPv6 literal (e.g., \"[::1]\", \"[2001:db8::1]:443\"). "
    "Overly broad patterns like \"*.com\" or \"*\" are not allowed for security reasons.";
const std::string kAllowTail =
    " An optional \":port\" suffix (1-65535) restricts the entry to that port.";
const std::string kDenyTail =
    " In deniedDomains a bare \"*\" (deny-all) is also accepted, and an optional \":port\" "
    "suffix (1-65535) restricts the entry to that port.";
const std::string kAddressText =
    "Invalid IP address or CIDR range. Use an IPv4/IPv6 literal or CIDR, e.g. \"10.0.0.0/8\", "
    "\"192.168.1.10\", \"fc00::/7\" (IPv6 unbracketed).";
const std::string kPathEntry = "a path, or { \"path\": \"<path>\", \"literal\": true }";
const std::string kUnsupported =
    "is not supported by this srt yet; remove it (ignoring it would weaken the sandbox)";

// ---- whole documents ------------------------------------------------------------------------

TEST(SettingsTest, EmptyObjectGivesTheDefaults) {
  LoadedSettings s = Parse("{}");
  EXPECT_EQ(s.settings, Settings{});
  EXPECT_TRUE(s.warnings.empty());
  EXPECT_EQ(s.settings.mandatory_deny_search_depth, 3);
}

TEST(SettingsTest, FullDocument) {
  LoadedSettings s = Parse(R"({
    "network": {
      "allowedDomains": ["example.com", "*.github.com", "[::1]:8080"],
      "deniedDomains": ["*", "evil.example.com"],
      "deniedDomainReasons": {"evil.example.com": "known bad"},
      "strictAllowlist": true,
      "deniedResolvedAddresses": ["10.0.0.0/8", "fc00::/7", "192.168.1.10"],
      "allowAllUnixSockets": true,
      "httpProxyPort": 3128,
      "socksProxyPort": 1080,
      "parentProxy": {"http": "http://proxy:3128", "https": "HTTP://proxy:3129",
                      "noProxy": "localhost,.corp"},
      "refuseOpaqueTunnels": false,
      "requireHostMatch": false
    },
    "filesystem": {
      "denyRead": ["~/.ssh", {"path": "/data/[x]", "literal": true}],
      "allowRead": ["~/.ssh/known_hosts"],
      "allowWrite": [".", "/tmp/build"],
      "denyWrite": [{"path": ".env", "literal": false}],
      "allowGitConfig": true,
      "disabled": false
    },
    "enableWeakerNestedSandbox": true,
    "allowNestedUserNamespaces": true,
    "mandatoryDenySearchDepth": 10,
    "bwrapPath": "/usr/bin/bwrap"
  })");
  EXPECT_TRUE(s.warnings.empty());
  Settings want;
  want.network.allowed_domains = {"example.com", "*.github.com", "[::1]:8080"};
  want.network.denied_domains = {"*", "evil.example.com"};
  want.network.denied_domain_reasons = {{"evil.example.com", "known bad"}};
  want.network.strict_allowlist = true;
  want.network.denied_resolved_addresses = {"10.0.0.0/8", "fc00::/7", "192.168.1.10"};
  want.network.allow_all_unix_sockets = true;
  want.network.http_proxy_port = 3128;
  want.network.socks_proxy_port = 1080;
  want.network.parent_proxy =
      ParentProxySettings{"http://proxy:3128", "HTTP://proxy:3129", "localhost,.corp"};
  want.filesystem.deny_read = {{"~/.ssh", false}, {"/data/[x]", true}};
  want.filesystem.allow_read = {{"~/.ssh/known_hosts", false}};
  want.filesystem.allow_write = {{".", false}, {"/tmp/build", false}};
  want.filesystem.deny_write = {{".env", false}};
  want.filesystem.allow_git_config = true;
  want.enable_weaker_nested_sandbox = true;
  want.allow_nested_user_namespaces = true;
  want.mandatory_deny_search_depth = 10;
  want.bwrap_path = "/usr/bin/bwrap";
  EXPECT_EQ(s.settings, want);
}

TEST(SettingsTest, UpstreamDefaultsFileParses) {
  LoadedSettings s =
      Parse(R"({"network":{"allowedDomains":[],"deniedDomains":[]},)"
            R"("filesystem":{"denyRead":[],"allowRead":[],"allowWrite":[],"denyWrite":[]}})");
  EXPECT_EQ(s.settings, Settings{});
  EXPECT_TRUE(s.warnings.empty());
}

// ---- syntax ---------------------------------------------------------------------------------

TEST(SettingsTest, EmptyAndWhitespaceOnly) {
  EXPECT_EQ(ErrorOf(""), "settings.json: is empty; delete it or put a settings object in it");
  EXPECT_EQ(ErrorOf(" \n\t\r\n"),
            "settings.json: is empty; delete it or put a settings object in it");
}

TEST(SettingsTest, SyntaxErrorNamesLineAndColumn) {
  // Missing comma after line 2; the parser notices at the end of the "b" token on line 3.
  EXPECT_EQ(ErrorOf("{\n  \"a\": 1\n  \"b\": 2\n}"),
            "settings.json:3:5: not valid JSON: syntax error while parsing object - unexpected "
            "string literal; expected '}'");
  EXPECT_EQ(ErrorOf("{\"network\""),
            "settings.json:1:11: not valid JSON: syntax error while parsing object separator - "
            "unexpected end of input; expected ':'");
  EXPECT_EQ(ErrorOf("{"),
            "settings.json:1:2: not valid JSON: syntax error while parsing object key - "
            "unexpected end of input; expected string literal");
  EXPECT_EQ(ErrorOf("{\"a\": [1,]}"),
            "settings.json:1:10: not valid JSON: syntax error while parsing value - unexpected "
            "']'; expected '[', '{', or a literal");
  EXPECT_EQ(ErrorOf("{}\n{}"),
            "settings.json:2:1: not valid JSON: syntax error while parsing value - unexpected "
            "'{'; expected end of input");
  // A raw newline inside a string: the column is the newline's own, on the string's line.
  EXPECT_EQ(ErrorOf("{\"a\": \"x\ny\"}"),
            "settings.json:1:9: not valid JSON: syntax error while parsing value - invalid "
            "string: control character U+000A (LF) must be escaped to \\u000A or \\n; last read: "
            "'\"x<U+000A>'");
  EXPECT_EQ(ErrorOf("{\"a\": 1e400}"),
            "settings.json:1:11: not valid JSON: number overflow parsing '1e400'");
  // Comments are not JSON (upstream uses JSON.parse).
  EXPECT_EQ(ErrorOf("// hi\n{}"),
            "settings.json:1:1: not valid JSON: syntax error while parsing value - invalid "
            "literal; last read: '/'");
}

TEST(SettingsTest, InvalidUtf8IsASyntaxErrorAndIsEscapedInTheMessage) {
  EXPECT_EQ(ErrorOf("{\"a\": \"\xff\"}"),
            "settings.json:1:8: not valid JSON: syntax error while parsing value - invalid "
            "string: ill-formed UTF-8 byte; last read: '\"\\xff'");
}

TEST(SettingsTest, ByteOrderMarkIsAccepted) { Parse("\xef\xbb\xbf{}"); }

TEST(SettingsTest, TopLevelMustBeAnObject) {
  EXPECT_EQ(ErrorOf("[]"), "settings.json: expected a settings object, got an array");
  EXPECT_EQ(ErrorOf("null"), "settings.json: expected a settings object, got null");
  EXPECT_EQ(ErrorOf("\"x\""), "settings.json: expected a settings object, got a string");
  EXPECT_EQ(ErrorOf("3"), "settings.json: expected a settings object, got a number");
  EXPECT_EQ(ErrorOf("true"), "settings.json: expected a settings object, got a boolean");
}

TEST(SettingsTest, DuplicateKeys) {
  EXPECT_EQ(ErrorOf(R"({"bwrapPath": "/a", "bwrapPath": "/b"})"),
            "settings.json: duplicate key 'bwrapPath'");
  EXPECT_EQ(ErrorOf(R"({"network": {"allowedDomains": [], "allowedDomains": ["a.com"]}})"),
            "settings.json: /network: duplicate key 'allowedDomains'");
  EXPECT_EQ(ErrorOf(R"({"filesystem": {"denyRead": [{"path": "/a", "path": "/b"}]}})"),
            "settings.json: /filesystem/denyRead/0: duplicate key 'path'");
  // Anywhere in the document, unknown parts included; the same key in sibling objects is fine.
  EXPECT_EQ(ErrorOf(R"({"x": [{}, {"a/b": {"k": 1, "k": 2}}]})"),
            "settings.json: /x/1/a~1b: duplicate key 'k'");
  Parse(R"({"x": [{"k": 1}, {"k": 2}]})");
}

TEST(SettingsTest, DuplicateKeyLosesToALaterSyntaxError) {
  EXPECT_EQ(ErrorOf("{\"a\": 1, \"a\": 2,"),
            "settings.json:1:17: not valid JSON: syntax error while parsing object key - "
            "unexpected end of input; expected string literal");
}

TEST(SettingsTest, NestingIsLimited) {
  std::string deep = "{\"x\": " + std::string(100, '[') + std::string(100, ']') + "}";
  EXPECT_EQ(ErrorOf(deep), "settings.json: nested more than 64 levels deep");
  std::string ok = "{\"x\": " + std::string(60, '[') + std::string(60, ']') + "}";
  Parse(ok);
}

// ---- types and ranges -----------------------------------------------------------------------

TEST(SettingsTest, TypeErrorsNameThePointerAndTheType) {
  struct Case {
    std::string text;
    std::string message;
  };
  for (const Case& c : {
           Case{R"({"network": []})", "/network: expected an object, got an array"},
           Case{R"({"filesystem": "x"})", "/filesystem: expected an object, got a string"},
           Case{R"({"enableWeakerNestedSandbox": 1})",
                "/enableWeakerNestedSandbox: expected a boolean, got a number"},
           Case{R"({"allowNestedUserNamespaces": "true"})",
                "/allowNestedUserNamespaces: expected a boolean, got a string"},
           Case{R"({"mandatoryDenySearchDepth": "3"})",
                "/mandatoryDenySearchDepth: expected an integer, got a string"},
           Case{R"({"mandatoryDenySearchDepth": null})",
                "/mandatoryDenySearchDepth: expected an integer, got null"},
           Case{R"({"bwrapPath": 1})", "/bwrapPath: expected an absolute path, got a number"},
           Case{R"({"filesystem": {"allowWrite": "/tmp"}})",
                "/filesystem/allowWrite: expected an array of paths, got a string"},
           Case{R"({"filesystem": {"denyRead": {}}})",
                "/filesystem/denyRead: expected an array of paths, got an object"},
           Case{R"({"filesystem": {"allowGitConfig": null}})",
                "/filesystem/allowGitConfig: expected a boolean, got null"},
           Case{R"({"filesystem": {"disabled": []}})",
                "/filesystem/disabled: expected a boolean, got an array"},
           Case{R"({"network": {"allowedDomains": "example.com"}})",
                "/network/allowedDomains: expected an array of domain patterns, got a string"},
           Case{R"({"network": {"deniedDomains": ["a.com", 7]}})",
                "/network/deniedDomains/1: expected a domain pattern string, got a number"},
           Case{R"({"network": {"deniedDomainReasons": []}})",
                "/network/deniedDomainReasons: expected an object mapping deniedDomains entries "
                "to reasons, got an array"},
           Case{R"({"network": {"deniedDomains": ["a.com"], "deniedDomainReasons": {"a.com": 1}}})",
                "/network/deniedDomainReasons/a.com: expected a non-empty string, got a number"},
           Case{R"({"network": {"strictAllowlist": "yes"}})",
                "/network/strictAllowlist: expected a boolean, got a string"},
           Case{R"({"network": {"deniedResolvedAddresses": "10.0.0.0/8"}})",
                "/network/deniedResolvedAddresses: expected an array of IP addresses or CIDR "
                "ranges, got a string"},
           Case{R"({"network": {"deniedResolvedAddresses": [false]}})",
                "/network/deniedResolvedAddresses/0: expected an IP address or CIDR range "
                "string, got a boolean"},
           Case{R"({"network": {"allowAllUnixSockets": 0}})",
                "/network/allowAllUnixSockets: expected a boolean, got a number"},
           Case{R"({"network": {"httpProxyPort": "3128"}})",
                "/network/httpProxyPort: expected an integer, got a string"},
           Case{R"({"network": {"socksProxyPort": {}}})",
                "/network/socksProxyPort: expected an integer, got an object"},
           Case{R"({"network": {"parentProxy": "http://p"}})",
                "/network/parentProxy: expected an object, got a string"},
           Case{R"({"network": {"parentProxy": {"http": 1}}})",
                "/network/parentProxy/http: expected a proxy URL string, got a number"},
           Case{R"({"network": {"parentProxy": {"noProxy": []}}})",
                "/network/parentProxy/noProxy: expected a string, got an array"},
           Case{R"({"network": {"refuseOpaqueTunnels": null}})",
                "/network/refuseOpaqueTunnels: expected a boolean, got null"},
           Case{R"({"network": {"requireHostMatch": 1.5}})",
                "/network/requireHostMatch: expected a boolean, got a number"},
       }) {
    EXPECT_EQ(ErrorOf(c.text), "settings.json: " + c.message) << c.text;
  }
}

TEST(SettingsTest, RangeErrors) {
  struct Case {
    std::string text;
    std::string message;
  };
  for (const Case& c : {
           Case{R"({"mandatoryDenySearchDepth": 11})",
                "/mandatoryDenySearchDepth: 11 is out of range (1..10)"},
           Case{R"({"mandatoryDenySearchDepth": 0})",
                "/mandatoryDenySearchDepth: 0 is out of range (1..10)"},
           Case{R"({"mandatoryDenySearchDepth": -3})",
                "/mandatoryDenySearchDepth: -3 is out of range (1..10)"},
           Case{R"({"mandatoryDenySearchDepth": 2.5})",
                "/mandatoryDenySearchDepth: 2.5 is not an integer"},
           Case{R"({"mandatoryDenySearchDepth": 1e2})",
                "/mandatoryDenySearchDepth: 100.0 is out of range (1..10)"},
           Case{R"({"mandatoryDenySearchDepth": 18446744073709551615})",
                "/mandatoryDenySearchDepth: 18446744073709551615 is out of range (1..10)"},
           Case{R"({"mandatoryDenySearchDepth": -9223372036854775808})",
                "/mandatoryDenySearchDepth: -9223372036854775808 is out of range (1..10)"},
           Case{R"({"network": {"httpProxyPort": 0}})",
                "/network/httpProxyPort: 0 is out of range (1..65535)"},
           Case{R"({"network": {"httpProxyPort": 65536}})",
                "/network/httpProxyPort: 65536 is out of range (1..65535)"},
           Case{R"({"network": {"socksProxyPort": -1}})",
                "/network/socksProxyPort: -1 is out of range (1..65535)"},
           Case{R"({"network": {"socksProxyPort": 1080.5}})",
                "/network/socksProxyPort: 1080.5 is not an integer"},
       }) {
    EXPECT_EQ(ErrorOf(c.text), "settings.json: " + c.message) << c.text;
  }
}

TEST(SettingsTest, IntegralFloatsCountAsIntegersLikeUpstream) {
  EXPECT_EQ(Parse(R"({"mandatoryDenySearchDepth": 5.0})").settings.mandatory_deny_search_depth, 5);
  EXPECT_EQ(Parse(R"({"mandatoryDenySearchDepth": 1})").settings.mandatory_deny_search_depth, 1);
  EXPECT_EQ(Parse(R"({"network": {"httpProxyPort": 65535}})").settings.network.http_proxy_port,
            65535);
  EXPECT_EQ(Parse(R"({"network": {"socksProxyPort": 1}})").settings.network.socks_proxy_port, 1);
}

TEST(SettingsTest, BwrapPath) {
  EXPECT_EQ(ErrorOf(R"({"bwrapPath": "bwrap"})"),
            "settings.json: /bwrapPath: 'bwrap' must be an absolute path");
  EXPECT_EQ(ErrorOf(R"({"bwrapPath": "~/bin/bwrap"})"),
            "settings.json: /bwrapPath: '~/bin/bwrap' must be an absolute path");
  EXPECT_EQ(ErrorOf(R"({"bwrapPath": ""})"),
            "settings.json: /bwrapPath: expected an absolute path, got an empty string");
  EXPECT_EQ(ErrorOf(R"({"bwrapPath": "/usr/bin/bw\u0000rap"})"),
            "settings.json: /bwrapPath: '/usr/bin/bw\\x00rap' contains a NUL byte");
}

// ---- unknown, ignored and unsupported keys --------------------------------------------------

// At the top level, where other tools keep keys of their own, an unknown key is a warning.
TEST(SettingsTest, UnknownTopLevelKeysAreWarningsInDocumentOrder) {
  LoadedSettings s = Parse(R"({
    "zeta": 1,
    "network": {"allowedDomains": ["a.com"]},
    "alpha": {"nested": {"anything": [1, 2, {"goes": true}]}}
  })");
  EXPECT_EQ(s.warnings, (std::vector<std::string>{
                            "settings.json: /zeta: unknown key, ignoring",
                            "settings.json: /alpha: unknown key, ignoring",
                        }));
  EXPECT_EQ(s.settings.network.allowed_domains.size(), 1u);
}

// A misspelt rule ignored leaves the sandbox weaker than the file says (~/.ssh readable with
// "denyReed"): inside filesystem and network an unknown key is an error, and a key near a known
// one is taken for a typo of it anywhere.
TEST(SettingsTest, UnknownKeysInsideTheRulesAndTyposAreErrors) {
  const std::string weaker = " Ignoring it could leave the sandbox weaker than this file says";
  EXPECT_EQ(ErrorOf(R"({"filesystem": {"denyReed": ["~/.ssh"]}})"),
            "settings.json: /filesystem/denyReed: unknown key; did you mean 'denyRead'?" + weaker);
  EXPECT_EQ(
      ErrorOf(R"({"filesystem": {"AllowWrites": ["/tmp"]}})"),
      "settings.json: /filesystem/AllowWrites: unknown key; did you mean 'allowWrite'?" + weaker);
  EXPECT_EQ(ErrorOf(R"({"network": {"allowedDomain": ["a.com"]}})"),
            "settings.json: /network/allowedDomain: unknown key; did you mean 'allowedDomains'?" +
                weaker);
  EXPECT_EQ(
      ErrorOf(R"({"network": {"parentProxy": {"htps": "http://p:1"}}})"),
      "settings.json: /network/parentProxy/htps: unknown key; did you mean 'https'?" + weaker);
  // Near a key that is refused or ignored on its own (special keys are candidates too).
  EXPECT_EQ(
      ErrorOf(R"({"network": {"tlsTerminat": {}}})"),
      "settings.json: /network/tlsTerminat: unknown key; did you mean 'tlsTerminate'?" + weaker);
  EXPECT_EQ(ErrorOf(R"({"netwrk": {"allowedDomains": []}})"),
            "settings.json: /netwrk: unknown key; did you mean 'network'?" + weaker);
  EXPECT_EQ(ErrorOf(R"({"network": {"parentProxy": {"ftp": "x"}}})"),
            "settings.json: /network/parentProxy/ftp: unknown key; the keys here are http, https, "
            "noProxy." +
                weaker);
  EXPECT_EQ(ErrorOf(R"({"filesystem": {"zzzzzzzz": 1}})"),
            "settings.json: /filesystem/zzzzzzzz: unknown key; the keys here are denyRead, "
            "allowRead, allowWrite, denyWrite, allowGitConfig, disabled." +
                weaker);
}

TEST(SettingsTest, PointerEscapingInKeys) {
  LoadedSettings s = Parse(R"({"a/b": 1, "c~d": 2, "~/": 3, "": 4, "x\ny": 5})");
  EXPECT_EQ(s.warnings, (std::vector<std::string>{
                            "settings.json: /a~1b: unknown key, ignoring",
                            "settings.json: /c~0d: unknown key, ignoring",
                            "settings.json: /~0~1: unknown key, ignoring",
                            "settings.json: /: unknown key, ignoring",
                            "settings.json: /x\\x0ay: unknown key, ignoring",
                        }));
  EXPECT_EQ(ErrorOf(R"({"network": {"deniedDomainReasons": {"a/b~c": ""}}})"),
            "settings.json: /network/deniedDomainReasons/a~1b~0c: expected a non-empty string, got "
            "an empty string");
}

TEST(SettingsTest, KeysWithNoEffectOnLinuxAreIgnoredWithAWarning) {
  LoadedSettings s = Parse(R"({
    "allowPty": true,
    "enableWeakerNetworkIsolation": true,
    "allowAppleEvents": true,
    "windows": {"anything": 1},
    "network": {"allowUnixSockets": ["/var/run/docker.sock"], "allowLocalBinding": true,
                "allowMachLookup": ["com.apple.*"]}
  })");
  EXPECT_EQ(s.warnings, (std::vector<std::string>{
                            "settings.json: /allowPty: has no effect on Linux, ignoring",
                            "settings.json: /enableWeakerNetworkIsolation: has no effect on "
                            "Linux, ignoring",
                            "settings.json: /allowAppleEvents: has no effect on Linux, ignoring",
                            "settings.json: /windows: has no effect on Linux, ignoring",
                            "settings.json: /network/allowUnixSockets: has no effect on Linux, "
                            "ignoring",
                            "settings.json: /network/allowLocalBinding: has no effect on Linux, "
                            "ignoring",
                            "settings.json: /network/allowMachLookup: has no effect on Linux, "
                            "ignoring",
                        }));
  EXPECT_EQ(s.settings, Settings{});
}

TEST(SettingsTest, KeysForDependenciesSrtDoesNotHaveAreIgnoredWithAWarning) {
  LoadedSettings s = Parse(R"({
    "ripgrep": {"command": "rg"},
    "socatPath": "/usr/bin/socat",
    "seccomp": {"applyPath": "/x"},
    "ignoreViolations": {"*": ["x"]}
  })");
  EXPECT_EQ(s.warnings,
            (std::vector<std::string>{
                "settings.json: /ripgrep: is not used by this srt (it needs no ripgrep), ignoring",
                "settings.json: /socatPath: is not used by this srt (it needs no socat), ignoring",
                "settings.json: /seccomp: is not used by this srt (it needs no seccomp helper: it "
                "compiles its own filter), ignoring",
                "settings.json: /ignoreViolations: is not used by this srt (it needs no violation "
                "filter: it keeps no violation store), ignoring",
            }));
  EXPECT_EQ(s.settings, Settings{});
}

TEST(SettingsTest, GitSafeDirectoriesAndTheJavaAgentAreRead) {
  LoadedSettings s = Parse(R"({
    "javaAgentJarPath": "/opt/srt agent.jar",
    "git": {"safeDirectories": ["/w", "", "~/src", "*"], "other": 1}
  })");
  EXPECT_EQ(s.settings.git.safe_directories, (std::vector<std::string>{"/w", "~/src", "*"}));
  EXPECT_EQ(s.settings.java_agent_jar_path, "/opt/srt agent.jar");
  EXPECT_EQ(s.warnings,
            (std::vector<std::string>{"settings.json: /git/other: unknown key, ignoring"}));

  EXPECT_EQ(ErrorOf(R"({"javaAgentJarPath": "agent.jar"})"),
            "settings.json: /javaAgentJarPath: 'agent.jar' must be an absolute path");
  EXPECT_EQ(ErrorOf(R"({"git": {"safeDirectories": "/w"}})"),
            "settings.json: /git/safeDirectories: expected an array of directories, got a string");
  EXPECT_EQ(ErrorOf(R"({"git": {"safeDirectories": [1]}})"),
            "settings.json: /git/safeDirectories/0: expected a directory, got a number");
  EXPECT_EQ(ErrorOf(R"({"git": {"safeDirectores": ["/w"]}})"),
            "settings.json: /git/safeDirectores: unknown key; did you mean 'safeDirectories'? "
            "Ignoring it could leave the sandbox weaker than this file says");
}

TEST(SettingsTest, MitmProxyIsReadAndExcludesTlsTerminate) {
  LoadedSettings s = Parse(
      R"({"network": {"mitmProxy": {"socketPath": "/run/mitm.sock", "domains": ["*.corp.test"]}}})");
  ASSERT_TRUE(s.settings.network.mitm_proxy.has_value());
  EXPECT_EQ(s.settings.network.mitm_proxy->socket_path, "/run/mitm.sock");
  EXPECT_EQ(s.settings.network.mitm_proxy->domains, (std::vector<std::string>{"*.corp.test"}));

  EXPECT_EQ(ErrorOf(R"({"network": {"tlsTerminate": {}, "mitmProxy": {"socketPath": "/s",
                       "domains": ["a.com"]}}})"),
            "settings.json: /network: network.tlsTerminate and network.mitmProxy are mutually "
            "exclusive");
  EXPECT_EQ(ErrorOf(R"({"network": {"mitmProxy": {"socketPath": "/s", "domains": []}}})"),
            "settings.json: /network/mitmProxy/domains: expected at least one domain pattern, got "
            "an empty array");
  EXPECT_EQ(ErrorOf(R"({"network": {"mitmProxy": {"domains": ["a.com"]}}})"),
            "settings.json: /network/mitmProxy: socketPath is required");
  EXPECT_EQ(ErrorOf(R"({"network": {"mitmProxy": {"socketPath": "s.sock", "domains": ["a"]}}})"),
            "settings.json: /network/mitmProxy/socketPath: 's.sock' must be an absolute path");
  EXPECT_EQ(ErrorOf(R"({"network": {"mitmProxy": {"socketPath": "/s", "domains": ["a.com"],
                       "port": 1}}})"),
            "settings.json: /network/mitmProxy/port: unknown key; the keys here are socketPath, "
            "domains. Ignoring it could leave the sandbox weaker than this file says");
}

TEST(SettingsTest, UnsupportedSecurityFeaturesAreRejected) {
  for (const auto& [text, pointer] : std::vector<std::pair<std::string, std::string>>{
           {R"({"network": {"filterRequest": "x"}})", "/network/filterRequest"},
           {R"({"network": {"allowPlaintextHeaderSet": true}})",
            "/network/allowPlaintextHeaderSet"},
           {R"({"network": {"ambiguousRequestTarget": "refuse"}})",
            "/network/ambiguousRequestTarget"},
       }) {
    EXPECT_EQ(ErrorOf(text), "settings.json: " + pointer + ": " + kUnsupported) << text;
  }
}

TEST(SettingsTest, RequestFilteringKeys) {
  LoadedSettings s = Parse(R"({"network": {"requireHostMatch": true, "refuseOpaqueTunnels": true,
      "stripResponseHeaders": ["Set-Cookie", "x_internal.token"]}})");
  EXPECT_TRUE(s.settings.network.require_host_match);
  EXPECT_TRUE(s.settings.network.refuse_opaque_tunnels);
  EXPECT_EQ(s.settings.network.strip_response_headers,
            (std::vector<std::string>{"Set-Cookie", "x_internal.token"}));
  EXPECT_EQ(Parse(R"({"network": {"requireHostMatch": false}})").settings, Settings{});
  for (const auto& [text, error] : std::vector<std::pair<std::string, std::string>>{
           {R"({"network": {"stripResponseHeaders": "Set-Cookie"}})",
            "/network/stripResponseHeaders: expected an array of header names, got a string"},
           {R"({"network": {"stripResponseHeaders": [""]}})",
            "/network/stripResponseHeaders/0: expected a non-empty string, got an empty string"},
           {R"({"network": {"stripResponseHeaders": ["a", 1]}})",
            "/network/stripResponseHeaders/1: expected a header name string, got a number"},
           {R"({"network": {"stripResponseHeaders": ["Set Cookie"]}})",
            "/network/stripResponseHeaders/0: 'Set Cookie' is not an HTTP header name"},
           {R"({"network": {"stripResponseHeaders": ["content_length"]}})",
            "/network/stripResponseHeaders/0: 'content_length' frames the response and cannot be "
            "stripped (the client could not tell where the response ends)"},
       }) {
    EXPECT_EQ(ErrorOf(text), "settings.json: " + error) << text;
  }
}

TEST(SettingsTest, TheFirstErrorInDocumentOrderWins) {
  EXPECT_EQ(ErrorOf(R"({"network": {"httpProxyPort": 0}, "bwrapPath": "x"})"),
            "settings.json: /network/httpProxyPort: 0 is out of range (1..65535)");
  EXPECT_EQ(ErrorOf(R"({"bwrapPath": "x", "network": {"httpProxyPort": 0}})"),
            "settings.json: /bwrapPath: 'x' must be an absolute path");
}

// ---- filesystem paths -----------------------------------------------------------------------

TEST(SettingsTest, PathEntries) {
  LoadedSettings s = Parse(R"({"filesystem": {"allowWrite": [
      "/a", {"path": "/b*", "literal": true}, {"literal": false, "path": "/c"}, {"path": "/d"}]}})");
  EXPECT_EQ(s.settings.filesystem.allow_write,
            (std::vector<PathEntry>{{"/a", false}, {"/b*", true}, {"/c", false}, {"/d", false}}));
}

TEST(SettingsTest, BadPathEntries) {
  struct Case {
    std::string text;
    std::string message;
  };
  for (const Case& c : {
           Case{R"({"filesystem": {"denyRead": [""]}})",
                "/filesystem/denyRead/0: expected a path, got an empty string"},
           Case{R"({"filesystem": {"allowRead": ["/ok", 3]}})",
                "/filesystem/allowRead/1: expected " + kPathEntry + ", got a number"},
           Case{R"({"filesystem": {"allowWrite": [null]}})",
                "/filesystem/allowWrite/0: expected " + kPathEntry + ", got null"},
           Case{R"({"filesystem": {"denyWrite": [["/x"]]}})",
                "/filesystem/denyWrite/0: expected " + kPathEntry + ", got an array"},
           Case{R"({"filesystem": {"denyRead": [{"literal": true}]}})",
                "/filesystem/denyRead/0: expected " + kPathEntry +
                    ", got an object without \"path\""},
           Case{R"({"filesystem": {"denyRead": [{}]}})", "/filesystem/denyRead/0: expected " +
                                                             kPathEntry +
                                                             ", got an object without \"path\""},
           Case{R"({"filesystem": {"denyRead": [{"path": "/x", "literal": true, "mode": "r"}]}})",
                "/filesystem/denyRead/0: unknown key 'mode' in a path entry; expected " +
                    kPathEntry},
           Case{R"({"filesystem": {"denyRead": [{"path": 1, "literal": true}]}})",
                "/filesystem/denyRead/0/path: expected a path, got a number"},
           Case{R"({"filesystem": {"denyRead": [{"path": "", "literal": true}]}})",
                "/filesystem/denyRead/0/path: expected a path, got an empty string"},
           Case{R"({"filesystem": {"denyRead": [{"path": "/x", "literal": "yes"}]}})",
                "/filesystem/denyRead/0/literal: expected a boolean, got a string"},
           Case{R"({"filesystem": {"allowWrite": ["/a\u0000b"]}})",
                "/filesystem/allowWrite/0: '/a\\x00b' contains a NUL byte"},
           Case{R"({"filesystem": {"denyRead": [{"path": "/a\u0000", "literal": true}]}})",
                "/filesystem/denyRead/0: '/a\\x00' contains a NUL byte"},
       }) {
    EXPECT_EQ(ErrorOf(c.text), "settings.json: " + c.message) << c.text;
  }
}

TEST(SettingsTest, DenyGlobEndingInASeparatorIsRejected) {
  EXPECT_EQ(ErrorOf(R"({"filesystem": {"denyRead": ["/data/*/"]}})"),
            "settings.json: /filesystem/denyRead/0: Deny glob \"/data/*/\" ends in a separator, "
            "so as a pattern it can match no path. Write \"/data/*\", which is also read as the "
            "path of that name where it exists, or add a \"**\" segment to match at any depth.");
  EXPECT_EQ(ErrorOf(R"({"filesystem": {"denyWrite": ["/ok", "~/.config/*.d//"]}})"),
            "settings.json: /filesystem/denyWrite/1: Deny glob \"~/.config/*.d//\" ends in a "
            "separator, so as a pattern it can match no path. Write \"~/.config/*.d\", which is "
            "also read as the path of that name where it exists, or add a \"**\" segment to "
            "match at any depth.");
  EXPECT_EQ(ErrorOf(R"({"filesystem": {"denyRead": [{"path": "/a/b?/", "literal": false}]}})"),
            "settings.json: /filesystem/denyRead/0: Deny glob \"/a/b?/\" ends in a separator, so "
            "as a pattern it can match no path. Write \"/a/b?\", which is also read as the path "
            "of that name where it exists, or add a \"**\" segment to match at any depth.");
  // Not a glob, not rooted, literal, or not a deny list: accepted.
  Parse(R"({"filesystem": {
      "denyRead": ["/data/", "data/*/", {"path": "/data/*/", "literal": true}, "/a/[b]"],
      "allowRead": ["/data/*/"], "allowWrite": ["/data/*/"]}})");
}

// ---- network --------------------------------------------------------------------------------

TEST(SettingsTest, DomainPatternErrorsCarryThePointerAndUpstreamText) {
  EXPECT_EQ(ErrorOf(R"({"network": {"allowedDomains": ["a.com", "b.com", "*.com"]}})"),
            "settings.json: /network/allowedDomains/2: '*.com' is too broad: a wildcard needs at "
            "least two labels after '*.'. " +
                kDomainGrammar + kAllowTail);
  EXPECT_EQ(ErrorOf(R"({"network": {"deniedDomains": ["not-a-domain"]}})"),
            "settings.json: /network/deniedDomains/0: 'not-a-domain' is not a valid domain "
            "pattern. " +
                kDomainGrammar + kDenyTail);
  EXPECT_EQ(ErrorOf(R"({"network": {"allowedDomains": ["*"]}})"),
            "settings.json: /network/allowedDomains/0: '*' is too broad: '*' (every host) is "
            "accepted only in deniedDomains. " +
                kDomainGrammar + kAllowTail);
  LoadedSettings s = Parse(R"({"network": {"deniedDomains": ["*", "*:25"]}})");
  EXPECT_EQ(s.settings.network.denied_domains, (std::vector<std::string>{"*", "*:25"}));
}

TEST(SettingsTest, DeniedDomainReasons) {
  // Keys are checked against deniedDomains wherever deniedDomains appears in the object.
  LoadedSettings s = Parse(R"({"network": {"deniedDomainReasons": {"*.evil.com": "phishing"},
                                           "deniedDomains": ["*.evil.com"]}})");
  EXPECT_EQ(s.settings.network.denied_domain_reasons,
            (std::map<std::string, std::string>{{"*.evil.com", "phishing"}}));

  EXPECT_EQ(ErrorOf(R"({"network": {"deniedDomains": ["*.evil.com"],
                                    "deniedDomainReasons": {"evil.com": "phishing"}}})"),
            "settings.json: /network/deniedDomainReasons/evil.com: 'evil.com' is not an entry of "
            "deniedDomains (a reason is keyed by the exact entry)");
  // Exact entry, not the canonical form.
  EXPECT_EQ(ErrorOf(R"({"network": {"deniedDomains": ["Evil.com"],
                                    "deniedDomainReasons": {"evil.com": "phishing"}}})"),
            "settings.json: /network/deniedDomainReasons/evil.com: 'evil.com' is not an entry of "
            "deniedDomains (a reason is keyed by the exact entry)");
  EXPECT_EQ(ErrorOf(R"({"network": {"deniedDomainReasons": {"a.com": "x"}}})"),
            "settings.json: /network/deniedDomainReasons/a.com: 'a.com' is not an entry of "
            "deniedDomains (a reason is keyed by the exact entry)");
  EXPECT_EQ(ErrorOf(R"({"network": {"deniedDomains": ["a.com"],
                                    "deniedDomainReasons": {"a.com": ""}}})"),
            "settings.json: /network/deniedDomainReasons/a.com: expected a non-empty string, got "
            "an empty string");
  // The reason becomes an HTTP status phrase.
  EXPECT_EQ(ErrorOf(R"({"network": {"deniedDomains": ["a.com"],
                                    "deniedDomainReasons": {"a.com": "x\r\nSet-Cookie: y"}}})"),
            "settings.json: /network/deniedDomainReasons/a.com: 'x\\x0d\\x0aSet-Cookie: y' "
            "contains a control character");
}

TEST(SettingsTest, DeniedResolvedAddresses) {
  LoadedSettings s = Parse(
      R"({"network": {"deniedResolvedAddresses": ["10.0.0.0/8", "192.168.1.10", "fc00::/7",
                                                  "::1", "0.0.0.0/0", "::/0", "10.0.0.1/32",
                                                  "2001:db8::/128"]}})");
  EXPECT_EQ(s.settings.network.denied_resolved_addresses.size(), 8u);

  struct Case {
    std::string value;
    std::string reason;
  };
  for (const Case& c : {
           Case{"10.0.0.0/33", "'10.0.0.0/33' has a prefix length out of range (0..32)"},
           Case{"fc00::/129", "'fc00::/129' has a prefix length out of range (0..128)"},
           Case{"10.0.0.0/x", "'10.0.0.0/x' has an invalid prefix length"},
           Case{"[::1]", "'[::1]' is not a valid address"},
           Case{"example.com", "'example.com' is not a valid address"},
           Case{"10.0.0", "'10.0.0' is not a valid address"},
       }) {
    EXPECT_EQ(
        ErrorOf(R"({"network": {"deniedResolvedAddresses": ["1.2.3.4", ")" + c.value + R"("]}})"),
        "settings.json: /network/deniedResolvedAddresses/1: " + c.reason + ". " + kAddressText)
        << c.value;
  }
}

TEST(SettingsTest, ParentProxyUrls) {
  LoadedSettings s = Parse(R"({"network": {"parentProxy": {"http": "http://u:p@proxy:3128",
                                                           "https": "HTTP://proxy"}}})");
  ASSERT_TRUE(s.settings.network.parent_proxy.has_value());
  EXPECT_EQ(s.settings.network.parent_proxy->http, "http://u:p@proxy:3128");
  EXPECT_EQ(s.settings.network.parent_proxy->https, "HTTP://proxy");
  EXPECT_EQ(s.settings.network.parent_proxy->no_proxy, std::nullopt);
  const std::string tail =
      " is not a proxy URL srt can chain to; expected http://[user:password@]host[:port] (srt "
      "speaks plain HTTP to a parent proxy: https:// and socks5:// parents are not supported)";
  EXPECT_EQ(ErrorOf(R"({"network": {"parentProxy": {"http": "ftp://p:21"}}})"),
            "settings.json: /network/parentProxy/http: 'ftp://p:21'" + tail);
  EXPECT_EQ(ErrorOf(R"({"network": {"parentProxy": {"http": "socks5://p:1080"}}})"),
            "settings.json: /network/parentProxy/http: 'socks5://p:1080'" + tail);
  EXPECT_EQ(ErrorOf(R"({"network": {"parentProxy": {"https": "https://p:3128"}}})"),
            "settings.json: /network/parentProxy/https: 'https://p:3128'" + tail);
  EXPECT_EQ(ErrorOf(R"({"network": {"parentProxy": {"https": "proxy:3128"}}})"),
            "settings.json: /network/parentProxy/https: 'proxy:3128'" + tail);
  EXPECT_EQ(ErrorOf(R"({"network": {"parentProxy": {"https": "http://"}}})"),
            "settings.json: /network/parentProxy/https: 'http://'" + tail);
  EXPECT_EQ(ErrorOf(R"({"network": {"parentProxy": {"http": "http://p\n:1"}}})"),
            "settings.json: /network/parentProxy/http: 'http://p\\x0a:1'" + tail);
  // The rest of the URL is checked here too, not first when a sandbox starts.
  EXPECT_EQ(ErrorOf(R"({"network": {"parentProxy": {"http": "http://p:0"}}})"),
            "settings.json: /network/parentProxy/http: 'http://p:0' has a bad port");
  EXPECT_EQ(ErrorOf(R"({"network": {"parentProxy": {"https": "http://u:secret@p/x"}}})"),
            "settings.json: /network/parentProxy/https: 'http://u:***@p/x' has a path, query or "
            "fragment; a proxy URL is http://host:port");
  EXPECT_EQ(ErrorOf(R"({"network": {"parentProxy": {"http": "http://bad host:8080"}}})"),
            "settings.json: /network/parentProxy/http: 'http://bad host:8080'" + tail);
  EXPECT_EQ(ErrorOf(R"({"network": {"parentProxy": {"http": "http://a..b:8080"}}})"),
            "settings.json: /network/parentProxy/http: 'http://a..b:8080' has a bad host");
}

TEST(SettingsTest, SrtNetworkKeys) {
  LoadedSettings defaults = Parse(R"({"network": {"allowedDomains": ["a.com"]}})");
  EXPECT_TRUE(defaults.settings.network.transparent_capture);
  EXPECT_TRUE(defaults.settings.network.dns_servers.empty());
  LoadedSettings s = Parse(R"({"network": {"transparentCapture": false,
      "dnsServers": ["127.0.0.1", "127.0.0.1:5353", "::1", "[::1]", "[::1]:53"]}})");
  EXPECT_FALSE(s.settings.network.transparent_capture);
  EXPECT_EQ(s.settings.network.dns_servers,
            (std::vector<std::string>{"127.0.0.1", "127.0.0.1:5353", "::1", "[::1]", "[::1]:53"}));
  EXPECT_TRUE(s.warnings.empty());
  const std::string tail =
      " is not a DNS server address; expected an IP literal with an optional port, e.g. "
      "\"127.0.0.1\", \"127.0.0.1:5353\", \"[::1]:53\"";
  for (const char* bad : {"dns.example", "127.0.0.1:", "127.0.0.1:0", "127.0.0.1:65536", "[::1",
                          "[::1]53", "[::1]:", "1.2.3", ""}) {
    EXPECT_EQ(ErrorOf(std::string(R"({"network": {"dnsServers": [")") + bad + R"("]}})"),
              std::string("settings.json: /network/dnsServers/0: '") + bad + "'" + tail)
        << bad;
  }
  EXPECT_EQ(ErrorOf(R"({"network": {"dnsServers": "127.0.0.1"}})"),
            "settings.json: /network/dnsServers: expected an array of DNS server addresses, got "
            "a string");
  EXPECT_EQ(ErrorOf(R"({"network": {"transparentCapture": "yes"}})"),
            "settings.json: /network/transparentCapture: expected a boolean, got a string");
}

TEST(SettingsTest, TlsTerminate) {
  LoadedSettings none = Parse(R"({"network": {"allowedDomains": ["a.com"]}})");
  EXPECT_EQ(none.settings.network.tls_terminate, std::nullopt);
  LoadedSettings defaults = Parse(R"({"network": {"tlsTerminate": {}}})");
  ASSERT_TRUE(defaults.settings.network.tls_terminate.has_value());
  EXPECT_EQ(*defaults.settings.network.tls_terminate, TlsTerminateSettings{});
  EXPECT_EQ(defaults.settings.network.tls_terminate->max_tunnels, 256U);
  EXPECT_EQ(defaults.settings.network.tls_terminate->handshake_timeout_ms, 10000U);
  LoadedSettings s = Parse(R"({"network": {"tlsTerminate": {
      "caCertPath": "/etc/srt/ca.pem", "caKeyPath": "/etc/srt/ca.key",
      "excludeDomains": ["pinned.example", "*.mtls.example:443"],
      "extraCaCertPaths": ["/etc/corp/root.pem"], "maxTunnels": 65536,
      "handshakeTimeoutMs": 100}}})");
  ASSERT_TRUE(s.settings.network.tls_terminate.has_value());
  const TlsTerminateSettings& tls = *s.settings.network.tls_terminate;
  EXPECT_EQ(tls.ca_cert_path, "/etc/srt/ca.pem");
  EXPECT_EQ(tls.ca_key_path, "/etc/srt/ca.key");
  EXPECT_EQ(tls.exclude_domains,
            (std::vector<std::string>{"pinned.example", "*.mtls.example:443"}));
  EXPECT_EQ(tls.extra_ca_cert_paths, std::vector<std::string>{"/etc/corp/root.pem"});
  EXPECT_EQ(tls.max_tunnels, 65536U);
  EXPECT_EQ(tls.handshake_timeout_ms, 100U);
  EXPECT_TRUE(s.warnings.empty());

  const std::string p = "settings.json: /network/tlsTerminate";
  // Upstream's message, at the object.
  EXPECT_EQ(ErrorOf(R"({"network": {"tlsTerminate": {"caCertPath": "/ca.pem"}}})"),
            p + ": caCertPath and caKeyPath must be provided together");
  EXPECT_EQ(ErrorOf(R"({"network": {"tlsTerminate": {"caKeyPath": "/ca.key"}}})"),
            p + ": caCertPath and caKeyPath must be provided together");
  EXPECT_EQ(ErrorOf(R"({"network": {"tlsTerminate": true}})"),
            p + ": expected an object, got a boolean");
  EXPECT_EQ(ErrorOf(R"({"network": {"tlsTerminate": {"caCertPath": ""}}})"),
            p + "/caCertPath: expected a non-empty path, got an empty string");
  EXPECT_EQ(ErrorOf(R"({"network": {"tlsTerminate": {"caKeyPath": 3}}})"),
            p + "/caKeyPath: expected a non-empty path, got a number");
  EXPECT_EQ(ErrorOf(R"({"network": {"tlsTerminate": {"extraCaCertPaths": ["/a", "x\ny"]}}})"),
            p + "/extraCaCertPaths/1: 'x\\x0ay' contains a control character");
  EXPECT_EQ(ErrorOf(R"({"network": {"tlsTerminate": {"extraCaCertPaths": "/a"}}})"),
            p + "/extraCaCertPaths: expected an array of paths, got a string");
  EXPECT_EQ(ErrorOf(R"({"network": {"tlsTerminate": {"excludeDomains": ["*.com"]}}})")
                .substr(0, p.size() + 19),
            p + "/excludeDomains/0: ");
  EXPECT_EQ(ErrorOf(R"({"network": {"tlsTerminate": {"excludeDomains": ["*"]}}})"),
            p +
                "/excludeDomains/0: '*' is too broad: '*' (every host) is accepted only in "
                "deniedDomains. " +
                kDomainGrammar + kAllowTail);
  EXPECT_EQ(ErrorOf(R"({"network": {"tlsTerminate": {"maxTunnels": 0}}})"),
            p + "/maxTunnels: 0 is out of range (1..65536)");
  EXPECT_EQ(ErrorOf(R"({"network": {"tlsTerminate": {"maxTunnels": 65537}}})"),
            p + "/maxTunnels: 65537 is out of range (1..65536)");
  EXPECT_EQ(ErrorOf(R"({"network": {"tlsTerminate": {"handshakeTimeoutMs": 99}}})"),
            p + "/handshakeTimeoutMs: 99 is out of range (100..600000)");
  EXPECT_EQ(ErrorOf(R"({"network": {"tlsTerminate": {"handshakeTimeoutMs": 600001}}})"),
            p + "/handshakeTimeoutMs: 600001 is out of range (100..600000)");
  EXPECT_EQ(ErrorOf(R"({"network": {"tlsTerminate": {"maxTunnel": 3}}})"),
            p + "/maxTunnel: unknown key; did you mean 'maxTunnels'? Ignoring it could leave the "
                "sandbox weaker than this file says");
}

TEST(SettingsTest, OriginIsUsedVerbatim) {
  Result<LoadedSettings> r = ParseSettings("[]", "/home/me/.srt-settings.json");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().message(),
            "/home/me/.srt-settings.json: expected a settings object, got an array");
}

// ---- credentials -----------------------------------------------------------------------------

TEST(SettingsTest, CredentialsAreDecoded) {
  LoadedSettings s = Parse(R"J({
    "network": {"allowedDomains": ["*.github.com", "example.com:8080"]},
    "credentials": {
      "envVars": [
        {"name": "AWS_SECRET", "mode": "deny"},
        {"name": "GITHUB_TOKEN", "mode": "mask", "injectHosts": ["api.github.com"]},
        {"name": "CFG", "mode": "mask", "extract": "token=(\\w+)", "onExtractNoMatch": "error"},
        {"name": "ID", "mode": "mask", "decode": "jwt", "maskClaims": ["email"]}
      ],
      "files": [
        {"path": "~/.ssh", "mode": "deny"},
        {"path": {"path": "/etc/x*", "literal": true}, "mode": "mask", "maskDuplicates": true,
         "injectHosts": ["example.com"]}
      ],
      "allowPlaintextInject": true
    }
  })J");
  const CredentialSettings& c = s.settings.credentials;
  ASSERT_EQ(c.env_vars.size(), 4u);
  EXPECT_EQ(c.env_vars[0], (CredentialEnvVar{"AWS_SECRET", CredentialMode::kDeny, {}}));
  EXPECT_EQ(c.env_vars[1].mode, CredentialMode::kMask);
  EXPECT_EQ(c.env_vars[1].mask.inject_hosts, std::vector<std::string>{"api.github.com"});
  EXPECT_EQ(c.env_vars[2].mask.extract, "token=(\\w+)");
  EXPECT_EQ(c.env_vars[2].mask.on_extract_no_match, ExtractNoMatch::kError);
  EXPECT_TRUE(c.env_vars[3].mask.decode_jwt);
  EXPECT_EQ(c.env_vars[3].mask.mask_claims, std::vector<std::string>{"email"});
  ASSERT_EQ(c.files.size(), 2u);
  EXPECT_EQ(c.files[0].path, (PathEntry{"~/.ssh", false}));
  EXPECT_EQ(c.files[1].path, (PathEntry{"/etc/x*", true}));
  EXPECT_TRUE(c.files[1].mask.mask_duplicates);
  EXPECT_TRUE(c.allow_plaintext_inject);
  EXPECT_TRUE(s.warnings.empty());
}

TEST(SettingsTest, AwsPairsAndSigV4AreDecoded) {
  LoadedSettings s = Parse(R"J({
    "network": {"allowedDomains": ["*.amazonaws.com"], "tlsTerminate": {}},
    "credentials": {
      "envVars": [
        {"name": "MY_KEY_ID", "mode": "mask"},
        {"name": "MY_SECRET", "mode": "mask"},
        {"name": "MY_TOKEN", "mode": "mask"}
      ],
      "awsPairs": [{"accessKeyIdVar": "MY_KEY_ID", "secretAccessKeyVar": "MY_SECRET",
                    "sessionTokenVar": "MY_TOKEN"}],
      "sigv4": {"presigned": "passthrough", "streaming": "deny"}
    }
  })J");
  const CredentialSettings& c = s.settings.credentials;
  ASSERT_EQ(c.aws_pairs.size(), 1u);
  EXPECT_EQ(c.aws_pairs[0], (AwsPairSettings{"MY_KEY_ID", "MY_SECRET", "MY_TOKEN"}));
  EXPECT_EQ(c.sigv4,
            (SigV4Settings{SigV4Policy::kDeny, SigV4Policy::kPassthrough, SigV4Policy::kDeny}));
  EXPECT_EQ(Parse(R"({"credentials": {"sigv4": {}}})").settings.credentials.sigv4, SigV4Settings{});
}

TEST(SettingsTest, AwsPairErrorsNameTheirPath) {
  const std::string p = "settings.json: /credentials";
  auto doc = [&](std::string_view credentials) {
    return R"J({"network": {"allowedDomains": ["*.amazonaws.com"], "tlsTerminate": {}},
               "credentials": {"envVars": [{"name": "K", "mode": "mask"},
                                           {"name": "S", "mode": "mask"},
                                           {"name": "D", "mode": "deny"},
                                           {"name": "E", "mode": "mask", "extract": "x=(.*)"}], )J" +
           std::string(credentials) + "}}";
  };
  EXPECT_EQ(ErrorOf(doc(R"("awsPairs": [{"accessKeyIdVar": "K", "secretAccessKeyVar": "S"}])")),
            "<ok>");
  EXPECT_EQ(ErrorOf(doc(R"("awsPairs": [{"accessKeyIdVar": "K", "secretAccessKeyVar": "K"}])")),
            p + "/awsPairs/0/secretAccessKeyVar: \"K\" appears in more than one awsPairs slot "
                "(within or across pairs) \u2014 each variable can fill exactly one slot.");
  EXPECT_EQ(ErrorOf(doc(R"("awsPairs": [{"accessKeyIdVar": "K", "secretAccessKeyVar": "S"},
                                      {"accessKeyIdVar": "S", "secretAccessKeyVar": "X"}])")),
            p + "/awsPairs/1/accessKeyIdVar: \"S\" appears in more than one awsPairs slot "
                "(within or across pairs) \u2014 each variable can fill exactly one slot.");
  for (const char* name : {"D", "NOPE"}) {
    EXPECT_EQ(
        ErrorOf(doc(std::string(R"("awsPairs": [{"accessKeyIdVar": "K", "secretAccessKeyVar": ")") +
                    name + "\"}]")),
        p + "/awsPairs/0/secretAccessKeyVar: \"" + name +
            "\" does not reference a credentials.envVars entry with mode \"mask\" \u2014 an "
            "AWS pair links already-masked variables; add the entry (masking is the opt-in "
            "for SigV4 re-signing).");
  }
  EXPECT_EQ(ErrorOf(doc(R"("awsPairs": [{"accessKeyIdVar": "K", "secretAccessKeyVar": "S",
                                       "sessionTokenVar": "E"}])")),
            p + "/awsPairs/0/sessionTokenVar: \"E\" uses extract/decode, but an AWS pair member "
                "must be masked whole-value: the SigV4 trigger is an exact match of the fake "
                "access key id, and the signer needs the entire real value.");
  EXPECT_EQ(ErrorOf(doc(R"("awsPairs": [{"accessKeyIdVar": "K"}])")),
            p + "/awsPairs/0: an awsPairs entry needs \"secretAccessKeyVar\"");
  EXPECT_EQ(ErrorOf(doc(R"("awsPairs": [{"accessKeyIdVar": "K", "secretAccessKeyVar": "S",
                                       "region": "x"}])")),
            p + "/awsPairs/0/region: unknown key; the keys here are accessKeyIdVar, "
                "secretAccessKeyVar, sessionTokenVar. Ignoring it could leave the sandbox weaker "
                "than this file says");
  EXPECT_EQ(ErrorOf(doc(R"("awsPairs": [{"accessKeyIdVar": "1K", "secretAccessKeyVar": "S"}])")),
            p + "/awsPairs/0/accessKeyIdVar: \"1K\" is not an environment variable name "
                "(expected [A-Za-z_][A-Za-z0-9_]*)");
  EXPECT_EQ(ErrorOf(doc(R"("awsPairs": {})")),
            p + "/awsPairs: expected an array of AWS key pair entries, got an object");
  EXPECT_EQ(ErrorOf(doc(R"("sigv4": {"presigned": "allow"})")),
            p + "/sigv4/presigned: expected \"deny\" or \"passthrough\", got \"allow\"");
  EXPECT_EQ(ErrorOf(doc(R"("sigv4": {"chunked": "deny"})")),
            p + "/sigv4/chunked: unknown key; the keys here are streaming, presigned, sigv4a. "
                "Ignoring it could leave the sandbox weaker than this file says");
}

TEST(SettingsTest, CredentialErrorsNameTheirPath) {
  const std::string p = "settings.json: /credentials";
  const std::string net = R"("network": {"allowedDomains": ["*.github.com"]}, )";
  auto doc = [&](std::string_view credentials) {
    return "{" + net + R"("credentials": {"allowPlaintextInject": true, )" +
           std::string(credentials) + "}}";
  };
  EXPECT_EQ(ErrorOf(doc(R"("envVars": [{"name": "1X", "mode": "deny"}])")),
            p + "/envVars/0/name: \"1X\" is not an environment variable name (expected "
                "[A-Za-z_][A-Za-z0-9_]*)");
  EXPECT_EQ(ErrorOf(doc(R"("envVars": [{"name": "X", "mode": "hide"}])")),
            p + "/envVars/0/mode: expected \"deny\" or \"mask\", got \"hide\"");
  EXPECT_EQ(ErrorOf(doc(R"("envVars": [{"name": "X"}])")),
            p + "/envVars/0: an envVars entry needs \"mode\" (\"deny\" or \"mask\")");
  EXPECT_EQ(ErrorOf(doc(R"("envVars": [{"name": "X", "mode": "mask", "extract": "a("}])")),
            p + "/envVars/0/extract: extract is not a valid regular expression: missing ): a(");
  EXPECT_EQ(ErrorOf(doc(R"("envVars": [{"name": "X", "mode": "mask", "extract": "a+"}])")),
            p + "/envVars/0/extract: extract must contain at least one capturing group \u2014 "
                "group 1 is the credential value to mask (e.g. \"token:\\\\s*(\\\\S+)\").");
  EXPECT_EQ(ErrorOf(doc(R"("envVars": [{"name": "X", "mode": "mask", "maskClaims": ["a"]}])")),
            p + "/envVars/0/maskClaims: maskClaims requires decode \u2014 it names claims inside "
                "the decoded payload. Set decode (e.g. \"jwt\"), or remove maskClaims to mask the "
                "whole value.");
  EXPECT_EQ(
      ErrorOf(
          doc(R"("envVars": [{"name": "X", "mode": "mask", "decode": "jwt", "maskClaims": []}])")),
      p + "/envVars/0/maskClaims: maskClaims is explicitly empty \u2014 no claim would ever "
          "be masked. Omit maskClaims to mask the whole token, or list the claims to "
          "protect.");
  EXPECT_EQ(ErrorOf(doc(R"("envVars": [{"name": "X", "mode": "mask", "injectHosts": []}])")),
            p + "/envVars/0/injectHosts: injectHosts is explicitly empty \u2014 the credential "
                "would be masked but never injected. Omit injectHosts to default to "
                "network.allowedDomains, or list the intended hosts.");
  EXPECT_EQ(ErrorOf(doc(R"("envVars": [{"name": "X", "mode": "mask", "injectHosts": ["b.com"]}])")),
            p + "/envVars/0/injectHosts/0: injectHosts entry \"b.com\" is not reachable via "
                "network.allowedDomains \u2014 add \"b.com\" (or a covering wildcard) to "
                "allowedDomains, or remove it from injectHosts.");
  // *.github.com covers its subdomains and narrower wildcards, not github.com itself.
  EXPECT_EQ(ErrorOf(doc(R"("files": [{"path": "/x", "mode": "mask",
                                      "injectHosts": ["a.b.github.com", "*.api.github.com"]}])")),
            "<ok>");
  EXPECT_EQ(ErrorOf(doc(R"("files": [{"path": "/x", "mode": "mask",
                                      "injectHosts": ["github.com"]}])")),
            p + "/files/0/injectHosts/0: injectHosts entry \"github.com\" is not reachable via "
                "network.allowedDomains \u2014 add \"github.com\" (or a covering wildcard) to "
                "allowedDomains, or remove it from injectHosts.");
  EXPECT_EQ(ErrorOf(doc(R"("files": [{"path": "~/.aws/", "mode": "mask"}])")),
            p + "/files/0/path: Credential mode \"mask\" applies to a single file, not a "
                "directory. Use mode \"deny\" for \"~/.aws/\", or point at the credential file "
                "inside it.");
  EXPECT_EQ(ErrorOf(doc(R"("files": [{"path": "/data/*/", "mode": "deny"}])")),
            p + "/files/0/path: Deny glob \"/data/*/\" ends in a separator, so as a pattern it "
                "can match no path. Write \"/data/*\", which is also read as the path of that "
                "name where it exists, or add a \"**\" segment to match at any depth.");
  EXPECT_EQ(ErrorOf(doc(R"("files": [{"path": "/x", "mode": "deny", "maskDuplicate": true}])")),
            p + "/files/0/maskDuplicate: unknown key; did you mean 'maskDuplicates'? Ignoring it "
                "could leave the sandbox weaker than this file says");
  EXPECT_EQ(ErrorOf(doc(R"("envVars": [{"name": "X", "mode": "deny", "maskDuplicates": true}])")),
            p + "/envVars/0/maskDuplicates: unknown key; the keys here are name, mode, extract, "
                "onExtractNoMatch, decode, maskClaims, injectHosts. Ignoring it could leave the "
                "sandbox weaker than this file says");
}

TEST(SettingsTest, MaskingNeedsTlsTerminationOrThePlaintextOptIn) {
  const std::string message =
      "settings.json: /credentials: Credential masking requires network.tlsTerminate so "
      "substitution runs only over a verified TLS connection. Enable tlsTerminate, or set "
      "credentials.allowPlaintextInject to opt out (not recommended).";
  EXPECT_EQ(ErrorOf(R"({"credentials": {"envVars": [{"name": "T", "mode": "mask"}]}})"), message);
  EXPECT_EQ(ErrorOf(R"({"credentials": {"files": [{"path": "/t", "mode": "mask"}]}})"), message);
  // deny needs no transport.
  EXPECT_EQ(ErrorOf(R"({"credentials": {"envVars": [{"name": "T", "mode": "deny"}]}})"), "<ok>");
}

}  // namespace
}  // namespace srt
