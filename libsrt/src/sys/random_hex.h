// SPDX-License-Identifier: Apache-2.0
// sys/random_hex: random names from the kernel's CSPRNG (getrandom(2)).
#pragma once

#include <cstddef>
#include <string>

#include "srt/result.h"

namespace srt::sys {

// `bytes` random bytes as 2*bytes lowercase hex digits: sandbox ids, temporary names, tokens.
[[nodiscard]] Result<std::string> RandomHex(size_t bytes);
// `bytes` random bytes (credential sentinels).
[[nodiscard]] Result<std::string> RandomBytes(size_t bytes);

}  // namespace srt::sys
