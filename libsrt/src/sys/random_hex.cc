// SPDX-License-Identifier: Apache-2.0
#include "sys/random_hex.h"

#include <sys/random.h>

#include <cerrno>

namespace srt::sys {

Result<std::string> RandomBytes(size_t bytes) {
  std::string raw(bytes, '\0');
  size_t got = 0;
  while (got < raw.size()) {
    ssize_t n = getrandom(raw.data() + got, raw.size() - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return SysError("getrandom");
    got += static_cast<size_t>(n);
  }
  return raw;
}

Result<std::string> RandomHex(size_t bytes) {
  SRT_ASSIGN_OR_RETURN(std::string raw, RandomBytes(bytes));
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * bytes);
  for (char c : raw) {
    out += kHex[static_cast<unsigned char>(c) >> 4];
    out += kHex[static_cast<unsigned char>(c) & 15];
  }
  return out;
}

}  // namespace srt::sys
