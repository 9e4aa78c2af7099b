// SPDX-License-Identifier: Apache-2.0
#include "tls/client_hello.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/host.h"
#include "proxy_limits.h"
#include "tls/captured_hellos.h"
#include "wire/parser_test_util.h"

namespace srt::proxy::tls {
namespace {

std::string FromHex(std::string_view hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out += static_cast<char>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16));
  }
  return out;
}

std::string U8(size_t v) { return std::string(1, static_cast<char>(v & 0xff)); }
std::string U16(size_t v) { return U8(v >> 8) + U8(v); }
std::string U24(size_t v) { return U8(v >> 16) + U16(v & 0xffff); }

// A ClientHello body (RFC 8446 §4.1.2) with the given extensions; `extensions` nullopt leaves the
// extensions block out altogether.
std::string HelloBody(const std::optional<std::vector<std::pair<uint16_t, std::string>>>& ext) {
  std::string body = U16(0x0303) + std::string(32, 'r') + U8(32) + std::string(32, 's') + U16(4) +
                     U16(0x1301) + U16(0x1302) + U8(1) + U8(0);
  if (ext) {
    std::string block;
    for (const auto& [type, data] : *ext) {
      block += U16(type) + U16(data.size()) + data;
    }
    body += U16(block.size()) + block;
  }
  return body;
}
std::string ServerName(const std::vector<std::pair<uint8_t, std::string>>& names) {
  std::string list;
  for (const auto& [type, name] : names) {
    list += U8(type) + U16(name.size()) + name;
  }
  return U16(list.size()) + list;
}
std::string Handshake(const std::string& body, uint8_t type = 1) {
  return U8(type) + U24(body.size()) + body;
}
// Cuts a handshake message into records of at most `fragment` bytes.
std::string Records(const std::string& handshake, size_t fragment = 16384,
                    uint16_t version = 0x0301) {
  std::string out;
  for (size_t i = 0; i < handshake.size(); i += fragment) {
    std::string piece = handshake.substr(i, fragment);
    out += U8(22) + U16(version) + U16(piece.size()) + piece;
  }
  return out;
}
std::string HelloWithSni(const std::string& name, size_t fragment = 16384) {
  return Records(Handshake(HelloBody({{{0, ServerName({{0, name}})}, {43, U8(2) + U16(0x0304)}}})),
                 fragment);
}

bool Same(const SniResult& a, const SniResult& b) {
  return a.status == b.status && a.host == b.host && a.consumed == b.consumed && a.error == b.error;
}

// Whole, against a guard page, and every prefix (each against a guard page): prefixes are
// kNeedMore until the result is decided, and then give the whole input's result.
SniResult Extract(std::string_view in) {
  SniResult whole = ExtractSni(testing::AsBytes(in));
  testing::GuardedBuffer g(in);
  EXPECT_TRUE(Same(ExtractSni(g.bytes()), whole));
  bool decided = false;
  for (size_t k = 0; k < in.size(); ++k) {
    testing::GuardedBuffer p(in.substr(0, k));
    SniResult r = ExtractSni(p.bytes());
    if (r.status == SniStatus::kNeedMore) {
      EXPECT_FALSE(decided) << "prefix " << k << " undecided again";
      continue;
    }
    decided = true;
    EXPECT_TRUE(Same(r, whole)) << "prefix " << k << ": " << r.error << " vs " << whole.error;
  }
  return whole;
}

TEST(SniTest, CapturedHellos) {
  std::string hello = FromHex(testdata::kOpenSslTls13);
  SniResult r = Extract(hello);
  ASSERT_EQ(r.status, SniStatus::kFound) << r.error;
  EXPECT_EQ(r.host, "example.com");
  EXPECT_EQ(r.consumed, hello.size());

  hello = FromHex(testdata::kOpenSslTls12NoSni);
  r = Extract(hello);
  ASSERT_EQ(r.status, SniStatus::kNoSni) << r.error;
  EXPECT_EQ(r.consumed, hello.size());

  hello = FromHex(testdata::kCurl);
  r = Extract(hello);
  ASSERT_EQ(r.status, SniStatus::kFound) << r.error;
  EXPECT_EQ(r.host, "example.org");
  EXPECT_EQ(r.consumed, 517u);

  hello = FromHex(testdata::kPython);
  r = Extract(hello + "\x17\x03\x03\x00\x05hello");  // whatever follows is not looked at
  ASSERT_EQ(r.status, SniStatus::kFound) << r.error;
  EXPECT_EQ(r.host, "api.example.net");
  EXPECT_EQ(r.consumed, hello.size());
}

TEST(SniTest, FragmentedHellosAreReassembled) {
  const std::string handshake = FromHex(testdata::kOpenSslTls13).substr(5);
  for (size_t fragment : {1u, 2u, 3u, 4u, 5u, 100u, 311u, 312u}) {
    std::string records = Records(handshake, fragment);
    SniResult r = fragment > 5 ? Extract(records) : ExtractSni(testing::AsBytes(records));
    ASSERT_EQ(r.status, SniStatus::kFound) << fragment << ": " << r.error;
    EXPECT_EQ(r.host, "example.com");
    EXPECT_EQ(r.consumed, records.size());
  }
  // A ClientHello followed by more handshake bytes in its last record: the hello ends where its
  // length says.
  std::string two = Records(handshake + Handshake("x", 20));
  EXPECT_EQ(Extract(two).status, SniStatus::kFound);
  // Any other record type before the hello is complete is malformed.
  std::string records = Records(handshake, 100);
  records.insert(105, U8(23) + U16(0x0303) + U16(1) + "x");
  EXPECT_EQ(Extract(records).status, SniStatus::kMalformed);
  records = Records(handshake, 100);
  records[106] = 0x02;  // the second record's version
  EXPECT_EQ(Extract(records).status, SniStatus::kMalformed);
}

TEST(SniTest, NotTls) {
  for (std::string_view in : {std::string_view("GET / HTTP/1.1\r\n"), std::string_view("C"),
                              std::string_view("\x05\x01\x00", 3),  // SOCKS5
                              std::string_view("\x80\x2e\x01", 3),  // SSLv2-style hello
                              std::string_view("\x16\x02", 2), std::string_view("\x16\x03\x05", 3),
                              std::string_view("\x17\x03\x03\x00\x10", 5)}) {
    SniResult r = Extract(in);
    EXPECT_EQ(r.status, SniStatus::kNotTls) << in;
  }
  EXPECT_EQ(ExtractSni({}).status, SniStatus::kNeedMore);
  EXPECT_EQ(Extract(std::string_view("\x16\x03", 2)).status, SniStatus::kNeedMore);
  EXPECT_EQ(Extract(std::string_view("\x16\x03\x00", 3)).status, SniStatus::kNeedMore);
}

TEST(SniTest, NamesAndEntries) {
  SniResult r = Extract(HelloWithSni("WWW.Example.COM"));
  ASSERT_EQ(r.status, SniStatus::kFound);
  EXPECT_EQ(r.host, "WWW.Example.COM");  // as sent; CanonicalizeHost lower-cases
  r = Extract(HelloWithSni("10.0.0.1"));
  ASSERT_EQ(r.status, SniStatus::kFound);
  EXPECT_EQ(r.host, "10.0.0.1");
  // Entries of unknown name types are skipped.
  r = Extract(
      Records(Handshake(HelloBody({{{0, ServerName({{7, "opaque"}, {0, "a.example"}})}}}))));
  ASSERT_EQ(r.status, SniStatus::kFound) << r.error;
  EXPECT_EQ(r.host, "a.example");
  r = Extract(Records(Handshake(HelloBody({{{0, ServerName({{7, "opaque"}})}}}))));
  EXPECT_EQ(r.status, SniStatus::kNoSni);
  // No extensions block at all; an empty one; extensions without server_name.
  EXPECT_EQ(Extract(Records(Handshake(HelloBody(std::nullopt)))).status, SniStatus::kNoSni);
  EXPECT_EQ(Extract(Records(Handshake(HelloBody({{}})))).status, SniStatus::kNoSni);
  EXPECT_EQ(Extract(Records(Handshake(HelloBody({{{10, U16(2) + U16(29)}}})))).status,
            SniStatus::kNoSni);
  // The longest name accepted: kMaxSniHostBytes (255), CanonicalizeHost's limit too.
  std::string name;
  while (name.size() + 4 <= kMaxSniHostBytes) {
    name += "abc.";
  }
  name += "xyz";
  ASSERT_EQ(name.size(), kMaxSniHostBytes);
  r = Extract(HelloWithSni(name));
  ASSERT_EQ(r.status, SniStatus::kFound);
  EXPECT_EQ(r.host, name);
  EXPECT_TRUE(CanonicalizeHost(r.host).has_value());
}

// The server_name is checked for structure only and handed on as sent; the capture session runs
// CanonicalizeHost (filter/host.h) on it, which judges and normalises it.
TEST(SniTest, NamesAreJudgedByCanonicalizeHostNotByTheExtractor) {
  struct Case {
    std::string name;
    std::string canonical;  // CanonicalizeHost(host)->text; empty: "malformed host"
  };
  for (const Case& c : {
           Case{"127.1", "127.0.0.1"},
           Case{"2130706433", "127.0.0.1"},
           Case{"Example.COM.", "example.com"},
           Case{"::1", "::1"},
           Case{"xn--bcher-kva.example", "xn--bcher-kva.example"},
           Case{"a..b", ""},
           Case{"a.123", ""},
           Case{"*.example.com", ""},
           Case{"exa%6dple.com", ""},
       }) {
    SniResult r = Extract(HelloWithSni(c.name));
    ASSERT_EQ(r.status, SniStatus::kFound) << c.name << ": " << r.error;
    EXPECT_EQ(r.host, c.name);
    Result<Host> host = CanonicalizeHost(r.host);
    if (c.canonical.empty()) {
      ASSERT_FALSE(host.has_value()) << c.name << " -> " << host->text;
      EXPECT_TRUE(host.error().message().starts_with(kMalformedHost)) << host.error().message();
    } else {
      ASSERT_TRUE(host.has_value()) << c.name << ": " << host.error().message();
      EXPECT_EQ(host->text, c.canonical) << c.name;
    }
  }
}

TEST(SniTest, Malformed) {
  struct Case {
    std::string in;
    std::string error;
  };
  const std::string sni = ServerName({{0, "a.example"}});
  const std::string ok_body = HelloBody({{{0, sni}}});
  std::string truncated_random = U16(0x0303) + std::string(10, 'r');
  for (const Case& c : std::vector<Case>{
           {U8(22) + U16(0x0301) + U16(0), "bad record length"},
           {U8(22) + U16(0x0301) + U16(16385), "bad record length"},
           {Records(Handshake(ok_body, 2)), "first handshake message is not a ClientHello"},
           {Records(Handshake("")), "ClientHello: bad legacy_version"},
           {Records(Handshake(U16(0x0203) + ok_body.substr(2))), "ClientHello: bad legacy_version"},
           {Records(Handshake(truncated_random)), "ClientHello: truncated random"},
           {Records(Handshake(U16(0x0303) + std::string(32, 'r') + U8(33) + std::string(33, 's'))),
            "ClientHello: bad legacy_session_id"},
           {Records(Handshake(U16(0x0303) + std::string(32, 'r') + U8(0) + U16(3) + "abc" + U8(1) +
                              U8(0))),
            "ClientHello: bad cipher_suites"},
           {Records(Handshake(U16(0x0303) + std::string(32, 'r') + U8(0) + U16(0) + U8(1) + U8(0))),
            "ClientHello: bad cipher_suites"},
           {Records(Handshake(U16(0x0303) + std::string(32, 'r') + U8(0) + U16(2) + "ab" + U8(0))),
            "ClientHello: bad legacy_compression_methods"},
           {Records(Handshake(ok_body + "x")),
            "ClientHello: extensions do not fill the rest of the hello"},
           {Records(Handshake(ok_body.substr(0, ok_body.size() - 1))),
            "ClientHello: extensions do not fill the rest of the hello"},
           {Records(Handshake(HelloBody({{{0, sni}, {0, sni}}}))),
            "server_name: more than one host_name"},
           {Records(Handshake(HelloBody({{{10, "x"}, {0, sni}, {10, "y"}}}))),
            "ClientHello: an extension appears twice"},
           {Records(Handshake(HelloBody({{{0, ""}}}))), "server_name: bad server_name_list length"},
           {Records(Handshake(HelloBody({{{0, U16(0)}}}))),
            "server_name: bad server_name_list length"},
           {Records(Handshake(HelloBody({{{0, sni + "x"}}}))),
            "server_name: bad server_name_list length"},
           {Records(Handshake(HelloBody({{{0, U16(3) + U8(0) + U16(5)}}}))),
            "server_name: truncated entry"},
           {Records(
                Handshake(HelloBody({{{0, ServerName({{0, "a.example"}, {0, "b.example"}})}}}))),
            "server_name: more than one host_name"},
           {Records(Handshake(HelloBody({{{0, ServerName({{0, ""}})}}}))),
            "server_name: empty host_name"},
           {Records(
                Handshake(HelloBody({{{0, ServerName({{0, std::string("a\0b.example", 11)}})}}}))),
            "server_name: host_name 'a\\x00b.example' has a byte outside visible ASCII"},
           {Records(Handshake(HelloBody({{{0, ServerName({{0, "a b"}})}}}))),
            "server_name: host_name 'a b' has a byte outside visible ASCII"},
           {Records(Handshake(HelloBody({{{0, ServerName({{0, "a.example\r\n"}})}}}))),
            "server_name: host_name 'a.example\\x0d\\x0a' has a byte outside visible ASCII"},
           {Records(Handshake(HelloBody({{{0, ServerName({{0,
                                                           "b\xc3\xbc"
                                                           "cher.example"}})}}}))),
            "server_name: host_name 'b\\xc3\\xbccher.example' has a byte outside visible ASCII"},
           {Records(Handshake(HelloBody({{{0, ServerName({{0, std::string(256, 'a')}})}}}))),
            "server_name: host_name longer than 255 bytes"},
       }) {
    SniResult r = Extract(c.in);
    EXPECT_EQ(r.status, SniStatus::kMalformed) << c.error;
    EXPECT_EQ(r.error, c.error);
    EXPECT_TRUE(r.host.empty());
  }
}

TEST(SniTest, SixteenKiBLimit) {
  // A padding extension (RFC 7685, type 21) grows the hello to exactly the limit, record headers
  // included, in two records; one byte more is refused as soon as the record header says so.
  auto hello_of_size = [](size_t total) {
    const std::string base =
        Records(Handshake(HelloBody({{{0, ServerName({{0, "a.example"}})}, {21, ""}}})), 8192);
    // The padded hello takes two records where the base takes one; beyond that each byte of
    // padding is one more byte in total.
    size_t pad = total - base.size() - 5;
    return Records(
        Handshake(HelloBody({{{0, ServerName({{0, "a.example"}})}, {21, std::string(pad, '\0')}}})),
        8192);
  };
  std::string at = hello_of_size(kMaxTlsClientHelloBytes);
  ASSERT_EQ(at.size(), kMaxTlsClientHelloBytes);
  SniResult r = ExtractSni(testing::AsBytes(at));
  ASSERT_EQ(r.status, SniStatus::kFound) << r.error;
  EXPECT_EQ(r.consumed, kMaxTlsClientHelloBytes);
  testing::GuardedBuffer g(at);
  EXPECT_EQ(ExtractSni(g.bytes()).status, SniStatus::kFound);

  std::string over = hello_of_size(kMaxTlsClientHelloBytes + 1);
  r = ExtractSni(testing::AsBytes(over));
  EXPECT_EQ(r.status, SniStatus::kMalformed);
  EXPECT_EQ(r.error, "ClientHello larger than 16 KiB");
  // Decided from the first record's handshake header, long before 16 KiB arrive.
  r = ExtractSni(testing::AsBytes(over).first(8192 + 5));
  EXPECT_EQ(r.status, SniStatus::kMalformed);
  // A single record of 2^14 bytes cannot fit with its header either.
  r = ExtractSni(testing::AsBytes(U8(22) + U16(0x0301) + U16(16384)));
  EXPECT_EQ(r.error, "ClientHello larger than 16 KiB");
}

}  // namespace
}  // namespace srt::proxy::tls
