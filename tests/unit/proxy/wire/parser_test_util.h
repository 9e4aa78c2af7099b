// SPDX-License-Identifier: Apache-2.0
// wire/parser_test_util.h: the house style §2.9 harness for the proxy's parsers: inputs placed
// against a PROT_NONE guard page (picohttpparser's trick), and every-prefix checks that hold for
// input fed whole, byte by byte, or split at any offset.
#pragma once

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "wire/parse_status.h"

namespace srt::proxy::testing {

// A copy of some bytes that ends exactly where a PROT_NONE page begins, so any read past the end
// faults (SIGSEGV) instead of silently reading a neighbour, sanitizers or not.
class GuardedBuffer {
 public:
  explicit GuardedBuffer(std::span<const uint8_t> data) {
    page_ = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    const size_t data_pages = (data.size() + page_ - 1) / page_ + 1;
    length_ = (data_pages + 1) * page_;
    void* m = mmap(nullptr, length_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) {
      ADD_FAILURE() << "mmap failed";
      return;
    }
    base_ = static_cast<uint8_t*>(m);
    uint8_t* guard = base_ + data_pages * page_;
    if (mprotect(guard, page_, PROT_NONE) != 0) {
      ADD_FAILURE() << "mprotect failed";
    }
    start_ = guard - data.size();
    if (!data.empty()) {
      std::memcpy(start_, data.data(), data.size());
    }
    size_ = data.size();
  }
  explicit GuardedBuffer(std::string_view data)
      : GuardedBuffer(
            std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(data.data()), data.size())) {}
  GuardedBuffer(const GuardedBuffer&) = delete;
  GuardedBuffer& operator=(const GuardedBuffer&) = delete;
  ~GuardedBuffer() {
    if (base_ != nullptr) {
      munmap(base_, length_);
    }
  }

  std::span<const uint8_t> bytes() const { return {start_, size_}; }
  std::span<const char> chars() const { return {reinterpret_cast<const char*>(start_), size_}; }

 private:
  size_t page_ = 0;
  size_t length_ = 0;
  uint8_t* base_ = nullptr;
  uint8_t* start_ = nullptr;
  size_t size_ = 0;
};

inline std::span<const uint8_t> AsBytes(std::string_view s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}
inline std::span<const char> AsChars(std::string_view s) { return {s.data(), s.size()}; }

// For a stateless parser `parse(std::string_view prefix) -> R` (R has `status` and `consumed`),
// checks what feeding `input` in pieces means for such a parser:
//   - every prefix shorter than a kDone message is kNeedMore; a prefix holding the whole message
//     gives exactly the whole input's result (`same`), whatever follows it;
//   - for an input that fails, every prefix is kNeedMore or that same failure, and once a prefix
//     fails, every longer one fails the same way;
//   - every prefix, placed against a guard page, parses without reading past its end.
// Returns the result for the whole input.
template <typename Parse, typename Same>
auto CheckEveryPrefix(std::string_view input, Parse parse, Same same) {
  auto whole = parse(input);
  {
    GuardedBuffer guarded(input);
    auto g = parse(std::string_view(guarded.chars().data(), guarded.chars().size()));
    EXPECT_TRUE(same(g, whole)) << "guarded copy parses differently";
  }
  bool failed = false;
  for (size_t k = 0; k < input.size(); ++k) {
    GuardedBuffer guarded(input.substr(0, k));
    auto r = parse(std::string_view(guarded.chars().data(), k));
    if (whole.status == ParseStatus::kDone && k >= whole.consumed) {
      EXPECT_TRUE(same(r, whole)) << "prefix of " << k << " bytes holding the whole message";
      continue;
    }
    if (whole.status == ParseStatus::kError && r.status == ParseStatus::kError) {
      EXPECT_TRUE(same(r, whole)) << "prefix of " << k << " bytes fails differently";
      failed = true;
      continue;
    }
    EXPECT_FALSE(failed) << "prefix of " << k << " bytes recovers from a failure";
    EXPECT_EQ(r.status, ParseStatus::kNeedMore) << "prefix of " << k << " bytes";
  }
  return whole;
}

// Every way to cut `input` into two pieces: (first k bytes, the rest), k = 0..size.
inline std::vector<std::pair<std::string_view, std::string_view>> AllSplits(
    std::string_view input) {
  std::vector<std::pair<std::string_view, std::string_view>> out;
  for (size_t k = 0; k <= input.size(); ++k) {
    out.emplace_back(input.substr(0, k), input.substr(k));
  }
  return out;
}

}  // namespace srt::proxy::testing
