// SPDX-License-Identifier: Apache-2.0
// dns/message.cc: DNS queries in, responses out (RFC 1035 §4, RFC 6891).
#include "dns/message.h"

#include <algorithm>
#include <utility>

#include "proxy_limits.h"
#include "wire/ascii.h"
#include "wire/byte_reader.h"

namespace srt::proxy::dns {
namespace {

constexpr size_t kHeaderBytes = 12;
constexpr uint16_t kFlagQr = 0x8000;
constexpr uint16_t kFlagAa = 0x0400;
constexpr uint16_t kFlagTc = 0x0200;
constexpr uint16_t kFlagRd = 0x0100;
constexpr uint16_t kFlagRa = 0x0080;
constexpr uint16_t kFlagCd = 0x0010;
constexpr uint16_t kEdnsFlagDo = 0x8000;
constexpr size_t kOptRecordBytes = 11;  // root name, type, class, TTL, RDLENGTH 0

struct NameResult {
  std::optional<std::string> error;  // FORMERR
  // Every label is letters, digits, '-', '_', and the last one is not all digits.
  bool host_name = true;
};

// QNAME (RFC 1035 §4.1.2, §3.1): length-prefixed labels ending in the root label.
NameResult ReadQuestionName(ByteReader& r, Question& q) {
  NameResult out;
  const size_t start = r.offset();
  std::string text;
  bool last_label_numeric = false;
  while (true) {
    std::optional<uint8_t> len = r.ReadU8();
    if (!len) {
      out.error = "truncated question name";
      return out;
    }
    if ((*len & 0xc0) == 0xc0) {
      out.error = "compression pointer in the question";
      return out;
    }
    if ((*len & 0xc0) != 0) {
      out.error = "extended label type in the question";
      return out;
    }
    if (r.offset() - start + *len + (*len == 0 ? 0 : 1) > kMaxDnsNameWireBytes) {
      // This label, plus at least the root label after it, would pass 255 octets.
      out.error = "question name longer than 255 octets";
      return out;
    }
    if (*len == 0) {
      break;
    }
    std::optional<std::string_view> label = r.ReadString(*len);
    if (!label) {
      out.error = "truncated question name";
      return out;
    }
    last_label_numeric = true;
    for (char c : *label) {
      out.host_name = out.host_name && ascii::IsHostNameChar(c) && c != '.';
      last_label_numeric = last_label_numeric && ascii::IsDigit(c);
    }
    text += ascii::ToLower(*label);
    text += '.';
  }
  if (!text.empty()) {
    text.pop_back();
  }
  // "1.2.3.4" or "127.1" as a name: not a DNS name (RFC 3696 §2), but resolvers may read it as an
  // address, which would let it pass a filter written for names.
  out.host_name = out.host_name && !last_label_numeric;
  std::span<const uint8_t> wire = r.Consumed().subspan(start);
  q.wire_name.assign(wire.begin(), wire.end());
  q.name = out.host_name ? std::move(text) : std::string();
  return out;
}

// The OPT pseudo-record (RFC 6891 §6.1.2), its owner name already read.
std::optional<std::string> ReadOpt(ByteReader& r, Edns& edns) {
  std::optional<uint16_t> type = r.ReadU16();
  std::optional<uint16_t> payload = type ? r.ReadU16() : std::nullopt;
  std::optional<uint32_t> ttl = payload ? r.ReadU32() : std::nullopt;
  std::optional<uint16_t> rdlength = ttl ? r.ReadU16() : std::nullopt;
  std::optional<ByteReader> rdata = rdlength ? r.ReadSub(*rdlength) : std::nullopt;
  if (!rdata) {
    return "truncated additional record";
  }
  if (*type != kTypeOpt) {
    return "additional record of type " + std::to_string(*type) + " (only OPT is accepted)";
  }
  // OPTIONS: {OPTION-CODE, OPTION-LENGTH, OPTION-DATA}*, filling RDATA exactly.
  while (!rdata->empty()) {
    std::optional<uint16_t> code = rdata->ReadU16();
    std::optional<uint16_t> len = code ? rdata->ReadU16() : std::nullopt;
    if (!len || !rdata->Skip(*len)) {
      return "malformed EDNS option";
    }
  }
  edns.udp_payload_size = *payload;
  edns.version = static_cast<uint8_t>((*ttl >> 16) & 0xff);
  edns.dnssec_ok = (*ttl & kEdnsFlagDo) != 0;
  return std::nullopt;
}

QueryParse Reply(Query query, Rcode rcode, std::string why) {
  QueryParse out;
  out.action = QueryParse::Action::kReply;
  out.query = std::move(query);
  out.rcode = rcode;
  out.error = std::move(why);
  return out;
}

void PutU16(std::vector<uint8_t>& out, uint16_t v) {
  out.push_back(static_cast<uint8_t>(v >> 8));
  out.push_back(static_cast<uint8_t>(v & 0xff));
}
void PutU32(std::vector<uint8_t>& out, uint32_t v) {
  PutU16(out, static_cast<uint16_t>(v >> 16));
  PutU16(out, static_cast<uint16_t>(v & 0xffff));
}

}  // namespace

QueryParse ParseQuery(std::span<const uint8_t> message) {
  QueryParse drop;
  ByteReader r(message);
  std::optional<uint16_t> id = r.ReadU16();
  std::optional<uint16_t> flags = id ? r.ReadU16() : std::nullopt;
  std::optional<uint16_t> qdcount = flags ? r.ReadU16() : std::nullopt;
  std::optional<uint16_t> ancount = qdcount ? r.ReadU16() : std::nullopt;
  std::optional<uint16_t> nscount = ancount ? r.ReadU16() : std::nullopt;
  std::optional<uint16_t> arcount = nscount ? r.ReadU16() : std::nullopt;
  if (!arcount) {
    drop.error = "shorter than a DNS header";
    return drop;
  }
  if ((*flags & kFlagQr) != 0) {
    drop.error = "a response, not a query";
    return drop;
  }
  Query query;
  query.id = *id;
  query.opcode = static_cast<uint8_t>((*flags >> 11) & 0x0f);
  query.recursion_desired = (*flags & kFlagRd) != 0;
  query.checking_disabled = (*flags & kFlagCd) != 0;
  if (query.opcode != 0) {
    // The text first: the order in which a call's arguments are evaluated is unspecified.
    std::string why = "opcode " + std::to_string(query.opcode) + " is not QUERY";
    return Reply(std::move(query), Rcode::kNotImp, std::move(why));
  }
  if (*qdcount != 1) {
    return Reply(std::move(query), Rcode::kFormErr,
                 std::to_string(*qdcount) + " questions (exactly one is accepted)");
  }
  if (*ancount != 0 || *nscount != 0 || *arcount > 1) {
    return Reply(std::move(query), Rcode::kFormErr, "records other than one OPT in a query");
  }
  Question question;
  NameResult name = ReadQuestionName(r, question);
  if (name.error) {
    return Reply(std::move(query), Rcode::kFormErr, std::move(*name.error));
  }
  std::optional<uint16_t> qtype = r.ReadU16();
  std::optional<uint16_t> qclass = qtype ? r.ReadU16() : std::nullopt;
  if (!qclass) {
    return Reply(std::move(query), Rcode::kFormErr, "truncated question");
  }
  question.qtype = *qtype;
  question.qclass = *qclass;
  query.question = std::move(question);
  if (*arcount == 1) {
    std::optional<uint8_t> owner = r.ReadU8();
    if (owner != uint8_t{0}) {
      return Reply(std::move(query), Rcode::kFormErr,
                   owner ? "additional record is not an OPT (owner is not the root)"
                         : "truncated additional record");
    }
    Edns edns;
    if (std::optional<std::string> error = ReadOpt(r, edns)) {
      return Reply(std::move(query), Rcode::kFormErr, std::move(*error));
    }
    query.edns = edns;
  }
  if (!r.empty()) {
    return Reply(std::move(query), Rcode::kFormErr,
                 std::to_string(r.remaining()) + " bytes after the message");
  }
  if (!name.host_name) {
    return Reply(std::move(query), Rcode::kRefused, "question name is not a host name");
  }
  if (query.edns && query.edns->version != 0) {
    std::string why = "EDNS version " + std::to_string(query.edns->version);
    return Reply(std::move(query), Rcode::kBadVers, std::move(why));
  }
  QueryParse out;
  out.action = QueryParse::Action::kAnswer;
  out.query = std::move(query);
  return out;
}

std::vector<uint8_t> BuildResponse(const Query& query, Rcode rcode,
                                   std::span<const IpAddress> addresses, uint32_t ttl,
                                   Transport transport) {
  auto code = static_cast<uint16_t>(rcode);
  if (code > 0x0f && !query.edns) {
    code = static_cast<uint16_t>(Rcode::kServFail);
  }
  size_t limit = kDnsTcpMessageBytes;
  if (transport == Transport::kUdp) {
    limit = kDnsUdpMessageBytes;
    if (query.edns) {
      limit = std::clamp<size_t>(query.edns->udp_payload_size, kDnsUdpMessageBytes,
                                 kDnsEdnsUdpMessageBytes);
    }
  }

  // Which answers: matching the question's type, class IN, at most kMaxDnsAnswers.
  std::vector<const IpAddress*> answers;
  if (rcode == Rcode::kNoError && query.question && query.question->qclass == kClassIn) {
    for (const IpAddress& a : addresses) {
      const bool v4 = a.family == IpAddress::Family::kIpv4;
      if ((query.question->qtype == kTypeA && v4) || (query.question->qtype == kTypeAaaa && !v4)) {
        answers.push_back(&a);
      }
      if (answers.size() == kMaxDnsAnswers) {
        break;
      }
    }
  }
  const size_t question_bytes = query.question ? query.question->wire_name.size() + 4 : 0;
  const size_t fixed = kHeaderBytes + question_bytes + (query.edns ? kOptRecordBytes : 0);
  bool truncated = false;
  size_t answer_bytes = 0;
  size_t fit = 0;
  for (const IpAddress* a : answers) {
    const size_t rr = 2 + 10 + (a->family == IpAddress::Family::kIpv4 ? 4 : 16);
    if (fixed + answer_bytes + rr > limit) {
      truncated = true;
      break;
    }
    answer_bytes += rr;
    ++fit;
  }

  std::vector<uint8_t> out;
  out.reserve(fixed + answer_bytes);
  PutU16(out, query.id);
  uint16_t flags = kFlagQr | kFlagAa | kFlagRa | static_cast<uint16_t>(query.opcode << 11) |
                   static_cast<uint16_t>(code & 0x0f);
  if (query.recursion_desired) {
    flags |= kFlagRd;
  }
  if (query.checking_disabled) {
    flags |= kFlagCd;
  }
  if (truncated) {
    flags |= kFlagTc;
  }
  PutU16(out, flags);
  PutU16(out, query.question ? 1 : 0);
  PutU16(out, static_cast<uint16_t>(fit));
  PutU16(out, 0);
  PutU16(out, query.edns ? 1 : 0);
  if (query.question) {
    out.insert(out.end(), query.question->wire_name.begin(), query.question->wire_name.end());
    PutU16(out, query.question->qtype);
    PutU16(out, query.question->qclass);
  }
  for (size_t i = 0; i < fit; ++i) {
    const IpAddress& a = *answers[i];
    const bool v4 = a.family == IpAddress::Family::kIpv4;
    PutU16(out, 0xc000 | kHeaderBytes);  // the owner: a pointer to the question's name
    PutU16(out, v4 ? kTypeA : kTypeAaaa);
    PutU16(out, kClassIn);
    PutU32(out, ttl);
    PutU16(out, v4 ? 4 : 16);
    out.insert(out.end(), a.bytes.begin(), a.bytes.begin() + (v4 ? 4 : 16));
  }
  if (query.edns) {
    out.push_back(0);  // root owner name
    PutU16(out, kTypeOpt);
    PutU16(out, static_cast<uint16_t>(kDnsEdnsUdpMessageBytes));
    // TTL: EXTENDED-RCODE (the upper 8 of 12 bits), VERSION 0, DO, Z.
    PutU32(out,
           (static_cast<uint32_t>(code >> 4) << 24) | (query.edns->dnssec_ok ? kEdnsFlagDo : 0u));
    PutU16(out, 0);
  }
  return out;
}

TcpFrame ReadTcpFrame(std::span<const uint8_t> in) {
  TcpFrame out;
  ByteReader r(in);
  std::optional<uint16_t> length = r.ReadU16();
  if (!length) {
    return out;
  }
  if (*length == 0) {
    out.status = ParseStatus::kError;
    out.error = "zero-length DNS message over TCP";
    return out;
  }
  std::optional<std::span<const uint8_t>> message = r.ReadBytes(*length);
  if (!message) {
    return out;
  }
  out.status = ParseStatus::kDone;
  out.consumed = r.offset();
  out.message = *message;
  return out;
}

std::vector<uint8_t> FrameForTcp(std::span<const uint8_t> message) {
  if (message.size() > kDnsTcpMessageBytes) {
    return {};
  }
  std::vector<uint8_t> out;
  out.reserve(2 + message.size());
  PutU16(out, static_cast<uint16_t>(message.size()));
  out.insert(out.end(), message.begin(), message.end());
  return out;
}

}  // namespace srt::proxy::dns
