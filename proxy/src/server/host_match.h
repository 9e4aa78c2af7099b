// SPDX-License-Identifier: Apache-2.0
// server/host_match.h: whether a request's Host header names the destination its tunnel was
// opened for (upstream srt's requireHostMatch; RFC 9110 §7.2, §7.4 421 Misdirected Request).
// Pure.
#pragma once

#include <cstdint>
#include <string_view>

#include "base/host.h"

namespace srt::proxy {

// True if `value` (a Host field value: host, [v6] or host:port) names `target` (canonical) on
// `port`: the same host once canonicalised (case, trailing dot, IPv4 spellings), and the same
// port, which may be left out only when `port` is `default_port`. Anything else, an empty port
// or a value of another shape included, is false.
[[nodiscard]] bool HostHeaderNames(std::string_view value, const Host& target, uint16_t port,
                                   uint16_t default_port);

}  // namespace srt::proxy
