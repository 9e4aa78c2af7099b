// SPDX-License-Identifier: Apache-2.0
// srt-cli/denial_notices: one line per refused destination (see denial_notices.h).
#include "denial_notices.h"

namespace srt::cli {

std::string DenialNotices::Line(std::string_view destination, std::string_view reason) {
  std::lock_guard<std::mutex> lock(mu_);
  if (named_.find(destination) != named_.end()) return "";
  if (named_.size() >= kMaxLines) {
    if (said_more_) return "";
    said_more_ = true;
    return "srt: network: more destinations denied; not shown (--log-file FILE records every "
           "decision)";
  }
  named_.emplace(destination);
  return "srt: network: denied " + std::string(destination) + " (" + std::string(reason) + ")";
}

}  // namespace srt::cli
