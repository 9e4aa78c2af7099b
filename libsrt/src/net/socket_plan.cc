// SPDX-License-Identifier: Apache-2.0
#include "net/socket_plan.h"

#include <sys/socket.h>

#include <algorithm>

namespace srt::net {
namespace {

wire::NetSocket Tcp(int family, uint16_t port, bool loopback) {
  wire::NetSocket s;
  s.kind = wire::kNetTcpListen;
  s.family = static_cast<uint32_t>(family);
  s.port = port;
  if (loopback && family == AF_INET) {
    s.address[0] = 127;
    s.address[3] = 1;
  } else if (loopback) {
    s.address[15] = 1;
  }
  return s;
}

}  // namespace

std::vector<PlannedSocket> PlanSockets(const SocketPlanOptions& options) {
  std::vector<uint16_t> ports = {proxy::kHttpProxyPort, proxy::kSocksProxyPort};
  if (options.capture) {
    ports.insert(ports.end(), options.capture_ports.begin(), options.capture_ports.end());
  }
  std::sort(ports.begin(), ports.end());
  ports.erase(std::unique(ports.begin(), ports.end()), ports.end());

  std::vector<PlannedSocket> plan;
  const bool wildcard = options.capture;
  const PlannedSocket::Use use = wildcard ? PlannedSocket::Use::kAuto : PlannedSocket::Use::kProxy;
  for (uint16_t port : ports) {
    plan.push_back({Tcp(AF_INET, port, !wildcard), use});
    if (options.ipv6) plan.push_back({Tcp(AF_INET6, port, !wildcard), use});
  }
  if (options.capture) {
    wire::NetSocket udp;
    udp.kind = wire::kNetUdp;
    udp.family = AF_INET;
    udp.port = kDnsPort;
    udp.address[0] = 127;
    udp.address[3] = 1;
    plan.push_back({udp, PlannedSocket::Use::kDnsUdp});
    // DNS over TCP on 127.0.0.1:53, unless a capture listener already takes port 53 (an allow
    // entry for port 53): then the wildcard listener captures it, and the policy decides.
    if (!std::binary_search(ports.begin(), ports.end(), kDnsPort)) {
      plan.push_back({Tcp(AF_INET, kDnsPort, true), PlannedSocket::Use::kDnsTcp});
    }
    wire::NetSocket route;
    route.kind = wire::kNetRoute;
    plan.push_back({route, PlannedSocket::Use::kRoutes});
  }
  return plan;
}

}  // namespace srt::net
