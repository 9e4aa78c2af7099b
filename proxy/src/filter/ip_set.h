// SPDX-License-Identifier: Apache-2.0
// filter/ip_set.h (internal): a set of IP networks with lookups that cost one hash probe per
// distinct prefix length in the set, not one comparison per network. Pure.
#pragma once

#include <array>
#include <cstdint>
#include <unordered_set>
#include <vector>

#include "base/address.h"

namespace srt::proxy::internal {

class IpNetworkSet {
 public:
  // Adds a network; IPv4-mapped IPv6 networks of prefix >= 96 are stored as the IPv4 network
  // they map, so "::ffff:10.0.0.0/104" and "10.0.0.0/8" are the same entry.
  void Add(const IpNetwork& network);
  // True if some network of the same family contains `address` (not unmapped here).
  bool Contains(const IpAddress& address) const;
  bool empty() const { return size_ == 0; }

 private:
  struct Key {
    std::array<uint8_t, 16> bytes;  // address with the host bits cleared
    uint8_t prefix_length;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const;
  };
  struct Family {
    std::vector<uint8_t> prefix_lengths;  // distinct, in insertion order
    std::unordered_set<Key, KeyHash> keys;
  };

  static Key MakeKey(const IpAddress& address, int prefix_length);

  Family v4_;
  Family v6_;
  size_t size_ = 0;
};

}  // namespace srt::proxy::internal
