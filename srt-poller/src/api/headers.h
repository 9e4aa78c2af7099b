// SPDX-License-Identifier: Apache-2.0
// api/headers.h: an ordered list of HTTP header fields with case-insensitive lookup.
//
// Field names compare case-insensitively (RFC 9110 §5.1); values are kept as received, with
// surrounding whitespace trimmed. Pure: no I/O.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace srt::poller {

class Headers {
 public:
  Headers() = default;
  Headers(std::initializer_list<std::pair<std::string, std::string>> fields);

  // Appends a field (a repeated name is kept as a second field).
  void Add(std::string_view name, std::string_view value);
  // Replaces every field named `name` by one field.
  void Set(std::string_view name, std::string_view value);
  void Remove(std::string_view name);
  // The first field named `name` (case-insensitive), or nullopt.
  std::optional<std::string_view> Get(std::string_view name) const;
  bool Has(std::string_view name) const { return Get(name).has_value(); }

  const std::vector<std::pair<std::string, std::string>>& fields() const { return fields_; }
  size_t size() const { return fields_.size(); }

 private:
  std::vector<std::pair<std::string, std::string>> fields_;
};

// Percent-encodes everything except RFC 3986 §2.3 unreserved characters, for query values.
std::string UrlEncode(std::string_view s);

}  // namespace srt::poller
