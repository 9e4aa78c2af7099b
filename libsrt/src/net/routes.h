// SPDX-License-Identifier: Apache-2.0
// net/routes.h: the sandbox's routes for transparent capture, installed with libnl through a
// NETLINK_ROUTE socket made inside the sandbox's network namespace (srt itself never enters it).
//
// `local 0.0.0.0/0 dev lo table local` (and `local ::/0` with IPv6) make every destination
// address local to the sandbox: a connect() to any address and port lands on the listener for
// that port on the sandbox's loopback (srt's proxy), or is refused at once if there is none.
// Nothing can leave: the namespace has no other interface. lo also gets 127.0.0.2, so that
// getaddrinfo's AI_ADDRCONFIG sees an IPv4 address and asks the DNS stub at all.
#pragma once

#include "base/unique_fd.h"
#include "srt/result.h"

namespace srt::net {

// Takes the NETLINK_ROUTE socket (closed when done). Fails (kSystem) with libnl's message.
[[nodiscard]] Result<void> InstallCaptureRoutes(UniqueFd netlink_route, bool ipv6);

}  // namespace srt::net
