// SPDX-License-Identifier: Apache-2.0
// filter/address_guard.h: the resolved-address guard (anti DNS rebinding, upstream-srt.md §5).
// An allowed *name* is resolved once on the host; the guard drops the addresses it must not
// reach and the proxy dials one of the survivors (never the name again). Pure: the caller
// enumerates this host's interface addresses and does the resolution.
//
// Usage:
//   AddressGuard guard(InterfaceAddresses(), denied_resolved_networks);   // once per policy
//   if (!host.is_ip()) {                    // IP-literal destinations are never vetted
//     Vetted v = guard.Vet(answers, matcher, port, IsLocalhostName(host));
//     if (v.dialable.empty()) refuse(v.refusal);   // "resolved to a loopback address"
//   }
//
// Rules, for each resolved address A of a name the matcher allowed, on destination port P:
//   1. A is judged as its canonical form: IPv4-mapped IPv6 is the IPv4 address it maps, for
//      refusals and for carve-outs alike ("::ffff:127.0.0.1" is 127.0.0.1).
//   2. An IPv6 address that carries an IPv4 address is also judged as that IPv4 address, for
//      refusals only (it never inherits a carve-out): IPv4-compatible ::/96 (except :: and
//      ::1), IPv4-translated ::ffff:0:0:0/96, NAT64 64:ff9b::/96, 6to4 2002::/16 (bits 16-47).
//      NAT64 local-use prefixes (64:ff9b:1::/48) are not decoded: their layout is not fixed.
//   3. An IP entry of deniedDomains matching A (or its carried IPv4) on P refuses it:
//      "a deny-listed address". This beats carve-outs and the localhost rule.
//   4. An allowlisted address (DomainMatcher::AddressAllowlisted: an IP entry of
//      allowedDomains for A on P, e.g. `127.0.0.1:3000`) is dialable: an explicit carve-out.
//   5. Otherwise Classify(A) decides; nullopt means dialable.
// Localhost names (`localhost`, `*.localhost`; name_is_localhost) instead: A must be
// loopback (127/8 or ::1 after unmapping; a NAT64 or 6to4 form is not) or it is refused as
// "a non-loopback address"; then rule 3 applies, then rule 4, then only deniedResolvedAddresses
// ("a listed address"). Loopback and "this host's addresses" do not apply to them: that is what
// they are for, and the matcher has already allowed the name.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/address.h"
#include "filter/domain_matcher.h"
#include "filter/ip_set.h"

namespace srt::proxy {

// The refusal classes, exact text (upstream-srt.md §4.9), in the order Classify tests them.
inline constexpr std::string_view kLoopbackClass = "a loopback address";
inline constexpr std::string_view kUnspecifiedClass = "an unspecified address";
inline constexpr std::string_view kLinkLocalClass = "a link-local address";
inline constexpr std::string_view kMulticastClass = "a multicast address";
inline constexpr std::string_view kBroadcastClass = "the broadcast address";
inline constexpr std::string_view kCloudMetadataClass = "a cloud metadata address";
inline constexpr std::string_view kOwnAddressClass = "one of this host's addresses";
// network.deniedResolvedAddresses (upstream's wording for that list).
inline constexpr std::string_view kListedClass = "a listed address";
// An IP-literal entry of network.deniedDomains.
inline constexpr std::string_view kDenyListedClass = "a deny-listed address";
// A localhost name that resolved elsewhere.
inline constexpr std::string_view kNonLoopbackClass = "a non-loopback address";

// The IPv4 address an IPv6 address carries (rule 2 above), or nullopt (also for IPv4 input,
// for :: and ::1, and for IPv4-mapped addresses, which UnmapIpv4 handles).
[[nodiscard]] std::optional<IpAddress> EmbeddedIpv4(const IpAddress& address);

class AddressGuard {
 public:
  // `own`: this host's interface addresses (the caller enumerates them; the guard copies them).
  // `denied`: network.deniedResolvedAddresses; IPv4-mapped networks count as their IPv4 form.
  AddressGuard(const std::vector<IpAddress>& own, const std::vector<IpNetwork>& denied);

  // The refusal class of one resolved address, or nullopt if it may be dialed (before
  // carve-outs and deny-listed literals, which need the matcher). Tests, in order, on the
  // canonical address and then on the IPv4 address it carries:
  //   a loopback address       127.0.0.0/8, ::1
  //   an unspecified address   0.0.0.0/8, ::
  //   a link-local address     169.254.0.0/16, fe80::/10. 169.254.169.254 (the metadata
  //                            endpoint of AWS, GCP, Azure, OCI...) is in here: it is
  //                            link-local first, as upstream reports it
  //   a multicast address      224.0.0.0/4, ff00::/8
  //   the broadcast address    255.255.255.255
  //   a cloud metadata address 100.100.100.200, 168.63.129.16, 192.0.0.192, fd00:ec2::/32,
  //                            fd20:ce::254, fd00:c1::a9fe:a9fe, fd00:42::42,
  //                            fd00:a9fe:a9fe::1, fd00:100::100:200
  //   one of this host's addresses
  //   a listed address         deniedResolvedAddresses
  // Private ranges (10/8, fc00::/7, ...) pass unless listed, as upstream.
  [[nodiscard]] std::optional<std::string_view> Classify(const IpAddress& address) const;

  struct Vetted {
    // The addresses that may be dialed, canonical (IPv4-mapped unmapped), in resolver order,
    // without duplicates.
    std::vector<IpAddress> dialable;
    // When `dialable` is empty and `resolved` was not: "resolved to <class>[ / <class>...]",
    // distinct classes in first-seen order. Empty otherwise (an empty answer is the resolver's
    // "not found", not a refusal).
    std::string refusal;
  };
  // Filters the resolution results of an allowed *name* for destination port `port` (rules at
  // the top of this file). Never call it for an IP-literal destination.
  [[nodiscard]] Vetted Vet(const std::vector<IpAddress>& resolved, const DomainMatcher& matcher,
                           uint16_t port, bool name_is_localhost) const;

 private:
  // The refusal class for one resolved address under the rules above, or nullopt.
  std::optional<std::string_view> Judge(const IpAddress& canonical,
                                        const std::optional<IpAddress>& carried,
                                        const IpAddress& raw, const DomainMatcher& matcher,
                                        uint16_t port, bool name_is_localhost) const;
  bool Listed(const IpAddress& canonical, const std::optional<IpAddress>& carried,
              const IpAddress& raw) const;

  internal::IpNetworkSet own_;
  internal::IpNetworkSet denied_;
};

}  // namespace srt::proxy
