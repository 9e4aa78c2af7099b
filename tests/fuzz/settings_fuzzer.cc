// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: ParseSettings on arbitrary bytes (config/json_text's reader, which srt-mcp's
// configuration shares, + the schema decoder). Besides
// "never crashes, never throws", it checks that every message names the origin, that no input
// reaches an internal error, and that accepted settings hold only entries that re-validate.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "base/address.h"
#include "base/domain_pattern.h"
#include "srt/settings.h"

namespace {

constexpr std::string_view kOrigin = "fuzz.json";

void Require(bool condition) {
  if (!condition) {
    std::abort();
  }
}

bool NamesOrigin(std::string_view message) { return message.starts_with(kOrigin); }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  srt::Result<srt::LoadedSettings> result = srt::ParseSettings(text, kOrigin);
  if (!result.has_value()) {
    Require(result.error().code() == srt::Errc::kInvalidArgument);
    Require(NamesOrigin(result.error().message()));
    return 0;
  }
  for (const std::string& warning : result->warnings) {
    Require(NamesOrigin(warning));
  }
  const srt::Settings& s = result->settings;
  Require(s.mandatory_deny_search_depth >= 1 && s.mandatory_deny_search_depth <= 10);
  Require(!s.bwrap_path || (!s.bwrap_path->empty() && s.bwrap_path->front() == '/'));
  for (const std::string& d : s.network.allowed_domains) {
    Require(srt::ParseDomainPattern(d, srt::PatternList::kAllow).has_value());
  }
  for (const std::string& d : s.network.denied_domains) {
    Require(srt::ParseDomainPattern(d, srt::PatternList::kDeny).has_value());
  }
  for (const auto& [entry, reason] : s.network.denied_domain_reasons) {
    Require(!reason.empty());
    bool listed = false;
    for (const std::string& d : s.network.denied_domains) {
      listed = listed || d == entry;
    }
    Require(listed);
  }
  for (const std::string& a : s.network.denied_resolved_addresses) {
    Require(srt::ParseIpNetwork(a).has_value());
  }
  for (const auto* list : {&s.filesystem.deny_read, &s.filesystem.allow_read,
                           &s.filesystem.allow_write, &s.filesystem.deny_write}) {
    for (const srt::PathEntry& e : *list) {
      Require(!e.path.empty() && e.path.find('\0') == std::string::npos);
    }
  }
  // Deterministic: the same text gives the same result.
  srt::Result<srt::LoadedSettings> again = srt::ParseSettings(text, kOrigin);
  Require(again.has_value() && again->settings == s && again->warnings == result->warnings);
  return 0;
}
