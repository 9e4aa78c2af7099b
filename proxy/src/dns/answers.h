// SPDX-License-Identifier: Apache-2.0
// dns/answers.h: what srt's DNS stub told a sandbox, and the way back from an address to the
// names it was given out for when the sandbox connects to it (transparent capture). Pure; one
// table per sandbox.
//
// An allowed name is answered with its real IPv4 addresses when the stub may show them
// (RecordReal: the caller has vetted them), so that clients which refuse private destinations
// (SSRF guards) see the public address they expect. Capture routes every destination to srt
// anyway, so showing it gives the sandbox no way around the proxy. Several names may share a real
// address (a CDN): the address stands for each of them, and the caller picks among them (on 443,
// the one the TLS server name asks for).
//
// A name with no address the stub may show gets a *synthetic* address from 198.18.0.0/15 (RFC
// 2544 benchmarking space: never a real destination, so such an address always means "the name
// it was handed out for"). Synthetic addresses are handed out in order from 198.18.0.1 and a name
// keeps its address for the sandbox's lifetime (a client that cached an answer must keep reaching
// the same name).
//
// Limits (the sandbox picks the names it asks for): at most `capacity` distinct names, real and
// synthetic together; a name records at most kMaxAddressesPerName real addresses and an address
// stands for at most kMaxNamesPerAddress names. Past a limit nothing new is recorded: RecordReal
// says no (the stub then answers with the synthetic address) and SyntheticFor gives nothing (the
// stub answers SERVFAIL) — never an address reused for another name, which would send one
// name's traffic to another.
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

class DnsAnswers {
 public:
  static constexpr size_t kDefaultCapacity = 65536;
  // The most synthetic addresses the pool holds: 198.18.0.1 .. 198.19.255.254 (2^17 - 2; the
  // first and the last address of the /15 are never handed out). A larger capacity is capped.
  static constexpr size_t kMaxCapacity = (size_t{1} << 17) - 2;
  // Enough for a name whose round-robin answers rotate through a few pools.
  static constexpr size_t kMaxAddressesPerName = 64;
  // Enough for the names of one site behind one CDN address.
  static constexpr size_t kMaxNamesPerAddress = 32;

  explicit DnsAnswers(size_t capacity = kDefaultCapacity);

  // Names are canonical (lower-case, no trailing dot) and taken as given, byte for byte.

  // The synthetic address of `name`, allocating the next free one on first use; nullopt when the
  // table is full.
  [[nodiscard]] std::optional<IpAddress> SyntheticFor(std::string_view name);
  // Records that the stub shows `address` (a real, vetted IPv4 address) for `name`. False when it
  // may not: not IPv4, inside the synthetic pool, or a limit above is reached.
  [[nodiscard]] bool RecordReal(std::string_view name, const IpAddress& address);
  // The names the stub gave `address` out for: a synthetic address's one name, or every name a
  // real address was shown for, in the order they were first shown. Empty for anything else
  // (including IPv4-mapped forms, which the caller unmaps).
  [[nodiscard]] std::vector<std::string> NamesFor(const IpAddress& address) const;
  // True for any address in the synthetic pool, handed out or not.
  [[nodiscard]] static bool InPool(const IpAddress& address);

  // Distinct names answered.
  [[nodiscard]] size_t size() const { return by_name_.size(); }

 private:
  // Lets by_name_ be searched with a string_view, without building a std::string per lookup.
  struct NameHash {
    using is_transparent = void;
    size_t operator()(std::string_view name) const { return std::hash<std::string_view>{}(name); }
  };
  struct NameEntry {
    uint32_t synthetic = 0;  // offset into the pool, 0 = none yet
    std::vector<uint32_t> real;
  };

  // The entry of `name`, created when there is room; nullptr when the table is full.
  NameEntry* Entry(std::string_view name);

  size_t capacity_;
  std::unordered_map<std::string, NameEntry, NameHash, std::equal_to<>> by_name_;
  std::vector<std::string> synthetic_names_;                           // offset - 1 -> name
  std::unordered_map<uint32_t, std::vector<std::string>> real_names_;  // IPv4 -> names
};

}  // namespace srt::proxy
