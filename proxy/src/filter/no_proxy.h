// SPDX-License-Identifier: Apache-2.0
// filter/no_proxy.h: which destinations bypass network.parentProxy (NO_PROXY / no_proxy /
// parentProxy.noProxy), with Go's golang.org/x/net/http/httpproxy semantics. Pure.
//
// Usage:
//   NoProxy bypass = NoProxy::Parse(settings.parent_proxy.no_proxy);   // never fails
//   if (bypass.Bypass(host, port)) DialDirect(...); else DialViaParent(...);
//
// List: entries separated by commas and/or whitespace, case-insensitive; bad entries ignored.
//   `*`                    every destination
//   `example.com`          example.com and every subdomain (Go: "foo.com" matches "foo.com" and
//                          "bar.foo.com")
//   `.example.com`,        subdomains only, not example.com itself (Go: ".y.com" matches "x.y.com"
//   `*.example.com`        but not "y.com")
//   `name:port`            the same, on that destination port only
//   `1.2.3.4`, `::1`,      that address (IPv4-mapped IPv6 is its IPv4 address), any port or the
//   `1.2.3.4:80`, `[::1]:80`  one given
//   `10.0.0.0/8`, `fc00::/7`  any address in the range, any port
// Name entries match names only and address entries addresses only (Go would also match a
// name suffix against an IP literal's text: "2.3" against "10.1.2.3"; that is dropped here).
// Loopback always bypasses, whatever the list: `localhost`, `*.localhost`, 127.0.0.0/8, ::1.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/address.h"
#include "base/host.h"
#include "filter/ip_set.h"

namespace srt::proxy {

class NoProxy {
 public:
  // Parses a NO_PROXY list; never fails (entries that mean nothing are skipped, as in Go).
  [[nodiscard]] static NoProxy Parse(std::string_view list);

  // True if a connection to (host, port) goes direct instead of through the parent proxy.
  [[nodiscard]] bool Bypass(const Host& host, uint16_t port) const;

 private:
  struct DomainEntry {
    std::string suffix;  // ".example.com"
    bool match_apex;     // also "example.com" itself
    std::optional<uint16_t> port;
  };
  struct AddressEntry {
    IpAddress address;  // canonical (unmapped)
    std::optional<uint16_t> port;
  };

  bool all_ = false;
  std::vector<DomainEntry> domains_;
  std::vector<AddressEntry> addresses_;
  internal::IpNetworkSet networks_;
};

}  // namespace srt::proxy
