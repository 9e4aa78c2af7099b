// SPDX-License-Identifier: Apache-2.0
// dns/message.h: the DNS wire format of srt's DNS stub (RFC 1035 §4, RFC 6891): one question in,
// A/AAAA answers out. Pure: no I/O; reads only the span it is given.
//
// Usage protocol (the stub's UDP and TCP handlers):
//   1. UDP: each datagram is one message. TCP: ReadTcpFrame() on the buffered bytes until kDone,
//      then the frame's `message` (RFC 1035 §4.2.2: a two-octet length prefix).
//   2. ParseQuery(message). kDrop: send nothing (a response, or too short to answer). kReply: send
//      BuildResponse(result.query, result.rcode, {}, 0). kAnswer: resolve result.query.question
//      and send BuildResponse(query, rcode, addresses, ttl).
//   3. TCP: FrameForTcp(response).
//
// Decisions:
//   - QR = 1 (a response) is dropped, never answered: no reflection loops.
//   - OPCODE other than QUERY: NOTIMP (RFC 1035 §4.1.1), without a question.
//   - Exactly one question (QDCOUNT = 1, RFC 9619); ANCOUNT = NSCOUNT = 0; ARCOUNT 0 or 1, and
//     the one additional record must be an EDNS0 OPT (RFC 6891 §6.1) with well-formed options.
//     Anything else, truncation, or bytes after the message: FORMERR.
//   - Compression pointers are refused in the question (FORMERR): the question is the first name
//     in a query, so there is nothing earlier to point to, and no real client does it. The same
//     for the extended label types 0x40/0x80. A name is at most 255 octets in wire form, labels
//     at most 63 (RFC 1035 §2.3.4).
//   - Labels with bytes other than letters, digits, '-' and '_' (a '.' inside a label, NUL,
//     spaces, non-ASCII) cannot be written as a host name without ambiguity, and a name whose
//     last label is all digits ("1.2.3.4", "127.1") may be read as an address by a resolver
//     (RFC 3696 §2): REFUSED, with the question echoed as received. These are DNS wire rules,
//     stricter than CanonicalizeHost (filter/host.h), which reads "127.1" as 127.0.0.1 for hosts
//     named in HTTP/SOCKS5 requests; a DNS question is never an address.
//   - EDNS version other than 0: BADVERS (RFC 6891 §6.1.3).
//   - Responses echo the question exactly as received (case included: DNS 0x20 resolvers check
//     it), set AA and RA, copy RD and CD, and point each answer's owner name at the question
//     (0xC00C). A query with OPT gets an OPT back (RFC 6891 §7) advertising 1232 bytes and
//     copying DO (RFC 3225 §3). Answers that do not fit the transport's size (512 bytes without
//     EDNS, the client's EDNS size capped at 1232, 65535 over TCP) are dropped from the end and
//     TC is set (RFC 1035 §4.1.1, RFC 2181 §9).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "base/address.h"
#include "wire/parse_status.h"

namespace srt::proxy::dns {

// RFC 1035 §4.1.1, RFC 6891 §9 (BADVERS is an extended RCODE: it needs an OPT record).
enum class Rcode : uint16_t {
  kNoError = 0,
  kFormErr = 1,
  kServFail = 2,
  kNxDomain = 3,
  kNotImp = 4,
  kRefused = 5,
  kBadVers = 16,
};

inline constexpr uint16_t kTypeA = 1;
inline constexpr uint16_t kTypeAaaa = 28;
inline constexpr uint16_t kTypeOpt = 41;
inline constexpr uint16_t kClassIn = 1;

struct Question {
  std::string name;  // dotted, lower-case, no trailing dot; "" for the root. Empty if REFUSED
  uint16_t qtype = 0;
  uint16_t qclass = 0;
  std::vector<uint8_t> wire_name;  // the QNAME as received, echoed in the response
  bool operator==(const Question&) const = default;
};

struct Edns {
  uint16_t udp_payload_size = 0;  // as sent (the response honours max(512, min(this, 1232)))
  uint8_t version = 0;
  bool dnssec_ok = false;
  bool operator==(const Edns&) const = default;
};

struct Query {
  uint16_t id = 0;
  uint8_t opcode = 0;
  bool recursion_desired = false;
  bool checking_disabled = false;
  std::optional<Question> question;
  std::optional<Edns> edns;
  bool operator==(const Query&) const = default;
};

struct QueryParse {
  enum class Action { kAnswer, kReply, kDrop };
  Action action = Action::kDrop;
  // kAnswer: a complete query with its question. kReply: as much as was read (the header always;
  // the question and EDNS when they were readable), enough to build the error response.
  Query query;
  Rcode rcode = Rcode::kNoError;  // kReply: the RCODE to answer with
  std::string error;              // kReply, kDrop: why, for debug logs
};

[[nodiscard]] QueryParse ParseQuery(std::span<const uint8_t> message);

enum class Transport { kUdp, kTcp };

// A response to `query` with `rcode`. With kNoError, the addresses whose family matches the
// question (A: IPv4, AAAA: IPv6; class IN only) become answers, at most kMaxDnsAnswers of them,
// each with `ttl` seconds; other addresses are left out, so a resolver's whole list can be passed.
// An extended `rcode` (kBadVers) without EDNS in the query is sent as SERVFAIL.
[[nodiscard]] std::vector<uint8_t> BuildResponse(const Query& query, Rcode rcode,
                                                 std::span<const IpAddress> addresses, uint32_t ttl,
                                                 Transport transport = Transport::kUdp);

// RFC 1035 §4.2.2: over TCP each message is preceded by its length as two octets.
struct TcpFrame {
  ParseStatus status = ParseStatus::kNeedMore;
  size_t consumed = 0;               // kDone: 2 + the message's length
  std::span<const uint8_t> message;  // kDone: a view into the input
  std::string error;                 // kError: a zero length
};
[[nodiscard]] TcpFrame ReadTcpFrame(std::span<const uint8_t> in);
// The two-octet length and the message. A message longer than 65535 bytes cannot be framed: the
// result is empty.
[[nodiscard]] std::vector<uint8_t> FrameForTcp(std::span<const uint8_t> message);

}  // namespace srt::proxy::dns
