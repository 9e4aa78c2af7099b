// SPDX-License-Identifier: Apache-2.0
// net/socket_plan.h: which sockets srt-agent makes in the sandbox's network namespace for the
// proxy, and what each is for. Pure.
//
// Without transparent capture: the proxy listens on 127.0.0.1 and [::1], ports 3128 (HTTP) and
// 1080 (SOCKS5; both ports take both protocols). With capture: wildcard listeners on those ports
// and on every capture port (a connection to loopback on a proxy port is a proxy client, any
// other is captured: ListenerRole::kAuto), the DNS stub on 127.0.0.1:53 (UDP and TCP), and a
// NETLINK_ROUTE socket through which srt installs the routes that deliver every address to the
// sandbox's loopback.
#pragma once

#include <cstdint>
#include <vector>

#include "init_protocol/wire.h"
#include "proxy/proxy.h"

namespace srt::net {

inline constexpr uint16_t kDnsPort = 53;

struct PlannedSocket {
  enum class Use {
    kProxy,   // serve the proxy protocols only
    kAuto,    // proxy protocols on loopback proxy ports, capture otherwise
    kDnsUdp,  // the DNS stub
    kDnsTcp,
    kRoutes,  // NETLINK_ROUTE
  };
  wire::NetSocket socket;
  Use use = Use::kProxy;
};

struct SocketPlanOptions {
  bool capture = true;
  bool ipv6 = true;  // the kernel has IPv6: also listen on [::] / [::1]
  // proxy::Proxy::capture_ports() (80, 443 and every port an allow entry names).
  std::vector<uint16_t> capture_ports;
};

[[nodiscard]] std::vector<PlannedSocket> PlanSockets(const SocketPlanOptions& options);

}  // namespace srt::net
