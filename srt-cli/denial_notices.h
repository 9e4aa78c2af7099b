// SPDX-License-Identifier: Apache-2.0
// srt-cli/denial_notices: what srt says on stderr, without --debug, when the sandbox's network
// refuses something: one line per destination, so that a command failing for want of the
// network says why (`srt: network: denied example.com:443 (host is not on the allow list)`),
// and at most kMaxLines of them, so that a command that retries or scans cannot flood the
// terminal. --debug prints every decision instead; --log-file records every one.
#pragma once

#include <cstddef>
#include <mutex>
#include <set>
#include <string>
#include <string_view>

namespace srt::cli {

class DenialNotices {
 public:
  static constexpr size_t kMaxLines = 20;

  // The line to print for this denial (no newline), or "" when this destination was named
  // already or kMaxLines were printed; the first denial past them gets one line saying so.
  // `destination` and `reason` come escaped (ConnectionEvent). Thread-safe.
  std::string Line(std::string_view destination, std::string_view reason);

 private:
  std::mutex mu_;
  std::set<std::string, std::less<>> named_;  // at most kMaxLines
  bool said_more_ = false;
};

}  // namespace srt::cli
