// SPDX-License-Identifier: Apache-2.0
// http/base64.cc: strict base64 (RFC 4648 §4).
#include "http/base64.h"

#include <cstdint>

namespace srt::proxy::http {
namespace {

constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

int Value(char c) {
  if (c >= 'A' && c <= 'Z') {
    return c - 'A';
  }
  if (c >= 'a' && c <= 'z') {
    return c - 'a' + 26;
  }
  if (c >= '0' && c <= '9') {
    return c - '0' + 52;
  }
  if (c == '+') {
    return 62;
  }
  if (c == '/') {
    return 63;
  }
  return -1;
}

}  // namespace

std::optional<std::string> DecodeBase64(std::string_view text) {
  if (text.size() % 4 != 0) {
    return std::nullopt;
  }
  std::string out;
  out.reserve(text.size() / 4 * 3);
  for (size_t i = 0; i < text.size(); i += 4) {
    const bool last = i + 4 == text.size();
    size_t pad = 0;
    if (last) {
      pad = text[i + 3] == '=' ? (text[i + 2] == '=' ? 2 : 1) : 0;
    }
    uint32_t quantum = 0;
    for (size_t j = 0; j < 4; ++j) {
      int v = 0;
      if (j < 4 - pad) {
        v = Value(text[i + j]);
        if (v < 0) {
          return std::nullopt;  // '=' in the middle, whitespace, or a foreign character
        }
      }
      quantum = (quantum << 6) | static_cast<uint32_t>(v);
    }
    out += static_cast<char>((quantum >> 16) & 0xff);
    if (pad == 2) {
      if ((quantum & 0xffff) != 0) {
        return std::nullopt;  // non-zero unused bits: a second spelling (RFC 4648 §3.5)
      }
      continue;
    }
    out += static_cast<char>((quantum >> 8) & 0xff);
    if (pad == 1) {
      if ((quantum & 0xff) != 0) {
        return std::nullopt;
      }
      continue;
    }
    out += static_cast<char>(quantum & 0xff);
  }
  return out;
}

std::string EncodeBase64(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (size_t i = 0; i < bytes.size(); i += 3) {
    const size_t n = bytes.size() - i < 3 ? bytes.size() - i : 3;
    uint32_t quantum = 0;
    for (size_t j = 0; j < 3; ++j) {
      quantum = (quantum << 8) | (j < n ? static_cast<uint8_t>(bytes[i + j]) : 0u);
    }
    out += kAlphabet[(quantum >> 18) & 63];
    out += kAlphabet[(quantum >> 12) & 63];
    out += n > 1 ? kAlphabet[(quantum >> 6) & 63] : '=';
    out += n > 2 ? kAlphabet[quantum & 63] : '=';
  }
  return out;
}

}  // namespace srt::proxy::http
