// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: host canonicalisation, and the matcher, guard and NO_PROXY code behind it,
// on arbitrary bytes. Properties: a rejected host is a kDenied "malformed host" error; an
// accepted one is canonical (lower-case name of [a-z0-9._-] without empty labels, or an address
// whose text is its own serialisation, never IPv4-mapped) and a fixed point; the matcher's raw
// and canonical overloads agree, a denial always carries a reason, and an IP literal is never
// matched by a name or wildcard entry; the guard and NO_PROXY parser never crash.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

#include "base/address.h"
#include "base/host.h"
#include "filter/address_guard.h"
#include "filter/domain_matcher.h"
#include "filter/no_proxy.h"
#include "support/network_policy_for.h"

namespace {

using srt::Host;

void Require(bool condition) {
  if (!condition) {
    std::abort();
  }
}

const srt::proxy::DomainMatcher& Matcher() {
  static const srt::proxy::DomainMatcher matcher =
      srt::testing::DomainMatcherFor(
          {"example.com", "*.example.com:443", "127.0.0.1:3000", "[::1]", "*.co.uk", "localhost",
           "10.0.0.0"},
          {"evil.example.com", "*:25", "[::ffff:10.0.0.2]", "169.254.169.254"},
          {{"evil.example.com", "no <evil>\n"}})
          .value();
  return matcher;
}

const srt::proxy::AddressGuard& Guard() {
  static const srt::proxy::AddressGuard guard(
      {srt::ParseIpAddress("192.168.7.23").value(), srt::ParseIpAddress("2001:db8:7::23").value()},
      {srt::ParseIpNetwork("10.0.0.0/8").value(), srt::ParseIpNetwork("fc00::/7").value()});
  return guard;
}

void CheckName(const Host& h) {
  Require(!h.text.empty() && h.text.size() <= srt::kMaxHostLength);
  Require(h.text.front() != '.' && h.text.back() != '.');
  Require(h.text.find("..") == std::string::npos);
  for (char c : h.text) {
    Require((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '_');
  }
  Require(h.address == srt::IpAddress{});
}

void CheckAddress(const Host& h) {
  const bool v4 = h.kind == Host::Kind::kIpv4;
  Require(h.address.family == (v4 ? srt::IpAddress::Family::kIpv4 : srt::IpAddress::Family::kIpv6));
  Require(srt::FormatHostAddress(h.address) == h.text);
  Require(srt::UnmapIpv4(h.address) == h.address);
  std::optional<srt::IpAddress> parsed = srt::ParseIpAddress(h.text);
  Require(parsed.has_value() && *parsed == h.address);
  Require(srt::HostFromAddress(h.address) == h);
  // The guard judges any address without crashing, and its refusal text has the right shape.
  (void)Guard().Classify(h.address);
  (void)srt::proxy::EmbeddedIpv4(h.address);
  srt::proxy::AddressGuard::Vetted v =
      Guard().Vet({h.address, h.address}, Matcher(), 443, /*name_is_localhost=*/false);
  Require(v.dialable.empty() == !v.refusal.empty());
  Require(v.dialable.size() <= 1);
  Require(v.refusal.empty() || v.refusal.starts_with("resolved to "));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view raw(reinterpret_cast<const char*>(data), size);

  srt::Result<Host> host = srt::CanonicalizeHost(raw);
  const srt::proxy::Decision raw_decision = Matcher().Evaluate(raw, 443);
  if (!host.has_value()) {
    Require(host.error().code() == srt::Errc::kDenied);
    Require(host.error().message().starts_with("malformed host: '"));
    Require(!raw_decision.allowed && raw_decision.reason == srt::kMalformedHost);
  } else {
    if (host->kind == Host::Kind::kName) {
      CheckName(*host);
    } else {
      CheckAddress(*host);
    }
    // Canonical form is a fixed point.
    const std::string again = host->kind == Host::Kind::kIpv6 ? "[" + host->text + "]" : host->text;
    srt::Result<Host> host2 = srt::CanonicalizeHost(again);
    Require(host2.has_value() && *host2 == *host);

    const srt::proxy::Decision d = Matcher().Evaluate(*host, 443);
    Require(d.allowed == raw_decision.allowed && d.reason == raw_decision.reason &&
            d.matched_entry == raw_decision.matched_entry);
    Require(d.allowed == d.reason.empty());
    for (char c : d.reason) {
      const auto u = static_cast<unsigned char>(c);
      Require(u >= 0x20 && u < 0x7f && c != '<' && c != '>');
    }
    if (host->is_ip() && d.allowed) {
      // An address is allowed by an address entry, or by localhost's for its own two addresses.
      Require(
          d.matched_entry == "127.0.0.1:3000" || d.matched_entry == "[::1]" ||
          d.matched_entry == "10.0.0.0" ||
          (d.matched_entry == "localhost" && (host->text == "127.0.0.1" || host->text == "::1")));
    }
    Require(!Matcher().Evaluate(*host, 25).allowed);  // `*:25`
    (void)Matcher().NameMayResolve(host->text);
    (void)srt::IsLocalhostName(*host);
    (void)srt::FormatAuthority(*host, 443);
  }

  // The same bytes as a NO_PROXY list and as a deny reason.
  const srt::proxy::NoProxy no_proxy = srt::proxy::NoProxy::Parse(raw);
  if (host.has_value()) {
    (void)no_proxy.Bypass(*host, 443);
  }
  for (const char* probe : {"example.com", "10.1.2.3", "[2001:db8::1]", "localhost"}) {
    srt::Result<Host> p = srt::CanonicalizeHost(probe);
    Require(p.has_value());
    const bool bypass = no_proxy.Bypass(*p, 8080);
    if (std::string_view(probe) == "localhost") {
      Require(bypass);
    }
  }
  const std::string reason = srt::proxy::SanitizeDenyReason(raw);
  for (char c : reason) {
    const auto u = static_cast<unsigned char>(c);
    Require(u >= 0x20 && u < 0x7f && c != '<' && c != '>');
  }
  return 0;
}
