// SPDX-License-Identifier: Apache-2.0
// wire/byte_reader.h: the one bounds-checked cursor every proxy parser reads its input through
// (house style §2.6, c-ares ares_buf). No parser walks pointers by hand.
//
// A ByteReader views bytes it does not own. Every read either succeeds and advances, or fails
// (std::nullopt / false) and leaves the position unchanged, so a parser can stop at any point.
// Tag() and Rollback() give c-ares' tag/rollback for "parse a unit, or undo it and ask for more".
// Multi-byte integers are big-endian (network byte order).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string_view>

namespace srt::proxy {

class ByteReader {
 public:
  explicit ByteReader(std::span<const uint8_t> data) : data_(data) {}
  explicit ByteReader(std::span<const char> data)
      : data_(reinterpret_cast<const uint8_t*>(data.data()), data.size()) {}

  // Bytes read so far, bytes left, and whether nothing is left.
  size_t offset() const { return pos_; }
  size_t remaining() const { return data_.size() - pos_; }
  bool empty() const { return pos_ == data_.size(); }
  // The unread bytes, and the bytes read so far.
  std::span<const uint8_t> Rest() const { return data_.subspan(pos_); }
  std::span<const uint8_t> Consumed() const { return data_.first(pos_); }

  // Remembers the position; Rollback(tag) returns to it. A tag beyond the current position (one
  // not taken from this reader's past) is ignored rather than trusted.
  size_t Tag() const { return pos_; }
  void Rollback(size_t tag) {
    if (tag <= pos_) {
      pos_ = tag;
    }
  }

  std::optional<uint8_t> PeekU8() const {
    if (remaining() < 1) {
      return std::nullopt;
    }
    return data_[pos_];
  }
  std::optional<uint8_t> ReadU8() {
    std::optional<uint8_t> v = PeekU8();
    if (v) {
      ++pos_;
    }
    return v;
  }
  std::optional<uint16_t> ReadU16() {
    std::optional<uint64_t> v = ReadBigEndian(2);
    return v ? std::optional<uint16_t>(static_cast<uint16_t>(*v)) : std::nullopt;
  }
  std::optional<uint32_t> ReadU24() {
    std::optional<uint64_t> v = ReadBigEndian(3);
    return v ? std::optional<uint32_t>(static_cast<uint32_t>(*v)) : std::nullopt;
  }
  std::optional<uint32_t> ReadU32() {
    std::optional<uint64_t> v = ReadBigEndian(4);
    return v ? std::optional<uint32_t>(static_cast<uint32_t>(*v)) : std::nullopt;
  }

  // The next n bytes, or nullopt (and no advance) when fewer remain.
  std::optional<std::span<const uint8_t>> ReadBytes(size_t n) {
    if (remaining() < n) {
      return std::nullopt;
    }
    std::span<const uint8_t> out = data_.subspan(pos_, n);
    pos_ += n;
    return out;
  }
  std::optional<std::string_view> ReadString(size_t n) {
    std::optional<std::span<const uint8_t>> b = ReadBytes(n);
    if (!b) {
      return std::nullopt;
    }
    return std::string_view(reinterpret_cast<const char*>(b->data()), b->size());
  }
  // A reader over the next n bytes (a length-prefixed vector's body); this one moves past them.
  std::optional<ByteReader> ReadSub(size_t n) {
    std::optional<std::span<const uint8_t>> b = ReadBytes(n);
    if (!b) {
      return std::nullopt;
    }
    return ByteReader(*b);
  }
  bool Skip(size_t n) { return ReadBytes(n).has_value(); }

  // Where `byte` next occurs, counted from the current position, looking at no more than `limit`
  // bytes; nullopt when it does not occur there.
  std::optional<size_t> Find(uint8_t byte, size_t limit = SIZE_MAX) const {
    size_t n = remaining() < limit ? remaining() : limit;
    if (n == 0) {
      return std::nullopt;
    }
    const void* hit = std::memchr(data_.data() + pos_, byte, n);
    if (hit == nullptr) {
      return std::nullopt;
    }
    return static_cast<size_t>(static_cast<const uint8_t*>(hit) - (data_.data() + pos_));
  }

 private:
  std::optional<uint64_t> ReadBigEndian(size_t n) {
    std::optional<std::span<const uint8_t>> b = ReadBytes(n);
    if (!b) {
      return std::nullopt;
    }
    uint64_t v = 0;
    for (uint8_t byte : *b) {
      v = (v << 8) | byte;
    }
    return v;
  }

  std::span<const uint8_t> data_;
  size_t pos_ = 0;
};

}  // namespace srt::proxy
