// SPDX-License-Identifier: Apache-2.0
// DomainMatcher: hash tables for exact names, wildcard bases and IP literals, one per list.
#include "filter/domain_matcher.h"

#include <algorithm>

#include "base/domain_pattern.h"
#include "base/strings.h"

namespace srt::proxy {
namespace {

// Appends "?" per UTF-16 code unit of the UTF-8 sequence at text[i], returns its byte length.
size_t ReplaceNonAscii(std::string_view text, size_t i, std::string& out) {
  const size_t length = strings::Utf8SequenceLength(text, i);
  if (length == 0) {
    out += '?';
    return 1;
  }
  out += length == 4 ? "??" : "?";
  return length;
}

}  // namespace

std::string SanitizeDenyReason(std::string_view reason) {
  std::string out;
  out.reserve(reason.size());
  for (size_t i = 0; i < reason.size();) {
    const auto u = static_cast<unsigned char>(reason[i]);
    if (u < 0x20 || u == 0x7f) {
      out += ' ';
      ++i;
    } else if (u == '<' || u == '>') {
      ++i;
    } else if (u >= 0x80) {
      i += ReplaceNonAscii(reason, i, out);
    } else {
      out += reason[i];
      ++i;
    }
  }
  return out;
}

void DomainMatcher::Slot::Add(std::optional<uint16_t> port, size_t index) {
  if (!port) {
    any_port = std::min(any_port, index);
    return;
  }
  auto [it, inserted] = by_port.emplace(*port, index);
  if (!inserted) {
    it->second = std::min(it->second, index);
  }
}

size_t DomainMatcher::Slot::Find(uint16_t port) const {
  size_t best = any_port;
  if (!by_port.empty()) {
    auto it = by_port.find(port);
    if (it != by_port.end()) {
      best = std::min(best, it->second);
    }
  }
  return best;
}

void DomainMatcher::AddEntries(Table& table, const std::vector<DomainRule>& rules) {
  for (size_t index = 0; index < rules.size(); ++index) {
    const DomainPattern& pattern = rules[index].pattern;
    table.entries.push_back(rules[index].entry);
    switch (pattern.kind) {
      case DomainPattern::Kind::kAny:
        table.all.Add(pattern.port, index);
        break;
      case DomainPattern::Kind::kWildcard:
        table.wildcards[pattern.host].Add(pattern.port, index);
        break;
      case DomainPattern::Kind::kExact:
      case DomainPattern::Kind::kIpv4:
      case DomainPattern::Kind::kIpv6: {
        // The entry's host goes through the request canonicaliser, so that both sides agree on
        // what an address is ("127.1", "[::ffff:10.0.0.1]"). An entry it rejects can match no
        // request (requests are canonicalised the same way) and is left out.
        std::string host =
            pattern.kind == DomainPattern::Kind::kIpv6 ? "[" + pattern.host + "]" : pattern.host;
        Result<Host> canonical = CanonicalizeHost(host);
        if (!canonical.has_value()) {
          break;
        }
        SlotMap& map = canonical->is_ip() ? table.ips : table.names;
        map[canonical->text].Add(pattern.port, index);
        break;
      }
    }
  }
}

DomainMatcher DomainMatcher::Build(const std::vector<DomainRule>& allowed,
                                   const std::vector<DomainRule>& denied) {
  DomainMatcher m;
  AddEntries(m.allow_, allowed);
  AddEntries(m.deny_, denied);
  m.deny_reasons_.reserve(denied.size());
  for (const DomainRule& rule : denied) {
    m.deny_reasons_.push_back(SanitizeDenyReason(rule.reason));  // "" keeps the default
  }
  std::vector<uint16_t> ports = {80, 443};
  for (const DomainRule& rule : allowed) {
    if (rule.pattern.port) ports.push_back(*rule.pattern.port);
  }
  std::sort(ports.begin(), ports.end());
  ports.erase(std::unique(ports.begin(), ports.end()), ports.end());
  m.capture_ports_ = std::move(ports);
  return m;
}

size_t DomainMatcher::Match(const Table& table, const Host& host, uint16_t port, uint32_t& probes) {
  size_t best = table.all.Find(port);
  auto probe = [&](const SlotMap& map, std::string_view key) {
    ++probes;
    auto it = map.find(key);
    if (it != map.end()) {
      best = std::min(best, it->second.Find(port));
    }
  };
  if (host.is_ip()) {
    // Names and wildcards never match an IP literal, but for localhost's own addresses: a
    // client dials `localhost` by them (and says so), and transparent capture sees only the
    // address, so an entry for localhost covers 127.0.0.1 and ::1 on its ports, in either
    // list. (Not the rest of 127/8: those are other hosts' aliases, not what localhost is.)
    probe(table.ips, host.text);
    if (host.text == "127.0.0.1" || host.text == "::1") probe(table.names, "localhost");
    return best;
  }
  probe(table.names, host.text);
  // `*.base` matches strict subdomains: try every proper suffix that starts after a dot.
  std::string_view name = host.text;
  for (size_t dot = name.find('.'); dot != std::string_view::npos; dot = name.find('.', dot + 1)) {
    probe(table.wildcards, name.substr(dot + 1));
  }
  return best;
}

Decision DomainMatcher::Evaluate(const Host& host, uint16_t port) const {
  Decision d;
  const size_t denied = Match(deny_, host, port, d.probes);
  if (denied != kNone) {
    d.allowed = false;
    d.matched_entry = deny_.entries[denied];
    d.reason = deny_reasons_[denied].empty() ? std::string(kDenyListReason) : deny_reasons_[denied];
    return d;
  }
  const size_t allowed = Match(allow_, host, port, d.probes);
  if (allowed != kNone) {
    d.allowed = true;
    d.matched_entry = allow_.entries[allowed];
    return d;
  }
  d.allowed = false;
  d.reason = std::string(kNotAllowedReason);
  return d;
}

Decision DomainMatcher::Evaluate(std::string_view raw_host, uint16_t port) const {
  Result<Host> host = CanonicalizeHost(raw_host);
  if (!host.has_value()) {
    Decision d;
    d.allowed = false;
    d.reason = std::string(kMalformedHost);
    return d;
  }
  return Evaluate(*host, port);
}

bool DomainMatcher::AddressAllowlisted(const IpAddress& address, uint16_t port) const {
  return Evaluate(HostFromAddress(address), port).allowed;
}

bool DomainMatcher::AddressDenyListed(const IpAddress& address, uint16_t port) const {
  const Host host = HostFromAddress(address);
  auto it = deny_.ips.find(host.text);
  return it != deny_.ips.end() && it->second.Find(port) != kNone;
}

bool DomainMatcher::AddressDenyListedOnSomePort(const IpAddress& address) const {
  auto it = deny_.ips.find(HostFromAddress(address).text);
  return it != deny_.ips.end() && (it->second.any_port != kNone || !it->second.by_port.empty());
}

bool DomainMatcher::NameCovered(const Table& table, std::string_view name, bool any_port_only) {
  auto covers = [any_port_only](const Slot& slot) {
    return slot.any_port != kNone || (!any_port_only && !slot.by_port.empty());
  };
  if (covers(table.all)) {
    return true;
  }
  auto it = table.names.find(name);
  if (it != table.names.end() && covers(it->second)) {
    return true;
  }
  for (size_t dot = name.find('.'); dot != std::string_view::npos; dot = name.find('.', dot + 1)) {
    auto w = table.wildcards.find(name.substr(dot + 1));
    if (w != table.wildcards.end() && covers(w->second)) {
      return true;
    }
  }
  return false;
}

bool DomainMatcher::NameMayResolve(std::string_view name) const {
  Result<Host> host = CanonicalizeHost(name);
  if (!host.has_value() || host->is_ip()) {
    return false;
  }
  if (NameCovered(deny_, host->text, /*any_port_only=*/true)) {
    return false;
  }
  return NameCovered(allow_, host->text, /*any_port_only=*/false);
}

}  // namespace srt::proxy
