// SPDX-License-Identifier: Apache-2.0
// server/terminated_session.h: the hand-over from the HTTP session to a TLS-terminated CONNECT
// tunnel (terminated_session.cc says what it does). Internal to server/.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "base/host.h"
#include "base/unique_fd.h"
#include "server/decision_log.h"
#include "server/proxy_server.h"
#include "server/rules.h"

namespace srt::proxy {

class Session;

struct TerminatedTunnel {
  ProxyServer& server;
  UniqueFd client;
  UniqueFd upstream;              // dialed for the CONNECT
  std::string client_in;          // bytes the client sent after its CONNECT head
  std::string client_out;         // for the client first: its backlog, then the 200
  std::string upstream_leftover;  // bytes a parent proxy sent after its 200
  ConnectionRecord record;        // the CONNECT's (decision, address)
  Host host;                      // canonical CONNECT target
  uint16_t port = 0;
  std::shared_ptr<const NetworkRules> rules;
  std::unique_ptr<TlsTunnelSlot> slot;
};

[[nodiscard]] std::unique_ptr<Session> MakeTerminatedSession(TerminatedTunnel tunnel);

}  // namespace srt::proxy
