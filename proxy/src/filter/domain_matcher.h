// SPDX-License-Identifier: Apache-2.0
// filter/domain_matcher.h: the allow/deny decision on a destination host and port, with
// upstream srt's semantics (upstream-srt.md §1.6). Pure and immutable once built.
//
// Usage:
//   DomainMatcher m = DomainMatcher::Build(policy.allowed, policy.denied);  // NetworkPolicy
//   SRT_ASSIGN_OR_RETURN(Host host, CanonicalizeHost(request.host));  // else kMalformedHost
//   Decision d = m.Evaluate(host, request.port);   // d.reason is the 403 status phrase
//
// Decision order: deniedDomains first (the first entry in list order that matches gives the
// reason), then allowedDomains, else deny. Entries:
//   `*`            every host (deniedDomains only)
//   `*.base`       strict subdomains of base: not base itself, never an IP literal
//   `name`         that name, case-insensitively (a trailing dot on the request is ignored)
//   IPv4, `[v6]`   that address; entries are canonicalised like requests, so `[::ffff:1.2.3.4]`
//                  is 1.2.3.4 and `127.1` (a name to the settings grammar) is 127.0.0.1
//   `localhost`    the name, and its addresses 127.0.0.1 and ::1 (what clients dial for it)
//   `...:port`     only that destination port; an entry without a port matches every port.
// Every lookup is a constant number of hash probes per label of the host: a 10,000-entry list
// costs what a 10-entry list does. Thread-safe (const after Build).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/address.h"
#include "base/host.h"
#include "network_policy/network_policy.h"
#include "srt/result.h"

namespace srt::proxy {

inline constexpr std::string_view kDenyListReason = "host is on the deny list";
inline constexpr std::string_view kNotAllowedReason = "host is not on the allow list";

struct Decision {
  bool allowed = false;
  // Why a host is refused: kDenyListReason (or that deny entry's deniedDomainReasons text,
  // sanitised), kNotAllowedReason or kMalformedHost. Empty when allowed.
  std::string reason;
  // The settings entry that decided, as written there ("*.example.com:443"); empty when no
  // entry matched. For the log, never for the client.
  std::string matched_entry;
  // Hash-table probes this decision took (tests assert they do not grow with list size).
  uint32_t probes = 0;
};

// deniedDomainReasons text made safe for an HTTP status phrase, as upstream: control
// characters -> space, '<' and '>' removed, each non-ASCII character -> '?' (one per UTF-16
// code unit, so a character outside the BMP gives "??"; an invalid UTF-8 byte gives one '?').
[[nodiscard]] std::string SanitizeDenyReason(std::string_view reason);

class DomainMatcher {
 public:
  // Builds from the network policy's allowedDomains / deniedDomains rules (parsed, with their
  // reasons). Entries that no request can match (e.g. a name outside [A-Za-z0-9._-]) are kept
  // out and never match.
  [[nodiscard]] static DomainMatcher Build(const std::vector<DomainRule>& allowed,
                                           const std::vector<DomainRule>& denied);

  // The decision on a canonical host (CanonicalizeHost) and destination port.
  [[nodiscard]] Decision Evaluate(const Host& host, uint16_t port) const;
  // Canonicalises first; a host CanonicalizeHost rejects is denied with kMalformedHost.
  [[nodiscard]] Decision Evaluate(std::string_view raw_host, uint16_t port) const;

  // True if the address itself is allowlisted on `port`: an IP allow entry matches it and no
  // deny entry does (Evaluate on the IP-literal host allows it). The resolved-address guard
  // lets such an address through for a name (an explicit carve-out, e.g. `127.0.0.1:3000`).
  // IPv4-mapped addresses are judged as the IPv4 address.
  [[nodiscard]] bool AddressAllowlisted(const IpAddress& address, uint16_t port) const;
  // True if an IP entry of deniedDomains matches the address on `port` (`*` entries do not
  // count: they deny every name before any resolution happens). The guard refuses such an
  // address for a name too ("a deny-listed address").
  [[nodiscard]] bool AddressDenyListed(const IpAddress& address, uint16_t port) const;
  // True if an IP entry of deniedDomains matches the address on any port: the DNS stub, which
  // knows no port, shows such an address to no one (the name gets a synthetic one).
  [[nodiscard]] bool AddressDenyListedOnSomePort(const IpAddress& address) const;

  // Ports transparent capture must listen on: 80 and 443, plus every port an allow entry
  // names. Sorted, no duplicates.
  [[nodiscard]] const std::vector<uint16_t>& CapturePorts() const { return capture_ports_; }

  // For the DNS stub (which names get an answer): true if some allow entry (exact or wildcard)
  // could match this name on some port and no port-less deny entry (`*`, the name, a wildcard
  // over it) denies it. `name` is canonicalised first; IP literals and malformed names give
  // false.
  [[nodiscard]] bool NameMayResolve(std::string_view name) const;

 private:
  static constexpr size_t kNone = static_cast<size_t>(-1);

  // Entries of one key (a name, a wildcard base, an IP text): the lowest list index without a
  // port and per port.
  struct Slot {
    size_t any_port = kNone;
    std::unordered_map<uint16_t, size_t> by_port;
    void Add(std::optional<uint16_t> port, size_t index);
    size_t Find(uint16_t port) const;
  };
  struct StringHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  using SlotMap = std::unordered_map<std::string, Slot, StringHash, std::equal_to<>>;
  struct Table {
    SlotMap names;
    SlotMap wildcards;                 // keyed by the base: "*.example.com" -> "example.com"
    SlotMap ips;                       // keyed by Host::text of the canonical address
    Slot all;                          // `*` (deny only)
    std::vector<std::string> entries;  // index -> entry as written
  };

  static void AddEntries(Table& table, const std::vector<DomainRule>& rules);
  // The lowest index of an entry of `table` matching (host, port), or kNone.
  static size_t Match(const Table& table, const Host& host, uint16_t port, uint32_t& probes);
  // True if an entry of `table` matches `name` on some port (allow side) or on every port
  // (port-less, deny side).
  static bool NameCovered(const Table& table, std::string_view name, bool any_port_only);

  Table allow_;
  Table deny_;
  std::vector<std::string> deny_reasons_;  // index -> sanitised reason (empty = default)
  std::vector<uint16_t> capture_ports_;
};

}  // namespace srt::proxy
