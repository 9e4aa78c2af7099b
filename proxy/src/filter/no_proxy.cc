// SPDX-License-Identifier: Apache-2.0
// NoProxy: Go httpproxy's NO_PROXY parser and matcher, over canonical hosts.
#include "filter/no_proxy.h"

#include "base/ascii.h"

namespace srt::proxy {
namespace {

bool IsSeparator(char c) {
  return c == ',' || c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

}  // namespace

NoProxy NoProxy::Parse(std::string_view list) {
  NoProxy out;
  size_t i = 0;
  while (i < list.size()) {
    while (i < list.size() && IsSeparator(list[i])) {
      ++i;
    }
    size_t end = i;
    while (end < list.size() && !IsSeparator(list[end])) {
      ++end;
    }
    const std::string entry = ascii::ToLower(list.substr(i, end - i));
    i = end;
    if (entry.empty()) {
      continue;
    }
    if (entry == "*") {
      out.all_ = true;
      continue;
    }
    // Go tries a CIDR, then a bare IP, then host:port.
    if (entry.find('/') != std::string::npos) {
      Result<IpNetwork> network = ParseIpNetwork(entry);
      if (network.has_value()) {
        out.networks_.Add(*network);
      }
      continue;
    }
    if (std::optional<IpAddress> ip = ParseIpAddress(entry)) {
      out.addresses_.push_back({UnmapIpv4(*ip), std::nullopt});
      continue;
    }
    std::string_view host = entry;
    std::optional<uint16_t> port;
    const size_t colon = entry.rfind(':');
    if (colon != std::string::npos) {
      port = ascii::ParsePort(std::string_view(entry).substr(colon + 1),
                              ascii::LeadingZeros::kAccepted);
      if (!port) {
        continue;  // "example.com:", "example.com:http", "[::1]:0": means nothing
      }
      host = std::string_view(entry).substr(0, colon);
      if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
        host = host.substr(1, host.size() - 2);
      }
    }
    if (host.empty()) {
      continue;
    }
    if (std::optional<IpAddress> ip = ParseIpAddress(host)) {
      out.addresses_.push_back({UnmapIpv4(*ip), port});
      continue;
    }
    if (host.find(':') != std::string_view::npos || host.find('[') != std::string_view::npos) {
      continue;  // neither an address nor a name
    }
    if (host.starts_with("*.")) {
      host.remove_prefix(1);
    }
    DomainEntry domain;
    domain.match_apex = host.front() != '.';
    domain.suffix = domain.match_apex ? "." + std::string(host) : std::string(host);
    if (domain.suffix.size() > 1 && domain.suffix.back() == '.') {
      domain.suffix.pop_back();  // "example.com." is example.com, as requests are
    }
    domain.port = port;
    out.domains_.push_back(std::move(domain));
  }
  return out;
}

bool NoProxy::Bypass(const Host& host, uint16_t port) const {
  if (host.is_ip() ? IsLoopbackAddress(host.address) : IsLocalhostName(host)) {
    return true;
  }
  if (all_) {
    return true;
  }
  if (host.is_ip()) {
    if (networks_.Contains(host.address)) {
      return true;
    }
    for (const AddressEntry& e : addresses_) {
      if (e.address == host.address && (!e.port || *e.port == port)) {
        return true;
      }
    }
    return false;
  }
  const std::string_view name = host.text;
  for (const DomainEntry& e : domains_) {
    const bool suffix = name.size() > e.suffix.size() && name.ends_with(e.suffix);
    const bool apex = e.match_apex && name == std::string_view(e.suffix).substr(1);
    if ((suffix || apex) && (!e.port || *e.port == port)) {
      return true;
    }
  }
  return false;
}

}  // namespace srt::proxy
