// SPDX-License-Identifier: Apache-2.0
// IpNetworkSet: networks bucketed by prefix length, each bucket a hash set of masked addresses.
#include "filter/ip_set.h"

#include <algorithm>

#include "base/host.h"

namespace srt::proxy::internal {
namespace {

bool IsMappedPrefix(const IpAddress& a) {
  for (size_t i = 0; i < 10; ++i) {
    if (a.bytes[i] != 0) {
      return false;
    }
  }
  return a.bytes[10] == 0xff && a.bytes[11] == 0xff;
}

}  // namespace

size_t IpNetworkSet::KeyHash::operator()(const Key& k) const {
  // FNV-1a over the bytes and the prefix length.
  uint64_t h = 1469598103934665603ull;
  for (uint8_t b : k.bytes) {
    h = (h ^ b) * 1099511628211ull;
  }
  h = (h ^ k.prefix_length) * 1099511628211ull;
  return static_cast<size_t>(h);
}

IpNetworkSet::Key IpNetworkSet::MakeKey(const IpAddress& address, int prefix_length) {
  Key key{};
  key.prefix_length = static_cast<uint8_t>(prefix_length);
  int remaining = prefix_length;
  for (size_t i = 0; i < key.bytes.size() && remaining > 0; ++i, remaining -= 8) {
    const unsigned mask = remaining >= 8 ? 0xffu : (0xffu << (8 - remaining)) & 0xffu;
    key.bytes[i] = static_cast<uint8_t>(address.bytes[i] & mask);
  }
  return key;
}

void IpNetworkSet::Add(const IpNetwork& network) {
  IpNetwork n = network;
  if (n.address.family == IpAddress::Family::kIpv6 && n.prefix_length >= 96 &&
      IsMappedPrefix(n.address)) {
    n.address = UnmapIpv4(n.address);
    n.prefix_length -= 96;
  }
  const int max = n.address.family == IpAddress::Family::kIpv4 ? 32 : 128;
  n.prefix_length = std::clamp(n.prefix_length, 0, max);
  Family& family = n.address.family == IpAddress::Family::kIpv4 ? v4_ : v6_;
  const auto length = static_cast<uint8_t>(n.prefix_length);
  if (std::find(family.prefix_lengths.begin(), family.prefix_lengths.end(), length) ==
      family.prefix_lengths.end()) {
    family.prefix_lengths.push_back(length);
  }
  if (family.keys.insert(MakeKey(n.address, n.prefix_length)).second) {
    ++size_;
  }
}

bool IpNetworkSet::Contains(const IpAddress& address) const {
  const Family& family = address.family == IpAddress::Family::kIpv4 ? v4_ : v6_;
  for (uint8_t length : family.prefix_lengths) {
    if (family.keys.contains(MakeKey(address, length))) {
      return true;
    }
  }
  return false;
}

}  // namespace srt::proxy::internal
