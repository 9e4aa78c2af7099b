// SPDX-License-Identifier: Apache-2.0
// wire/parse_status.h: the outcome of feeding bytes to one of the proxy's incremental parsers.
#pragma once

namespace srt::proxy {

// Envoy's ReadOrParseState, picohttpparser's -2/-1: kNeedMore means "every byte so far is a valid
// prefix; call again with more", never "error".
enum class ParseStatus { kDone, kNeedMore, kError };

}  // namespace srt::proxy
