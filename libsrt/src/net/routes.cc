// SPDX-License-Identifier: Apache-2.0
#include "net/routes.h"

#include <linux/rtnetlink.h>
#include <netlink/errno.h>
#include <netlink/netlink.h>
#include <netlink/route/addr.h>
#include <netlink/route/route.h>
#include <netlink/socket.h>
#include <sys/socket.h>

#include <memory>
#include <string>

namespace srt::net {
namespace {

struct SockFree {
  void operator()(nl_sock* s) const { nl_socket_free(s); }
};
struct RouteFree {
  void operator()(rtnl_route* r) const { rtnl_route_put(r); }
};
struct AddrFree {
  void operator()(nl_addr* a) const { nl_addr_put(a); }
};
struct RtnlAddrFree {
  void operator()(rtnl_addr* a) const { rtnl_addr_put(a); }
};

Error NlError(const std::string& what, int err) {
  return MakeError(Errc::kSystem, what + ": " + nl_geterror(err));
}

constexpr int kLoopbackIfindex = 1;  // "lo" is always interface 1 in a new network namespace

Result<void> AddLocalDefault(nl_sock* sock, int family) {
  std::unique_ptr<rtnl_route, RouteFree> route(rtnl_route_alloc());
  if (!route) return MakeError(Errc::kSystem, "rtnl_route_alloc: out of memory");
  const unsigned char zero[16] = {};
  std::unique_ptr<nl_addr, AddrFree> dst(nl_addr_build(family, zero, family == AF_INET ? 4 : 16));
  if (!dst) return MakeError(Errc::kSystem, "nl_addr_build: out of memory");
  nl_addr_set_prefixlen(dst.get(), 0);
  rtnl_route_set_family(route.get(), static_cast<uint8_t>(family));
  rtnl_route_set_table(route.get(), RT_TABLE_LOCAL);
  rtnl_route_set_type(route.get(), RTN_LOCAL);
  rtnl_route_set_scope(route.get(), RT_SCOPE_HOST);
  rtnl_route_set_protocol(route.get(), RTPROT_STATIC);
  if (int err = rtnl_route_set_dst(route.get(), dst.get()); err < 0) {
    return NlError("rtnl_route_set_dst", err);
  }
  rtnl_nexthop* hop = rtnl_route_nh_alloc();
  if (hop == nullptr) return MakeError(Errc::kSystem, "rtnl_route_nh_alloc: out of memory");
  rtnl_route_nh_set_ifindex(hop, kLoopbackIfindex);
  rtnl_route_add_nexthop(route.get(), hop);  // the route owns the hop now
  if (int err = rtnl_route_add(sock, route.get(), NLM_F_CREATE | NLM_F_REPLACE); err < 0) {
    return NlError(std::string("add the sandbox's local default route for ") +
                       (family == AF_INET ? "IPv4" : "IPv6"),
                   err);
  }
  return Ok();
}

// glibc's getaddrinfo with AI_ADDRCONFIG (getent ahostsv4, Python's and many libraries'
// lookups) returns "no such name" for IPv4 unless the host has an IPv4 address other than
// 127.0.0.1; the sandbox's lo has only that one, so such lookups would never reach the DNS stub.
Result<void> AddSecondLoopbackAddress(nl_sock* sock) {
  std::unique_ptr<rtnl_addr, RtnlAddrFree> addr(rtnl_addr_alloc());
  if (!addr) return MakeError(Errc::kSystem, "rtnl_addr_alloc: out of memory");
  const unsigned char bytes[4] = {127, 0, 0, 2};
  std::unique_ptr<nl_addr, AddrFree> local(nl_addr_build(AF_INET, bytes, 4));
  if (!local) return MakeError(Errc::kSystem, "nl_addr_build: out of memory");
  nl_addr_set_prefixlen(local.get(), 32);
  rtnl_addr_set_ifindex(addr.get(), kLoopbackIfindex);
  rtnl_addr_set_family(addr.get(), AF_INET);
  rtnl_addr_set_scope(addr.get(), RT_SCOPE_HOST);
  if (int err = rtnl_addr_set_local(addr.get(), local.get()); err < 0) {
    return NlError("rtnl_addr_set_local", err);
  }
  if (int err = rtnl_addr_add(sock, addr.get(), NLM_F_CREATE | NLM_F_REPLACE); err < 0) {
    return NlError("add 127.0.0.2 to the sandbox's loopback", err);
  }
  return Ok();
}

}  // namespace

Result<void> InstallCaptureRoutes(UniqueFd netlink_route, bool ipv6) {
  std::unique_ptr<nl_sock, SockFree> sock(nl_socket_alloc());
  if (!sock) return MakeError(Errc::kSystem, "nl_socket_alloc: out of memory");
  if (int err = nl_socket_set_fd(sock.get(), NETLINK_ROUTE, netlink_route.get()); err < 0) {
    return NlError("nl_socket_set_fd", err);
  }
  (void)netlink_route.release();  // nl_socket_free closes it from now on
  SRT_RETURN_IF_ERROR(AddSecondLoopbackAddress(sock.get()));
  SRT_RETURN_IF_ERROR(AddLocalDefault(sock.get(), AF_INET));
  if (ipv6) SRT_RETURN_IF_ERROR(AddLocalDefault(sock.get(), AF_INET6));
  return Ok();
}

}  // namespace srt::net
