// SPDX-License-Identifier: Apache-2.0
#include "dns/message.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "proxy_limits.h"
#include "wire/byte_reader.h"
#include "wire/parser_test_util.h"

namespace srt::proxy::dns {
namespace {

using Action = QueryParse::Action;

std::string U8(size_t v) { return std::string(1, static_cast<char>(v & 0xff)); }
std::string U16(size_t v) { return U8(v >> 8) + U8(v); }
std::string U32(size_t v) { return U16(v >> 16) + U16(v & 0xffff); }

std::string Name(const std::vector<std::string>& labels) {
  std::string out;
  for (const std::string& l : labels) {
    out += U8(l.size()) + l;
  }
  return out + U8(0);
}
std::string Header(uint16_t id, uint16_t flags, uint16_t qd, uint16_t an, uint16_t ns,
                   uint16_t ar) {
  return U16(id) + U16(flags) + U16(qd) + U16(an) + U16(ns) + U16(ar);
}
std::string Opt(uint16_t payload, uint32_t ttl, const std::string& options = "") {
  return U8(0) + U16(kTypeOpt) + U16(payload) + U32(ttl) + U16(options.size()) + options;
}

// What `dig example.com` (BIND 9.18) sends: RD and AD set, EDNS0 with a 1232-byte payload and
// a client COOKIE option (RFC 7873).
const std::string kDigQuery = Header(0x1f2e, 0x0120, 1, 0, 0, 1) + Name({"example", "com"}) +
                              U16(kTypeA) + U16(kClassIn) +
                              Opt(1232, 0, U16(10) + U16(8) + "\x8b\x1c\x5e\x22\x01\x9a\x4d\x7f");
// What glibc's stub resolver sends for getaddrinfo(AF_INET6): RD only, no EDNS. Mixed case as a
// 0x20-randomising forwarder would send it.
const std::string kGlibcQuery = Header(0xbeef, 0x0100, 1, 0, 0, 0) +
                                Name({"WwW", "ExAmple", "COM"}) + U16(kTypeAaaa) + U16(kClassIn);

// Parses `in` whole and against a guard page (same result), and every proper prefix against a
// guard page. A prefix of a valid query is never answered: FORMERR (truncated), or dropped when
// shorter than a header.
QueryParse Parse(std::string_view in) {
  QueryParse whole = ParseQuery(testing::AsBytes(in));
  testing::GuardedBuffer g(in);
  QueryParse guarded = ParseQuery(g.bytes());
  EXPECT_EQ(guarded.action, whole.action);
  EXPECT_EQ(guarded.query, whole.query);
  EXPECT_EQ(guarded.rcode, whole.rcode);
  for (size_t k = 0; k < in.size(); ++k) {
    testing::GuardedBuffer p(in.substr(0, k));
    QueryParse r = ParseQuery(p.bytes());
    if (whole.action != Action::kAnswer) {
      continue;  // a prefix of a bad message may well be a good one
    }
    if (k < 12) {
      EXPECT_EQ(r.action, Action::kDrop) << k;
    } else {
      EXPECT_EQ(r.action, Action::kReply) << k;
      EXPECT_EQ(r.rcode, Rcode::kFormErr) << k;
    }
  }
  return whole;
}

// A minimal reader of our own responses, to check them structurally.
struct Decoded {
  uint16_t id = 0;
  uint16_t flags = 0;
  uint16_t qd = 0, an = 0, ns = 0, ar = 0;
  std::string question;              // raw bytes
  std::vector<std::string> answers;  // rdata
  std::vector<uint32_t> ttls;
  std::optional<uint32_t> opt_ttl;
  std::optional<uint16_t> opt_payload;
};
Decoded Decode(const std::vector<uint8_t>& bytes) {
  Decoded d;
  ByteReader r(std::span<const uint8_t>(bytes.data(), bytes.size()));
  d.id = *r.ReadU16();
  d.flags = *r.ReadU16();
  d.qd = *r.ReadU16();
  d.an = *r.ReadU16();
  d.ns = *r.ReadU16();
  d.ar = *r.ReadU16();
  if (d.qd == 1) {
    size_t start = r.offset();
    while (true) {
      uint8_t len = *r.ReadU8();
      if (len == 0) {
        break;
      }
      r.Skip(len);
    }
    r.Skip(4);
    d.question = std::string(bytes.begin() + static_cast<long>(start),
                             bytes.begin() + static_cast<long>(r.offset()));
  }
  for (int i = 0; i < d.an; ++i) {
    EXPECT_EQ(r.ReadU16(), 0xc00c);
    uint16_t type = *r.ReadU16();
    EXPECT_TRUE(type == kTypeA || type == kTypeAaaa);
    EXPECT_EQ(r.ReadU16(), kClassIn);
    d.ttls.push_back(*r.ReadU32());
    uint16_t len = *r.ReadU16();
    d.answers.push_back(std::string(*r.ReadString(len)));
  }
  if (d.ar == 1) {
    EXPECT_EQ(r.ReadU8(), 0);
    EXPECT_EQ(r.ReadU16(), kTypeOpt);
    d.opt_payload = r.ReadU16();
    d.opt_ttl = r.ReadU32();
    EXPECT_EQ(r.ReadU16(), 0);
  }
  EXPECT_TRUE(r.empty());
  return d;
}

std::vector<IpAddress> Addresses(const std::vector<std::string>& texts) {
  std::vector<IpAddress> out;
  for (const std::string& t : texts) {
    out.push_back(*ParseIpAddress(t));
  }
  return out;
}

TEST(DnsMessageTest, DigQuery) {
  QueryParse q = Parse(kDigQuery);
  ASSERT_EQ(q.action, Action::kAnswer) << q.error;
  EXPECT_EQ(q.query.id, 0x1f2e);
  EXPECT_EQ(q.query.opcode, 0);
  EXPECT_TRUE(q.query.recursion_desired);
  EXPECT_FALSE(q.query.checking_disabled);
  ASSERT_TRUE(q.query.question);
  EXPECT_EQ(q.query.question->name, "example.com");
  EXPECT_EQ(q.query.question->qtype, kTypeA);
  EXPECT_EQ(q.query.question->qclass, kClassIn);
  ASSERT_TRUE(q.query.edns);
  EXPECT_EQ(*q.query.edns, (Edns{1232, 0, false}));

  std::vector<uint8_t> response = BuildResponse(
      q.query, Rcode::kNoError,
      Addresses({"93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c", "93.184.215.15"}), 300);
  // Exact bytes: header (QR AA RD RA), the question as received, two A records pointing at it,
  // our OPT (1232, DO clear).
  const std::string expected = Header(0x1f2e, 0x8580, 1, 2, 0, 1) + Name({"example", "com"}) +
                               U16(kTypeA) + U16(kClassIn) + U16(0xc00c) + U16(kTypeA) +
                               U16(kClassIn) + U32(300) + U16(4) + "\x5d\xb8\xd7\x0e" +
                               U16(0xc00c) + U16(kTypeA) + U16(kClassIn) + U32(300) + U16(4) +
                               "\x5d\xb8\xd7\x0f" + Opt(1232, 0);
  EXPECT_EQ(std::string(response.begin(), response.end()), expected);
}

TEST(DnsMessageTest, GlibcAaaaQueryKeepsTheQuestionsCase) {
  QueryParse q = Parse(kGlibcQuery);
  ASSERT_EQ(q.action, Action::kAnswer) << q.error;
  EXPECT_EQ(q.query.question->name, "www.example.com");
  EXPECT_FALSE(q.query.edns);
  Decoded d = Decode(BuildResponse(q.query, Rcode::kNoError,
                                   Addresses({"10.0.0.1", "2001:db8::1", "2001:db8::2"}), 60));
  EXPECT_EQ(d.id, 0xbeef);
  EXPECT_EQ(d.flags, 0x8580);
  EXPECT_EQ(d.question, Name({"WwW", "ExAmple", "COM"}) + U16(kTypeAaaa) + U16(kClassIn));
  ASSERT_EQ(d.an, 2);
  EXPECT_EQ(d.answers[0].size(), 16u);
  EXPECT_EQ(static_cast<uint8_t>(d.answers[1][15]), 2);
  EXPECT_EQ(d.ttls[0], 60u);
  EXPECT_EQ(d.ar, 0);
}

TEST(DnsMessageTest, ErrorResponses) {
  QueryParse q = Parse(kDigQuery);
  // NXDOMAIN/REFUSED/SERVFAIL: the question, no answers even if some are passed, the OPT.
  for (Rcode rcode : {Rcode::kNxDomain, Rcode::kRefused, Rcode::kServFail, Rcode::kNotImp}) {
    Decoded d = Decode(BuildResponse(q.query, rcode, Addresses({"10.0.0.1"}), 60));
    EXPECT_EQ(d.flags & 0x000f, static_cast<uint16_t>(rcode));
    EXPECT_EQ(d.an, 0);
    EXPECT_EQ(d.qd, 1);
    EXPECT_EQ(d.ar, 1);
  }
  // Class CH, type TXT (version.bind): parsed; no address answers it.
  QueryParse ch = Parse(Header(7, 0, 1, 0, 0, 0) + Name({"version", "bind"}) + U16(16) + U16(3));
  ASSERT_EQ(ch.action, Action::kAnswer);
  EXPECT_EQ(Decode(BuildResponse(ch.query, Rcode::kNoError, Addresses({"10.0.0.1"}), 60)).an, 0);
  // Digits are fine in labels, as long as the last one is not all digits.
  QueryParse ptr = Parse(Header(9, 0x0100, 1, 0, 0, 0) +
                         Name({"4", "3", "2", "1", "in-addr", "arpa"}) + U16(12) + U16(kClassIn));
  ASSERT_EQ(ptr.action, Action::kAnswer) << ptr.error;
  EXPECT_EQ(ptr.query.question->name, "4.3.2.1.in-addr.arpa");
  // The root name.
  QueryParse root = Parse(Header(8, 0x0100, 1, 0, 0, 0) + U8(0) + U16(2) + U16(kClassIn));
  ASSERT_EQ(root.action, Action::kAnswer);
  EXPECT_EQ(root.query.question->name, "");
}

TEST(DnsMessageTest, RefusedAndInvalidQueries) {
  struct Case {
    std::string in;
    Action action;
    Rcode rcode;
    std::string error;
  };
  const std::string q = Name({"a", "example"}) + U16(kTypeA) + U16(kClassIn);
  const std::string label63(63, 'l');
  std::string name255;  // 3 * (1 + 63) + (1 + 61) + 1 = 255 octets
  name255 = Name({label63, label63, label63, std::string(61, 'm')});
  ASSERT_EQ(name255.size(), 255u);
  const std::string name256 = Name({label63, label63, label63, std::string(62, 'm')});
  for (const Case& c : std::vector<Case>{
           {"", Action::kDrop, Rcode::kNoError, "shorter than a DNS header"},
           {Header(1, 0, 1, 0, 0, 0).substr(0, 11), Action::kDrop, Rcode::kNoError,
            "shorter than a DNS header"},
           {Header(1, 0x8180, 1, 1, 0, 0) + q, Action::kDrop, Rcode::kNoError,
            "a response, not a query"},
           {Header(1, 0x1000, 0, 0, 0, 0), Action::kReply, Rcode::kNotImp, "opcode 2 is not QUERY"},
           {Header(1, 0x2800, 1, 0, 0, 0) + q, Action::kReply, Rcode::kNotImp,
            "opcode 5 is not QUERY"},
           {Header(1, 0, 0, 0, 0, 0), Action::kReply, Rcode::kFormErr,
            "0 questions (exactly one is accepted)"},
           {Header(1, 0, 2, 0, 0, 0) + q + q, Action::kReply, Rcode::kFormErr,
            "2 questions (exactly one is accepted)"},
           {Header(1, 0, 1, 1, 0, 0) + q, Action::kReply, Rcode::kFormErr,
            "records other than one OPT in a query"},
           {Header(1, 0, 1, 0, 1, 0) + q, Action::kReply, Rcode::kFormErr,
            "records other than one OPT in a query"},
           {Header(1, 0, 1, 0, 0, 2) + q + Opt(512, 0) + Opt(512, 0), Action::kReply,
            Rcode::kFormErr, "records other than one OPT in a query"},
           {Header(1, 0, 1, 0, 0, 0) + U16(0xc00c) + U16(1) + U16(1), Action::kReply,
            Rcode::kFormErr, "compression pointer in the question"},
           {Header(1, 0, 1, 0, 0, 0) + U8(1) + "a" + U16(0xc00c) + U16(1) + U16(1), Action::kReply,
            Rcode::kFormErr, "compression pointer in the question"},
           {Header(1, 0, 1, 0, 0, 0) + U8(0x41) + "a" + U8(0) + U16(1) + U16(1), Action::kReply,
            Rcode::kFormErr, "extended label type in the question"},
           {Header(1, 0, 1, 0, 0, 0) + U8(0x80) + U8(0) + U16(1) + U16(1), Action::kReply,
            Rcode::kFormErr, "extended label type in the question"},
           {Header(1, 0, 1, 0, 0, 0) + U8(64) + std::string(64, 'l') + U8(0) + U16(1) + U16(1),
            Action::kReply, Rcode::kFormErr, "extended label type in the question"},
           {Header(1, 0, 1, 0, 0, 0) + name256 + U16(1) + U16(1), Action::kReply, Rcode::kFormErr,
            "question name longer than 255 octets"},
           {Header(1, 0, 1, 0, 0, 0) + U8(5) + "ab", Action::kReply, Rcode::kFormErr,
            "truncated question name"},
           {Header(1, 0, 1, 0, 0, 0) + Name({"a"}) + U16(1), Action::kReply, Rcode::kFormErr,
            "truncated question"},
           {Header(1, 0, 1, 0, 0, 0) + q + "x", Action::kReply, Rcode::kFormErr,
            "1 bytes after the message"},
           {Header(1, 0, 1, 0, 0, 1) + q, Action::kReply, Rcode::kFormErr,
            "truncated additional record"},
           {Header(1, 0, 1, 0, 0, 1) + q + Name({"key"}) + U16(250) + U16(255) + U32(0) + U16(0),
            Action::kReply, Rcode::kFormErr,
            "additional record is not an OPT (owner is not the root)"},
           {Header(1, 0, 1, 0, 0, 1) + q + U8(0) + U16(1) + U16(1) + U32(0) + U16(0),
            Action::kReply, Rcode::kFormErr, "additional record of type 1 (only OPT is accepted)"},
           {Header(1, 0, 1, 0, 0, 1) + q + Opt(1232, 0, U16(10) + U16(9) + "12345678"),
            Action::kReply, Rcode::kFormErr, "malformed EDNS option"},
           {Header(1, 0, 1, 0, 0, 1) + q + Opt(1232, 0, U16(10)), Action::kReply, Rcode::kFormErr,
            "malformed EDNS option"},
           {Header(1, 0, 1, 0, 0, 0) + Name({"a.b", "example"}) + U16(1) + U16(1), Action::kReply,
            Rcode::kRefused, "question name is not a host name"},
           {Header(1, 0, 1, 0, 0, 0) + Name({std::string("a\0b", 3)}) + U16(1) + U16(1),
            Action::kReply, Rcode::kRefused, "question name is not a host name"},
           {Header(1, 0, 1, 0, 0, 0) + Name({"*", "example"}) + U16(1) + U16(1), Action::kReply,
            Rcode::kRefused, "question name is not a host name"},
           {Header(1, 0, 1, 0, 0, 0) + Name({"caf\xc3\xa9"}) + U16(1) + U16(1), Action::kReply,
            Rcode::kRefused, "question name is not a host name"},
           {Header(1, 0, 1, 0, 0, 0) + Name({"127", "1"}) + U16(1) + U16(1), Action::kReply,
            Rcode::kRefused, "question name is not a host name"},
           {Header(1, 0, 1, 0, 0, 0) + Name({"10", "0", "0", "1"}) + U16(1) + U16(1),
            Action::kReply, Rcode::kRefused, "question name is not a host name"},
           {Header(1, 0, 1, 0, 0, 1) + q + Opt(1232, 0x00010000), Action::kReply, Rcode::kBadVers,
            "EDNS version 1"},
       }) {
    QueryParse r = Parse(c.in);
    EXPECT_EQ(r.action, c.action) << c.error;
    EXPECT_EQ(r.rcode, c.rcode) << c.error;
    EXPECT_EQ(r.error, c.error);
  }
  // At the limits: a 255-octet name and 63-octet labels are fine.
  QueryParse r = Parse(Header(1, 0, 1, 0, 0, 0) + name255 + U16(1) + U16(1));
  ASSERT_EQ(r.action, Action::kAnswer) << r.error;
  EXPECT_EQ(r.query.question->name.size(), 253u);
}

TEST(DnsMessageTest, RepliesToBadQueries) {
  // NOTIMP: no question was read; the header is echoed.
  QueryParse r = Parse(Header(0x1234, 0x1100, 0, 0, 0, 0));
  ASSERT_EQ(r.action, Action::kReply);
  std::vector<uint8_t> out = BuildResponse(r.query, r.rcode, {}, 0);
  EXPECT_EQ(std::string(out.begin(), out.end()), Header(0x1234, 0x9584, 0, 0, 0, 0));
  // REFUSED: the question echoed as received.
  const std::string weird = Name({"a b"}) + U16(1) + U16(1);
  r = Parse(Header(9, 0x0100, 1, 0, 0, 0) + weird);
  ASSERT_EQ(r.action, Action::kReply);
  Decoded d = Decode(BuildResponse(r.query, r.rcode, Addresses({"10.0.0.1"}), 60));
  EXPECT_EQ(d.flags, 0x8585);
  EXPECT_EQ(d.question, weird);
  EXPECT_EQ(d.an, 0);
  // BADVERS: rcode 16 = extended 1 in the OPT, 0 in the header; our OPT says version 0; DO copied.
  const std::string q = Name({"a", "example"}) + U16(kTypeA) + U16(kClassIn);
  r = Parse(Header(10, 0, 1, 0, 0, 1) + q + Opt(4096, 0x00018000));
  ASSERT_EQ(r.rcode, Rcode::kBadVers);
  d = Decode(BuildResponse(r.query, r.rcode, {}, 0));
  EXPECT_EQ(d.flags & 0x000f, 0);
  EXPECT_EQ(d.opt_ttl, 0x01008000u);
  EXPECT_EQ(d.opt_payload, 1232);
  // Without EDNS an extended rcode cannot be expressed: SERVFAIL.
  r = Parse(Header(11, 0, 1, 0, 0, 0) + q);
  d = Decode(BuildResponse(r.query, Rcode::kBadVers, {}, 0));
  EXPECT_EQ(d.flags & 0x000f, static_cast<uint16_t>(Rcode::kServFail));
  // CD is copied; DO is copied.
  r = Parse(Header(12, 0x0110, 1, 0, 0, 1) + q + Opt(1232, 0x8000));
  ASSERT_EQ(r.action, Action::kAnswer);
  EXPECT_TRUE(r.query.checking_disabled);
  EXPECT_TRUE(r.query.edns->dnssec_ok);
  d = Decode(BuildResponse(r.query, Rcode::kNoError, {}, 0));
  EXPECT_EQ(d.flags, 0x8590);
  EXPECT_EQ(d.opt_ttl, 0x00008000u);
}

TEST(DnsMessageTest, AnswerLimitsAndTruncation) {
  std::vector<IpAddress> many;
  for (int i = 0; i < 40; ++i) {
    IpAddress a = *ParseIpv6("2001:db8::");
    a.bytes[15] = static_cast<uint8_t>(i);
    many.push_back(a);
  }
  QueryParse plain = Parse(kGlibcQuery);
  // 512 bytes without EDNS: 12 + 21 (question) + 17 * 28 = 509.
  std::vector<uint8_t> out = BuildResponse(plain.query, Rcode::kNoError, many, 60);
  Decoded d = Decode(out);
  EXPECT_EQ(d.an, 17);
  EXPECT_EQ(out.size(), 509u);
  EXPECT_NE(d.flags & 0x0200, 0);  // TC
  // Over TCP: capped at kMaxDnsAnswers, not truncated.
  d = Decode(BuildResponse(plain.query, Rcode::kNoError, many, 60, Transport::kTcp));
  EXPECT_EQ(d.an, kMaxDnsAnswers);
  EXPECT_EQ(d.flags & 0x0200, 0);
  // EDNS: the client's size, capped at 1232 and at least 512.
  const std::string q = Name({"WwW", "ExAmple", "COM"}) + U16(kTypeAaaa) + U16(kClassIn);
  QueryParse big = Parse(Header(1, 0x0100, 1, 0, 0, 1) + q + Opt(4096, 0));
  d = Decode(BuildResponse(big.query, Rcode::kNoError, many, 60));
  EXPECT_EQ(d.an, kMaxDnsAnswers);
  EXPECT_EQ(d.flags & 0x0200, 0);
  QueryParse small = Parse(Header(1, 0x0100, 1, 0, 0, 1) + q + Opt(100, 0));
  out = BuildResponse(small.query, Rcode::kNoError, many, 60);
  EXPECT_LE(out.size(), 512u);
  EXPECT_EQ(Decode(out).an, 16);  // 12 + 21 + 11 + 16 * 28 = 492
  QueryParse mid = Parse(Header(1, 0x0100, 1, 0, 0, 1) + q + Opt(600, 0));
  out = BuildResponse(mid.query, Rcode::kNoError, many, 60);
  EXPECT_LE(out.size(), 600u);
  EXPECT_EQ(Decode(out).an, 19);
}

TEST(DnsMessageTest, TcpFraming) {
  std::vector<uint8_t> framed = FrameForTcp(std::span<const uint8_t>(testing::AsBytes(kDigQuery)));
  std::string stream(framed.begin(), framed.end());
  stream += stream;  // two queries back to back, as RFC 7766 §6.2.1 allows
  TcpFrame f = testing::CheckEveryPrefix(
      stream, [](std::string_view in) { return ReadTcpFrame(testing::AsBytes(in)); },
      [](const TcpFrame& a, const TcpFrame& b) {
        return a.status == b.status && a.consumed == b.consumed &&
               std::string_view(reinterpret_cast<const char*>(a.message.data()),
                                a.message.size()) ==
                   std::string_view(reinterpret_cast<const char*>(b.message.data()),
                                    b.message.size());
      });
  ASSERT_EQ(f.status, ParseStatus::kDone);
  EXPECT_EQ(f.consumed, kDigQuery.size() + 2);
  EXPECT_EQ(ParseQuery(f.message).action, Action::kAnswer);
  f = ReadTcpFrame(testing::AsBytes(std::string_view(stream).substr(f.consumed)));
  ASSERT_EQ(f.status, ParseStatus::kDone);
  EXPECT_EQ(ParseQuery(f.message).query.id, 0x1f2e);

  f = ReadTcpFrame(testing::AsBytes(U16(0) + "x"));
  EXPECT_EQ(f.status, ParseStatus::kError);
  EXPECT_EQ(f.error, "zero-length DNS message over TCP");
  // The largest frame, and one too large to frame.
  std::vector<uint8_t> max(kDnsTcpMessageBytes, 0xab);
  framed = FrameForTcp(max);
  ASSERT_EQ(framed.size(), kDnsTcpMessageBytes + 2);
  EXPECT_EQ(framed[0], 0xff);
  EXPECT_EQ(framed[1], 0xff);
  testing::GuardedBuffer g(std::span<const uint8_t>(framed.data(), framed.size()));
  EXPECT_EQ(ReadTcpFrame(g.bytes()).consumed, framed.size());
  EXPECT_EQ(ReadTcpFrame(g.bytes().first(framed.size() - 1)).status, ParseStatus::kNeedMore);
  max.push_back(0);
  EXPECT_TRUE(FrameForTcp(max).empty());
}

}  // namespace
}  // namespace srt::proxy::dns
