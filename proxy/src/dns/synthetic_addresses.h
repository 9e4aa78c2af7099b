// SPDX-License-Identifier: Apache-2.0
// dns/synthetic_addresses.h: the addresses srt's DNS stub hands out inside a sandbox, one per
// allowed name, and the way back from such an address to its name when the sandbox connects to
// it (transparent capture). Pure; one table per sandbox.
//
// The pool is 198.18.0.0/15 (RFC 2544 benchmarking space: never a real destination, so an address
// from it always means "a name the stub answered"). Addresses are handed out in order from
// 198.18.0.1 and a name keeps its address for the sandbox's lifetime (a client that cached an
// answer must keep reaching the same name). The table holds at most `capacity` names; when it is
// full, no new name gets an address (the stub answers SERVFAIL) — never an address reused for
// another name, which would send one name's traffic to another.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/address.h"

namespace srt::proxy {

// 198.18.0.0/15.
[[nodiscard]] IpNetwork SyntheticPool();

class SyntheticAddresses {
 public:
  static constexpr size_t kDefaultCapacity = 65536;
  // The most names the pool can hold: 198.18.0.1 .. 198.19.255.254 (2^17 - 2 addresses; the
  // first and the last address of the /15 are never handed out). A larger capacity is capped.
  static constexpr size_t kMaxCapacity = (size_t{1} << 17) - 2;

  explicit SyntheticAddresses(size_t capacity = kDefaultCapacity);

  // The address of `name` (canonical: lower-case, no trailing dot; taken as given, byte for
  // byte), allocating the next free one on first use; nullopt when the table is full.
  [[nodiscard]] std::optional<IpAddress> AddressFor(std::string_view name);
  // The name an address stands for; nullopt for addresses never handed out (including every
  // address outside the pool, and IPv4-mapped forms of pool addresses, which the caller unmaps).
  [[nodiscard]] std::optional<std::string> NameFor(const IpAddress& address) const;
  // True for any address in the pool, handed out or not.
  [[nodiscard]] static bool InPool(const IpAddress& address);

  [[nodiscard]] size_t size() const { return names_.size(); }

 private:
  // Lets by_name_ be searched with a string_view, without building a std::string per lookup.
  struct NameHash {
    using is_transparent = void;
    size_t operator()(std::string_view name) const { return std::hash<std::string_view>{}(name); }
  };

  size_t capacity_;
  std::unordered_map<std::string, uint32_t, NameHash, std::equal_to<>> by_name_;  // -> offset
  std::vector<std::string> names_;  // offset - 1 -> name
};

}  // namespace srt::proxy
