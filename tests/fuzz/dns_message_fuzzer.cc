// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: the DNS stub's wire format (dns/message.h). Properties: an answered query has
// a lower-case host-name question of at most 255 wire octets; every query that is answered or
// replied to yields a response within the transport's size, with the same ID and the question
// echoed byte for byte, which the stub itself would never answer (QR set); TCP framing
// round-trips.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/address.h"
#include "dns/message.h"
#include "proxy_limits.h"
#include "wire/ascii.h"

namespace {

using namespace srt::proxy;       // NOLINT(google-build-using-namespace)
using namespace srt::proxy::dns;  // NOLINT(google-build-using-namespace)

void Require(bool condition) {
  if (!condition) {
    std::abort();
  }
}

std::vector<srt::IpAddress> SomeAddresses(size_t n) {
  std::vector<srt::IpAddress> out;
  for (size_t i = 0; i < n; ++i) {
    srt::IpAddress a;
    a.family = i % 2 ? srt::IpAddress::Family::kIpv6 : srt::IpAddress::Family::kIpv4;
    a.bytes[0] = 10;
    a.bytes[3] = static_cast<uint8_t>(i);
    out.push_back(a);
  }
  return out;
}

void CheckResponse(const Query& query, Rcode rcode, size_t answers, Transport transport) {
  std::vector<uint8_t> out = BuildResponse(query, rcode, SomeAddresses(answers), 60, transport);
  size_t limit = kDnsTcpMessageBytes;
  if (transport == Transport::kUdp) {
    limit = query.edns ? kDnsEdnsUdpMessageBytes : kDnsUdpMessageBytes;
  }
  Require(out.size() >= 12 && out.size() <= limit);
  Require(out[0] == (query.id >> 8) && out[1] == (query.id & 0xff));
  Require((out[2] & 0x80) != 0);
  if (query.question) {
    const std::vector<uint8_t>& name = query.question->wire_name;
    Require(out.size() >= 12 + name.size() + 4);
    Require(std::equal(name.begin(), name.end(), out.begin() + 12));
  }
  Require(ParseQuery(out).action == QueryParse::Action::kDrop);
  std::vector<uint8_t> framed = FrameForTcp(out);
  TcpFrame f = ReadTcpFrame(framed);
  Require(f.status == ParseStatus::kDone && f.consumed == framed.size() &&
          f.message.size() == out.size());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::span<const uint8_t> in(data, size);
  QueryParse q = ParseQuery(in);
  switch (q.action) {
    case QueryParse::Action::kDrop:
      Require(!q.error.empty());
      break;
    case QueryParse::Action::kAnswer: {
      Require(q.query.question.has_value() && q.query.opcode == 0);
      const Question& question = *q.query.question;
      Require(question.wire_name.size() <= kMaxDnsNameWireBytes);
      Require(question.name.size() <= kMaxDnsNameTextBytes);
      for (char c : question.name) {
        Require(ascii::IsHostNameChar(c) && !(c >= 'A' && c <= 'Z'));
      }
      const size_t last_dot = question.name.rfind('.');
      const std::string_view last_label =
          std::string_view(question.name).substr(last_dot == std::string::npos ? 0 : last_dot + 1);
      Require(question.name.empty() ||
              last_label.find_first_not_of("0123456789") != std::string_view::npos);
      Require(!q.query.edns || q.query.edns->version == 0);
      for (size_t n : {size_t{0}, size_t{3}, size_t{40}}) {
        CheckResponse(q.query, Rcode::kNoError, n, Transport::kUdp);
        CheckResponse(q.query, Rcode::kNoError, n, Transport::kTcp);
      }
      CheckResponse(q.query, Rcode::kNxDomain, 0, Transport::kUdp);
      break;
    }
    case QueryParse::Action::kReply:
      Require(!q.error.empty() && q.rcode != Rcode::kNoError);
      CheckResponse(q.query, q.rcode, 3, Transport::kUdp);
      break;
  }
  // The input as a TCP stream.
  TcpFrame f = ReadTcpFrame(in);
  if (f.status == ParseStatus::kDone) {
    Require(f.consumed == f.message.size() + 2 && f.consumed <= size);
    Require(f.message.data() == data + 2);
    (void)ParseQuery(f.message);
  }
  return 0;
}
