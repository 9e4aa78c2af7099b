// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: the SOCKS5 handshake parsers (socks5/socks5_parser.h), each on the input and
// all three in sequence as a session reads them. Properties: `consumed` stays within the input; a
// parsed message re-parses identically from exactly its own bytes and its one-byte-shorter prefix
// asks for more; errors carry a reason (and a request error REP 1, 2 or 8); a domain name is
// 1..255 bytes of visible ASCII without an address, and CanonicalizeHost accepts it or refuses it
// as a "malformed host" (the session's REP 2); a parsed address round-trips through Reply().
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <vector>

#include "base/address.h"
#include "base/host.h"
#include "proxy_limits.h"
#include "socks5/socks5_parser.h"
#include "wire/ascii.h"

namespace {

using srt::CanonicalizeHost;
using srt::Host;
using srt::HostFromAddress;
using srt::kMalformedHost;
using namespace srt::proxy;          // NOLINT(google-build-using-namespace)
using namespace srt::proxy::socks5;  // NOLINT(google-build-using-namespace)

void Require(bool condition) {
  if (!condition) {
    std::abort();
  }
}

template <typename R, typename Parse, typename Same>
R Check(std::span<const uint8_t> in, Parse parse, Same same) {
  R r = parse(in);
  if (r.status == ParseStatus::kError) {
    Require(!r.error.empty() && r.consumed == 0);
    return r;
  }
  if (r.status == ParseStatus::kNeedMore) {
    Require(r.consumed == 0);
    return r;
  }
  Require(r.consumed > 0 && r.consumed <= in.size());
  R exact = parse(in.first(r.consumed));
  Require(exact.status == ParseStatus::kDone && exact.consumed == r.consumed && same(exact, r));
  Require(parse(in.first(r.consumed - 1)).status == ParseStatus::kNeedMore);
  return r;
}

size_t CheckGreeting(std::span<const uint8_t> in) {
  GreetingResult g = Check<GreetingResult>(
      in, [](std::span<const uint8_t> b) { return ParseGreeting(b); },
      [](const GreetingResult& a, const GreetingResult& b) { return a.greeting == b.greeting; });
  if (g.status == ParseStatus::kDone) {
    Require(g.greeting.methods.size() + 2 == g.consumed);
  }
  return g.status == ParseStatus::kDone ? g.consumed : 0;
}

size_t CheckUserPass(std::span<const uint8_t> in) {
  UserPassResult u = Check<UserPassResult>(
      in, [](std::span<const uint8_t> b) { return ParseUserPass(b); },
      [](const UserPassResult& a, const UserPassResult& b) {
        return a.credentials == b.credentials;
      });
  if (u.status == ParseStatus::kDone) {
    Require(u.credentials.username.size() <= kMaxSocksUsernameBytes);
    Require(u.credentials.password.size() <= kMaxSocksPasswordBytes);
    Require(u.consumed == 3 + u.credentials.username.size() + u.credentials.password.size());
  }
  return u.status == ParseStatus::kDone ? u.consumed : 0;
}

size_t CheckRequest(std::span<const uint8_t> in) {
  RequestResult r = Check<RequestResult>(
      in, [](std::span<const uint8_t> b) { return ParseRequest(b); },
      [](const RequestResult& a, const RequestResult& b) { return a.request == b.request; });
  if (r.status == ParseStatus::kError) {
    Require(r.reply == kReplyGeneralFailure || r.reply == kReplyNotAllowed ||
            r.reply == kReplyAddressTypeNotSupported);
    return 0;
  }
  if (r.status != ParseStatus::kDone) {
    return 0;
  }
  const Request& q = r.request;
  Require((q.address_type == kAddressDomain) == !q.address.has_value());
  if (!q.address) {
    Require(!q.host.empty() && q.host.size() <= 255 && ascii::IsVisible(q.host));
    srt::Result<Host> host = CanonicalizeHost(q.host);
    Require(host.has_value() || host.error().message().starts_with(kMalformedHost));
  } else {
    Require(q.host == srt::FormatIpAddress(*q.address));
    Require(HostFromAddress(*q.address).is_ip());
  }
  if (q.address) {
    // The same layout as a request: our reply parses back to the same address and port.
    std::vector<uint8_t> reply = Reply(kReplySucceeded, q.address, q.port);
    reply[1] = kCommandConnect;
    RequestResult back = ParseRequest(reply);
    Require(back.status == ParseStatus::kDone && back.request.address == q.address &&
            back.request.port == q.port && back.consumed == reply.size());
  }
  return r.consumed;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::span<const uint8_t> in(data, size);
  CheckGreeting(in);
  CheckUserPass(in);
  CheckRequest(in);
  // As a session reads them: greeting, [username/password], request, from one stream.
  size_t at = CheckGreeting(in);
  if (at == 0) {
    return 0;
  }
  if (size_t auth = CheckUserPass(in.subspan(at)); auth > 0) {
    at += auth;
  }
  CheckRequest(in.subspan(at));
  Require(!(LooksLikeSocks5(data[0]) && LooksLikeSocks4(data[0])));
  return 0;
}
