// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: the domain pattern grammar and the IP/CIDR parser on arbitrary bytes.
// Properties: the canonical spelling of an accepted pattern parses back to the same pattern,
// hosts are lower-case, `*` is only ever accepted for deniedDomains, errors quote the input and
// carry upstream's text, and accepted IP literals round-trip through their canonical form.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "base/address.h"
#include "base/domain_pattern.h"

namespace {

using srt::DomainPattern;
using srt::PatternList;

void Require(bool condition) {
  if (!condition) {
    std::abort();
  }
}

void CheckPattern(std::string_view text, PatternList list) {
  srt::Result<DomainPattern> p = srt::ParseDomainPattern(text, list);
  if (!p.has_value()) {
    Require(p.error().code() == srt::Errc::kInvalidArgument);
    Require(p.error().message().find("Invalid domain pattern. Must be") != std::string::npos);
    return;
  }
  for (char c : p->host) {
    Require(!(c >= 'A' && c <= 'Z'));
  }
  Require(!p->port || *p->port != 0);
  switch (p->kind) {
    case DomainPattern::Kind::kAny:
      Require(list == PatternList::kDeny && p->host.empty());
      break;
    case DomainPattern::Kind::kWildcard:
      Require(p->host.find('.') != std::string::npos && p->host.find('*') == std::string::npos);
      break;
    case DomainPattern::Kind::kExact:
      Require(p->host == "localhost" || p->host.find('.') != std::string::npos);
      Require(p->host.find('*') == std::string::npos);
      break;
    case DomainPattern::Kind::kIpv4:
      Require(srt::ParseIpv4(p->host).has_value());
      break;
    case DomainPattern::Kind::kIpv6:
      Require(srt::ParseIpv6(p->host).has_value());
      break;
  }
  srt::Result<DomainPattern> again = srt::ParseDomainPattern(srt::FormatDomainPattern(*p), list);
  Require(again.has_value() && *again == *p);
}

void CheckNetwork(std::string_view text) {
  srt::Result<srt::IpNetwork> n = srt::ParseIpNetwork(text);
  if (!n.has_value()) {
    Require(n.error().message().find("Invalid IP address or CIDR range.") != std::string::npos);
    return;
  }
  const bool v4 = n->address.family == srt::IpAddress::Family::kIpv4;
  Require(n->prefix_length >= 0 && n->prefix_length <= (v4 ? 32 : 128));
  Require(srt::Contains(*n, n->address));
  std::optional<srt::IpAddress> again = srt::ParseIpAddress(srt::FormatIpAddress(n->address));
  Require(again.has_value() && *again == n->address);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  CheckPattern(text, PatternList::kAllow);
  CheckPattern(text, PatternList::kDeny);
  CheckNetwork(text);
  return 0;
}
