// SPDX-License-Identifier: Apache-2.0
// server/peek_session.cc: an opaque tunnel under network.requireHostMatch, between the proxy's
// "yes" (a CONNECT's 200, a SOCKS5 success reply, already sent) and the relay: the client's first
// bytes are read, up to kMaxTunnelPeekBytes and for at most the handshake timeout, and judged by
// PeekTunnel (server/host_match.h). A ClientHello or HTTP head naming another host than the
// target, one left unfinished, or silence past the timeout closes the tunnel with a reset and a
// denial record; anything else is relayed (with the bytes read) as the tunnel would have been.
// The origin's bytes wait meanwhile: a protocol whose server speaks first does not work under
// requireHostMatch (the client is silent until the timeout, and then refused).
#include "server/host_match.h"
#include "server/session.h"

namespace srt::proxy {
namespace {

class PeekSession final : public Session {
 public:
  PeekSession(ProxyServer& server, PeekedTunnel t)
      : Session(server, std::move(t.client), std::move(t.client_in)),
        to_client_(std::move(t.client_out)),
        upstream_(std::move(t.upstream)),
        record_(std::move(t.record)),
        host_(std::move(t.host)),
        port_(t.port) {}

  void Start() override {
    QueueClient(to_client_);
    to_client_.clear();
    ArmTimeout(server_.options().handshake_timeout);
    if (!FlushClient()) return Closed();
    Decide();
  }

  void OnEvents(uint32_t events) override {
    if (closing()) return ContinueClose();
    if ((events & EPOLLOUT) != 0 && !FlushClient()) return Closed();
    if ((events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) != 0 && !eof_) {
      switch (ReadClient(kMaxTunnelPeekBytes)) {
        case ReadStatus::kData:
        case ReadStatus::kFull:
        case ReadStatus::kAgain:
          break;
        case ReadStatus::kEof:
          eof_ = true;
          break;
        case ReadStatus::kError:
          return Closed();
      }
    }
    Decide();
  }

  void OnTimeout() override {
    Refuse("no bytes from the client in time (requireHostMatch reads the first ones)");
  }

 protected:
  void LogInFlight() override {
    record_.end = "shutdown";
    Record(record_);
  }

 private:
  void Decide() {
    const TunnelPeek peek = PeekTunnel(in_, host_, port_, eof_);
    switch (peek.verdict) {
      case PeekVerdict::kNeedMore: {
        uint32_t interest = EPOLLIN | EPOLLRDHUP;
        if (client_backlog() > 0) interest |= EPOLLOUT;
        if (!SetClientInterest(interest)) return End();
        return;
      }
      case PeekVerdict::kPass:
        return StartTunnel(std::move(upstream_), std::move(in_), "", std::move(record_));
      case PeekVerdict::kRefuse:
        return Refuse(peek.reason);
    }
  }

  void Refuse(const std::string& reason) {
    record_.allowed = false;
    record_.reason = reason;
    Record(record_);
    Abort();
  }

  // The client went away before it said anything the proxy could judge.
  void Closed() {
    record_.end = "closed";
    Record(record_);
    End();
  }

  std::string to_client_;
  UniqueFd upstream_;
  ConnectionRecord record_;
  Host host_;
  uint16_t port_;
  bool eof_ = false;
};

}  // namespace

std::unique_ptr<Session> MakePeekSession(ProxyServer& server, PeekedTunnel tunnel) {
  return std::make_unique<PeekSession>(server, std::move(tunnel));
}

}  // namespace srt::proxy
