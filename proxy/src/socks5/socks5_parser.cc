// SPDX-License-Identifier: Apache-2.0
// socks5/socks5_parser.cc: SOCKS5 handshake messages (RFC 1928, RFC 1929).
#include "socks5/socks5_parser.h"

#include <algorithm>
#include <string>
#include <utility>

#include "wire/ascii.h"
#include "wire/byte_reader.h"

namespace srt::proxy::socks5 {
namespace {

template <typename R>
R Done(size_t consumed) {
  R r;
  r.status = ParseStatus::kDone;
  r.consumed = consumed;
  return r;
}

template <typename R>
// NOLINTNEXTLINE(performance-unnecessary-value-param): clang-tidy 14 misses the move below
R Fail(std::string why) {
  R r;
  r.status = ParseStatus::kError;
  r.error = std::move(why);
  return r;
}

std::string VersionError(uint8_t version, uint8_t expected) {
  std::string out = "unsupported version " + std::to_string(version) + " (expected " +
                    std::to_string(expected) + ")";
  if (version == 0x04) {
    out += ": SOCKS4 is not supported, it cannot authenticate";
  }
  return out;
}

}  // namespace

bool Greeting::Offers(uint8_t method) const {
  return std::find(methods.begin(), methods.end(), method) != methods.end();
}

GreetingResult ParseGreeting(std::span<const uint8_t> in) {
  ByteReader r(in);
  std::optional<uint8_t> version = r.ReadU8();
  if (!version) {
    return {};
  }
  if (*version != kVersion) {
    return Fail<GreetingResult>(VersionError(*version, kVersion));
  }
  std::optional<uint8_t> count = r.ReadU8();
  if (!count) {
    return {};
  }
  std::optional<std::span<const uint8_t>> methods = r.ReadBytes(*count);
  if (!methods) {
    return {};
  }
  GreetingResult out = Done<GreetingResult>(r.offset());
  out.greeting.methods.assign(methods->begin(), methods->end());
  return out;
}

UserPassResult ParseUserPass(std::span<const uint8_t> in) {
  ByteReader r(in);
  std::optional<uint8_t> version = r.ReadU8();
  if (!version) {
    return {};
  }
  if (*version != kUserPassVersion) {
    return Fail<UserPassResult>("username/password: " + VersionError(*version, kUserPassVersion));
  }
  // ULEN and PLEN are single octets: 255 (kMaxSocksUsernameBytes) is the most either can be.
  std::optional<uint8_t> ulen = r.ReadU8();
  std::optional<std::string_view> user = ulen ? r.ReadString(*ulen) : std::nullopt;
  std::optional<uint8_t> plen = user ? r.ReadU8() : std::nullopt;
  std::optional<std::string_view> pass = plen ? r.ReadString(*plen) : std::nullopt;
  if (!pass) {
    return {};
  }
  UserPassResult out = Done<UserPassResult>(r.offset());
  out.credentials = UserPass{std::string(*user), std::string(*pass)};
  return out;
}

RequestResult ParseRequest(std::span<const uint8_t> in) {
  auto fail = [](uint8_t reply, std::string why) {
    RequestResult out = Fail<RequestResult>(std::move(why));
    out.reply = reply;
    return out;
  };
  ByteReader r(in);
  std::optional<uint8_t> version = r.ReadU8();
  if (!version) {
    return {};
  }
  if (*version != kVersion) {
    return fail(kReplyGeneralFailure, VersionError(*version, kVersion));
  }
  std::optional<uint8_t> command = r.ReadU8();
  std::optional<uint8_t> reserved = command ? r.ReadU8() : std::nullopt;
  std::optional<uint8_t> atyp = reserved ? r.ReadU8() : std::nullopt;
  if (!atyp) {
    return {};
  }
  Request request;
  request.command = *command;
  request.address_type = *atyp;
  switch (*atyp) {
    case kAddressIpv4:
    case kAddressIpv6: {
      const size_t length = *atyp == kAddressIpv4 ? 4 : 16;
      std::optional<std::span<const uint8_t>> bytes = r.ReadBytes(length);
      if (!bytes) {
        return {};
      }
      IpAddress address;
      address.family = length == 4 ? IpAddress::Family::kIpv4 : IpAddress::Family::kIpv6;
      std::copy(bytes->begin(), bytes->end(), address.bytes.begin());
      request.host = FormatIpAddress(address);
      request.address = address;
      break;
    }
    case kAddressDomain: {
      // RFC 1928 §5: ATYP 0x03 = one length octet, then the name, no terminating NUL.
      std::optional<uint8_t> length = r.ReadU8();
      std::optional<std::string_view> name = length ? r.ReadString(*length) : std::nullopt;
      if (!name) {
        return {};
      }
      // Only what cannot be a text host: anything else is CanonicalizeHost's to judge.
      if (name->empty()) {
        return fail(kReplyNotAllowed, "malformed host: empty domain name");
      }
      if (!ascii::IsVisible(*name)) {
        return fail(kReplyNotAllowed, "malformed host: domain name " +
                                          ascii::QuoteForMessage(*name) +
                                          " has a byte outside visible ASCII");
      }
      request.host = std::string(*name);
      break;
    }
    default:
      return fail(kReplyAddressTypeNotSupported,
                  "unsupported address type " + std::to_string(*atyp));
  }
  std::optional<uint16_t> port = r.ReadU16();
  if (!port) {
    return {};
  }
  request.port = *port;
  RequestResult out = Done<RequestResult>(r.offset());
  out.request = std::move(request);
  return out;
}

std::array<uint8_t, 2> MethodSelection(uint8_t method) { return {kVersion, method}; }

std::array<uint8_t, 2> UserPassStatus(bool ok) {
  return {kUserPassVersion, static_cast<uint8_t>(ok ? 0x00 : 0x01)};
}

std::vector<uint8_t> Reply(uint8_t rep, const std::optional<IpAddress>& bound,
                           uint16_t bound_port) {
  std::vector<uint8_t> out = {kVersion, rep, 0x00};
  if (bound && bound->family == IpAddress::Family::kIpv6) {
    out.push_back(kAddressIpv6);
    out.insert(out.end(), bound->bytes.begin(), bound->bytes.end());
  } else {
    out.push_back(kAddressIpv4);
    if (bound) {
      out.insert(out.end(), bound->bytes.begin(), bound->bytes.begin() + 4);
    } else {
      out.insert(out.end(), 4, 0x00);
      bound_port = 0;
    }
  }
  out.push_back(static_cast<uint8_t>(bound_port >> 8));
  out.push_back(static_cast<uint8_t>(bound_port & 0xff));
  return out;
}

}  // namespace srt::proxy::socks5
