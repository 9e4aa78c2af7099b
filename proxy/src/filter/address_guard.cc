// SPDX-License-Identifier: Apache-2.0
// AddressGuard: address classes as fixed tables of networks, plus the host's own and listed sets.
#include "filter/address_guard.h"

#include <algorithm>
#include <array>

#include "base/host.h"

namespace srt::proxy {
namespace {

// The tables below are constants that the unit tests pin class by class. Should one ever fail
// to parse, it becomes 0.0.0.0/0: the guard then fails closed (refuses every IPv4 address).
IpNetwork Net(std::string_view text) {
  Result<IpNetwork> n = ParseIpNetwork(text);
  return n.has_value() ? *n : IpNetwork{};
}

struct ClassTable {
  std::string_view name;
  std::vector<IpNetwork> networks;
};

// Classify's order; each class lists its IPv4 and IPv6 networks.
const std::vector<ClassTable>& Classes() {
  static const std::vector<ClassTable> classes = {
      {kLoopbackClass, {Net("127.0.0.0/8"), Net("::1/128")}},
      {kUnspecifiedClass, {Net("0.0.0.0/8"), Net("::/128")}},
      {kLinkLocalClass, {Net("169.254.0.0/16"), Net("fe80::/10")}},
      {kMulticastClass, {Net("224.0.0.0/4"), Net("ff00::/8")}},
      {kBroadcastClass, {Net("255.255.255.255/32")}},
      {kCloudMetadataClass,
       {Net("100.100.100.200"), Net("168.63.129.16"), Net("192.0.0.192"), Net("fd00:ec2::/32"),
        Net("fd20:ce::254"), Net("fd00:c1::a9fe:a9fe"), Net("fd00:42::42"),
        Net("fd00:a9fe:a9fe::1"), Net("fd00:100::100:200")}},
  };
  return classes;
}

bool AllZero(const IpAddress& a, size_t from, size_t to) {
  for (size_t i = from; i < to; ++i) {
    if (a.bytes[i] != 0) {
      return false;
    }
  }
  return true;
}

IpAddress Ipv4At(const IpAddress& a, size_t offset) {
  IpAddress v4;
  v4.family = IpAddress::Family::kIpv4;
  for (size_t i = 0; i < 4; ++i) {
    v4.bytes[i] = a.bytes[offset + i];
  }
  return v4;
}

}  // namespace

std::optional<IpAddress> EmbeddedIpv4(const IpAddress& a) {
  if (a.family != IpAddress::Family::kIpv6) {
    return std::nullopt;
  }
  // IPv4-compatible ::a.b.c.d (RFC 4291 §2.5.5.1, deprecated), except :: and ::1.
  if (AllZero(a, 0, 12)) {
    if (AllZero(a, 12, 15) && a.bytes[15] <= 1) {
      return std::nullopt;
    }
    return Ipv4At(a, 12);
  }
  // IPv4-translated ::ffff:0:a.b.c.d (RFC 2765 §2.1).
  if (AllZero(a, 0, 8) && a.bytes[8] == 0xff && a.bytes[9] == 0xff && a.bytes[10] == 0 &&
      a.bytes[11] == 0) {
    return Ipv4At(a, 12);
  }
  // NAT64 well-known prefix 64:ff9b::/96 (RFC 6052 §2.1).
  if (a.bytes[0] == 0x00 && a.bytes[1] == 0x64 && a.bytes[2] == 0xff && a.bytes[3] == 0x9b &&
      AllZero(a, 4, 12)) {
    return Ipv4At(a, 12);
  }
  // 6to4 2002:V4ADDR::/48 (RFC 3056 §2).
  if (a.bytes[0] == 0x20 && a.bytes[1] == 0x02) {
    return Ipv4At(a, 2);
  }
  return std::nullopt;
}

AddressGuard::AddressGuard(const std::vector<IpAddress>& own,
                           const std::vector<IpNetwork>& denied) {
  for (const IpAddress& a : own) {
    const IpAddress canonical = UnmapIpv4(a);
    own_.Add(IpNetwork{canonical, canonical.family == IpAddress::Family::kIpv4 ? 32 : 128});
  }
  for (const IpNetwork& n : denied) {
    denied_.Add(n);
  }
}

bool AddressGuard::Listed(const IpAddress& canonical, const std::optional<IpAddress>& carried,
                          const IpAddress& raw) const {
  // The raw IPv6 spelling too, for an IPv6 network that covers the mapped range.
  return denied_.Contains(canonical) || (carried && denied_.Contains(*carried)) ||
         denied_.Contains(raw);
}

std::optional<std::string_view> AddressGuard::Classify(const IpAddress& address) const {
  const IpAddress canonical = UnmapIpv4(address);
  const std::optional<IpAddress> carried = EmbeddedIpv4(canonical);
  // Class by class, each on both forms: the most specific built-in class wins the name.
  for (const ClassTable& c : Classes()) {
    for (const IpNetwork& n : c.networks) {
      if (Contains(n, canonical) || (carried && Contains(n, *carried))) {
        return c.name;
      }
    }
  }
  if (own_.Contains(canonical) || (carried && own_.Contains(*carried))) {
    return kOwnAddressClass;
  }
  if (Listed(canonical, carried, address)) {
    return kListedClass;
  }
  return std::nullopt;
}

std::optional<std::string_view> AddressGuard::Judge(const IpAddress& canonical,
                                                    const std::optional<IpAddress>& carried,
                                                    const IpAddress& raw,
                                                    const DomainMatcher& matcher, uint16_t port,
                                                    bool name_is_localhost) const {
  const bool deny_listed = matcher.AddressDenyListed(canonical, port) ||
                           (carried && matcher.AddressDenyListed(*carried, port));
  if (name_is_localhost) {
    if (!IsLoopbackAddress(canonical)) {
      return kNonLoopbackClass;
    }
    if (deny_listed) {
      return kDenyListedClass;
    }
    if (matcher.AddressAllowlisted(canonical, port)) {
      return std::nullopt;
    }
    if (Listed(canonical, carried, raw)) {
      return kListedClass;
    }
    return std::nullopt;
  }
  if (deny_listed) {
    return kDenyListedClass;
  }
  // A carve-out binds exactly the address it names, never a form carrying it.
  if (matcher.AddressAllowlisted(canonical, port)) {
    return std::nullopt;
  }
  return Classify(raw);
}

AddressGuard::Vetted AddressGuard::Vet(const std::vector<IpAddress>& resolved,
                                       const DomainMatcher& matcher, uint16_t port,
                                       bool name_is_localhost) const {
  Vetted out;
  std::vector<std::string_view> classes;
  for (const IpAddress& raw : resolved) {
    const IpAddress canonical = UnmapIpv4(raw);
    const std::optional<IpAddress> carried = EmbeddedIpv4(canonical);
    std::optional<std::string_view> refused =
        Judge(canonical, carried, raw, matcher, port, name_is_localhost);
    if (refused) {
      if (std::find(classes.begin(), classes.end(), *refused) == classes.end()) {
        classes.push_back(*refused);
      }
      continue;
    }
    if (std::find(out.dialable.begin(), out.dialable.end(), canonical) == out.dialable.end()) {
      out.dialable.push_back(canonical);
    }
  }
  if (out.dialable.empty() && !classes.empty()) {
    out.refusal = "resolved to ";
    for (size_t i = 0; i < classes.size(); ++i) {
      if (i > 0) {
        out.refusal += " / ";
      }
      out.refusal += classes[i];
    }
  }
  return out;
}

}  // namespace srt::proxy
