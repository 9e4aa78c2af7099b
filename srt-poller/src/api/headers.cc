// SPDX-License-Identifier: Apache-2.0
// api/headers.cc: case-insensitive header list and query-value encoding.
#include "api/headers.h"

#include <algorithm>

#include "base/ascii.h"

namespace srt::poller {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() &&
         (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' || s.back() == '\n')) {
    s.remove_suffix(1);
  }
  return s;
}

}  // namespace

Headers::Headers(std::initializer_list<std::pair<std::string, std::string>> fields) {
  for (const auto& [name, value] : fields) Add(name, value);
}

void Headers::Add(std::string_view name, std::string_view value) {
  fields_.emplace_back(std::string(Trim(name)), std::string(Trim(value)));
}

void Headers::Set(std::string_view name, std::string_view value) {
  Remove(name);
  Add(name, value);
}

void Headers::Remove(std::string_view name) {
  std::erase_if(fields_, [&](const auto& f) { return ascii::EqualsIgnoreCase(f.first, name); });
}

std::optional<std::string_view> Headers::Get(std::string_view name) const {
  for (const auto& f : fields_) {
    if (ascii::EqualsIgnoreCase(f.first, name)) return std::string_view(f.second);
  }
  return std::nullopt;
}

std::string UrlEncode(std::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if ((u >= 'A' && u <= 'Z') || (u >= 'a' && u <= 'z') || (u >= '0' && u <= '9') || u == '-' ||
        u == '.' || u == '_' || u == '~') {
      out.push_back(c);
    } else {
      out.push_back('%');
      out.push_back(kHex[u >> 4]);
      out.push_back(kHex[u & 0xF]);
    }
  }
  return out;
}

}  // namespace srt::poller
