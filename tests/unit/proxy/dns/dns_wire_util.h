// SPDX-License-Identifier: Apache-2.0
// dns_wire_util.h: DNS queries as clients send them and a strict reader of the stub's responses
// (RFC 1035 §4.1), for tests that talk to srt's DNS stub over real sockets.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/address.h"
#include "dns/message.h"
#include "wire/byte_reader.h"

namespace srt::proxy::testing {

inline void PutU16(std::vector<uint8_t>& out, uint16_t v) {
  out.push_back(static_cast<uint8_t>(v >> 8));
  out.push_back(static_cast<uint8_t>(v & 0xff));
}

struct QuerySpec {
  uint16_t id = 0x1234;
  std::string name = "example.com";  // dotted; split at '.' into labels ("" = the root)
  uint16_t qtype = dns::kTypeA;
  uint16_t qclass = dns::kClassIn;
  bool edns = false;        // add an EDNS0 OPT record advertising 1232 bytes
  uint16_t flags = 0x0100;  // RD, as stub resolvers send
  uint16_t qdcount = 1;     // the header's count (the question is written once regardless)
};

// The query as bytes: header, QNAME, QTYPE, QCLASS and the optional OPT record.
inline std::vector<uint8_t> MakeQuery(const QuerySpec& spec) {
  std::vector<uint8_t> out;
  PutU16(out, spec.id);
  PutU16(out, spec.flags);
  PutU16(out, spec.qdcount);
  PutU16(out, 0);
  PutU16(out, 0);
  PutU16(out, spec.edns ? 1 : 0);
  std::string_view rest = spec.name;
  while (!rest.empty()) {
    const size_t dot = rest.find('.');
    const std::string_view label = rest.substr(0, dot);
    out.push_back(static_cast<uint8_t>(label.size()));
    out.insert(out.end(), label.begin(), label.end());
    rest = dot == std::string_view::npos ? std::string_view() : rest.substr(dot + 1);
  }
  out.push_back(0);
  PutU16(out, spec.qtype);
  PutU16(out, spec.qclass);
  if (spec.edns) {
    out.push_back(0);  // root owner name
    PutU16(out, dns::kTypeOpt);
    PutU16(out, 1232);  // UDP payload size
    PutU16(out, 0);     // extended RCODE, version
    PutU16(out, 0);     // flags
    PutU16(out, 0);     // RDLENGTH
  }
  return out;
}

inline std::vector<uint8_t> MakeQuery(uint16_t id, std::string_view name,
                                      uint16_t qtype = dns::kTypeA) {
  QuerySpec spec;
  spec.id = id;
  spec.name = std::string(name);
  spec.qtype = qtype;
  return MakeQuery(spec);
}

// RFC 1035 §4.2.2 framing, for writing queries to a TCP stub.
inline std::vector<uint8_t> Framed(const std::vector<uint8_t>& message) {
  // Sized up front: GCC 12 -O2 misreads push_back followed by a range insert (-Warray-bounds).
  std::vector<uint8_t> out(2 + message.size());
  out[0] = static_cast<uint8_t>(message.size() >> 8);
  out[1] = static_cast<uint8_t>(message.size() & 0xff);
  std::copy(message.begin(), message.end(), out.begin() + 2);
  return out;
}

struct Response {
  uint16_t id = 0;
  uint16_t flags = 0;
  uint16_t qdcount = 0, ancount = 0, nscount = 0, arcount = 0;
  std::vector<std::string> answers;  // A/AAAA RDATA as text, in order
  std::vector<uint32_t> ttls;

  int rcode() const { return flags & 0x0f; }
  bool is_response() const { return (flags & 0x8000) != 0; }
  bool truncated() const { return (flags & 0x0200) != 0; }
};

// Reads a response the way the stub writes them (question echoed, answers owned by 0xC00C, at
// most an OPT in the additional section); nullopt for anything else, trailing bytes included.
inline std::optional<Response> DecodeResponse(std::span<const uint8_t> bytes) {
  Response out;
  ByteReader r(bytes);
  auto id = r.ReadU16();
  auto flags = r.ReadU16();
  auto qd = r.ReadU16();
  auto an = r.ReadU16();
  auto ns = r.ReadU16();
  auto ar = r.ReadU16();
  if (!ar) {
    return std::nullopt;
  }
  out.id = *id;
  out.flags = *flags;
  out.qdcount = *qd;
  out.ancount = *an;
  out.nscount = *ns;
  out.arcount = *ar;
  for (uint16_t i = 0; i < out.qdcount; ++i) {
    while (true) {
      auto len = r.ReadU8();
      if (!len || (*len & 0xc0) != 0) {
        return std::nullopt;
      }
      if (*len == 0) {
        break;
      }
      if (!r.Skip(*len)) {
        return std::nullopt;
      }
    }
    if (!r.Skip(4)) {
      return std::nullopt;
    }
  }
  for (uint16_t i = 0; i < out.ancount; ++i) {
    auto owner = r.ReadU16();
    auto type = owner ? r.ReadU16() : std::nullopt;
    auto klass = type ? r.ReadU16() : std::nullopt;
    auto ttl = klass ? r.ReadU32() : std::nullopt;
    auto len = ttl ? r.ReadU16() : std::nullopt;
    auto rdata = len ? r.ReadBytes(*len) : std::nullopt;
    if (!rdata || *owner != 0xc00c) {
      return std::nullopt;
    }
    IpAddress ip;
    if (*type == dns::kTypeA && rdata->size() == 4) {
      ip.family = IpAddress::Family::kIpv4;
    } else if (*type == dns::kTypeAaaa && rdata->size() == 16) {
      ip.family = IpAddress::Family::kIpv6;
    } else {
      return std::nullopt;
    }
    std::copy(rdata->begin(), rdata->end(), ip.bytes.begin());
    out.answers.push_back(FormatIpAddress(ip));
    out.ttls.push_back(*ttl);
  }
  for (uint16_t i = 0; i < out.arcount; ++i) {
    auto root = r.ReadU8();
    auto type = root ? r.ReadU16() : std::nullopt;
    if (!type || *root != 0 || *type != dns::kTypeOpt || !r.Skip(6)) {
      return std::nullopt;
    }
    auto len = r.ReadU16();
    if (!len || !r.Skip(*len)) {
      return std::nullopt;
    }
  }
  if (!r.empty()) {
    return std::nullopt;
  }
  return out;
}

}  // namespace srt::proxy::testing
