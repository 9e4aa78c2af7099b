// SPDX-License-Identifier: Apache-2.0
// dns/answers.cc: the DNS stub's table of answers: names <-> real and synthetic addresses. Pure.
#include "dns/answers.h"

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

DnsAnswers::DnsAnswers(size_t capacity) : capacity_(std::min(capacity, kMaxCapacity)) {}

DnsAnswers::NameEntry* DnsAnswers::Entry(std::string_view name) {
  if (auto it = by_name_.find(name); it != by_name_.end()) return &it->second;
  if (by_name_.size() >= capacity_) return nullptr;
  return &by_name_.emplace(std::string(name), NameEntry{}).first->second;
}

std::optional<IpAddress> DnsAnswers::SyntheticFor(std::string_view name) {
  NameEntry* entry = Entry(name);
  if (entry == nullptr) return std::nullopt;  // full: never recycle another name's address
  if (entry->synthetic == 0) {
    // Offsets start at 1: 198.18.0.0 is never handed out. There are at most capacity_ <=
    // kMaxCapacity names, so the pool cannot run out before the table does.
    synthetic_names_.emplace_back(name);
    entry->synthetic = static_cast<uint32_t>(synthetic_names_.size());
  }
  return Ipv4(kPoolBase + entry->synthetic);
}

bool DnsAnswers::RecordReal(std::string_view name, const IpAddress& address) {
  if (address.family != IpAddress::Family::kIpv4 || InPool(address)) return false;
  const uint32_t value = Ipv4Value(address);
  // Check every limit before changing anything: a refusal leaves the table as it was.
  auto existing = by_name_.find(name);
  if (existing != by_name_.end()) {
    const std::vector<uint32_t>& real = existing->second.real;
    if (std::find(real.begin(), real.end(), value) != real.end()) return true;  // shown before
    if (real.size() >= kMaxAddressesPerName) return false;
  } else if (by_name_.size() >= capacity_) {
    return false;
  }
  std::vector<std::string>& names = real_names_[value];
  if (names.size() >= kMaxNamesPerAddress) return false;
  NameEntry* entry = Entry(name);  // exists or has room: checked above
  entry->real.push_back(value);
  names.emplace_back(name);
  return true;
}

std::vector<std::string> DnsAnswers::NamesFor(const IpAddress& address) const {
  if (address.family != IpAddress::Family::kIpv4) return {};
  const uint32_t value = Ipv4Value(address);
  if (InPool(address)) {
    const uint32_t offset = value - kPoolBase;
    if (offset == 0 || offset > synthetic_names_.size()) return {};
    return {synthetic_names_[offset - 1]};
  }
  auto it = real_names_.find(value);
  return it == real_names_.end() ? std::vector<std::string>{} : it->second;
}

bool DnsAnswers::InPool(const IpAddress& address) { return Contains(SyntheticPool(), address); }

}  // namespace srt::proxy
