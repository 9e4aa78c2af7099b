// SPDX-License-Identifier: Apache-2.0
// dns/synthetic_addresses.cc: the DNS stub's name <-> 198.18.0.0/15 address table. Pure.
#include "dns/synthetic_addresses.h"

#include <algorithm>

namespace srt::proxy {
namespace {

// 198.18.0.0 as a host-order number; the pool is the 2^17 addresses from there (RFC 2544 §C.2.2).
constexpr uint32_t kPoolBase = (198u << 24) | (18u << 16);
constexpr int kPoolPrefixLength = 15;

IpAddress Ipv4(uint32_t value) {
  IpAddress out;
  out.family = IpAddress::Family::kIpv4;
  out.bytes[0] = static_cast<uint8_t>(value >> 24);
  out.bytes[1] = static_cast<uint8_t>(value >> 16);
  out.bytes[2] = static_cast<uint8_t>(value >> 8);
  out.bytes[3] = static_cast<uint8_t>(value);
  return out;
}

uint32_t Ipv4Value(const IpAddress& address) {
  return (uint32_t{address.bytes[0]} << 24) | (uint32_t{address.bytes[1]} << 16) |
         (uint32_t{address.bytes[2]} << 8) | uint32_t{address.bytes[3]};
}

}  // namespace

IpNetwork SyntheticPool() { return IpNetwork{Ipv4(kPoolBase), kPoolPrefixLength}; }

SyntheticAddresses::SyntheticAddresses(size_t capacity)
    : capacity_(std::min(capacity, kMaxCapacity)) {}

std::optional<IpAddress> SyntheticAddresses::AddressFor(std::string_view name) {
  if (auto it = by_name_.find(name); it != by_name_.end()) {
    return Ipv4(kPoolBase + it->second);
  }
  if (names_.size() >= capacity_) {
    return std::nullopt;  // full: never recycle an address another name may still be using
  }
  // Offsets start at 1: 198.18.0.0 is never handed out.
  const auto offset = static_cast<uint32_t>(names_.size() + 1);
  names_.emplace_back(name);
  by_name_.emplace(names_.back(), offset);
  return Ipv4(kPoolBase + offset);
}

std::optional<std::string> SyntheticAddresses::NameFor(const IpAddress& address) const {
  if (!InPool(address)) {
    return std::nullopt;
  }
  const uint32_t offset = Ipv4Value(address) - kPoolBase;
  if (offset == 0 || offset > names_.size()) {
    return std::nullopt;
  }
  return names_[offset - 1];
}

bool SyntheticAddresses::InPool(const IpAddress& address) {
  return Contains(SyntheticPool(), address);
}

}  // namespace srt::proxy
