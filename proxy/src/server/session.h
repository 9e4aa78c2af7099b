// SPDX-License-Identifier: Apache-2.0
// server/session.h: one client connection of a ProxyServer, from accept() to close: the shared
// plumbing (buffered client I/O, timeouts, decision records, the hand-over to a Tunnel) and the
// factories of the protocol sessions. Internal to server/.
//
// Lifetime: the ProxyServer owns every session (Adopt); a session ends itself with End(), which
// destroys it, so End() is always the last thing a session method does. Everything runs on the
// server's loop thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "base/host.h"
#include "base/unique_fd.h"
#include "loop/event_loop.h"
#include "server/decision_log.h"
#include "server/dialer.h"
#include "server/endpoint.h"
#include "server/proxy_server.h"
#include "server/tunnel.h"

namespace srt::proxy {

class Session : public Handler {
 public:
  Session(ProxyServer& server, UniqueFd client, std::string initial);
  ~Session() override;
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Registers the client socket and processes `initial`. May end the session.
  virtual void Start() = 0;
  // The server is going away: a relayed connection is logged with end "shutdown", and so is
  // an allowed request still dialing or (plain HTTP) an exchange in flight (LogInFlight).
  void OnServerShutdown();

 protected:
  enum class ReadStatus { kData, kAgain, kEof, kError, kFull };

  // recv() what is available, appending to in_, up to `limit` bytes in in_ in total.
  ReadStatus ReadClient(size_t limit);
  // Queue bytes for the client; FlushClient() writes what it can. false: the client is gone.
  void QueueClient(std::string_view bytes) { out_.append(bytes); }
  bool FlushClient();
  [[nodiscard]] size_t client_backlog() const { return out_.size() - out_sent_; }
  // Sends `bytes` then closes gracefully: the session ends once they are written, the write
  // side is shut and the client's unread bytes are drained (a close with unread input would
  // send a reset that can destroy the response before the client reads it), or after
  // kLingerTimeout. While closing(), OnEvents must call ContinueClose() and nothing else.
  void SendAndClose(std::string_view bytes);
  [[nodiscard]] bool closing() const { return close_after_flush_; }
  void ContinueClose();
  static constexpr std::chrono::milliseconds kLingerTimeout{2000};
  static constexpr size_t kLingerDrainBytes = size_t{1024} * 1024;
  // The bytes queued for the client and not written yet, taken away (a hand-over).
  [[nodiscard]] std::string TakeClientBacklog();
  // Unregisters the client socket and gives it away (a hand-over to another session).
  [[nodiscard]] UniqueFd ReleaseClient();
  // Sets the client socket's epoll mask (registers it on first use; 0 unregisters it).
  bool SetClientInterest(uint32_t events);
  // Runs OnTimeout() after `after` unless re-armed or cancelled.
  void ArmTimeout(std::chrono::milliseconds after);
  void CancelTimeout();
  virtual void OnTimeout() { Abort(); }
  // OnServerShutdown() without a tunnel: logs, with end "shutdown", a decision made and not
  // logged yet (an allowed request whose dial or exchange is in flight).
  virtual void LogInFlight() {}

  // Relays client <-> upstream until both end; `record` (its decision and address filled in)
  // gets bytes, duration and end, and is logged when the tunnel ends. Ends the session then.
  void StartTunnel(UniqueFd upstream, std::string to_upstream, const std::string& to_client,
                   ConnectionRecord record);
  // An opaque tunnel (an allowed, dialed CONNECT or SOCKS5 request that is not terminated):
  // StartTunnel(upstream, in_, to_client, record) at once, or, under network.requireHostMatch,
  // once the client's first bytes name no other host than `host` (server/host_match.h): a
  // hand-over to a session that sends `to_client`, reads those bytes (bounded by
  // kMaxTunnelPeekBytes and the handshake timeout) and then relays or closes. Ends this session.
  void StartOpaqueTunnel(UniqueFd upstream, const std::string& to_client, ConnectionRecord record,
                         const Host& host, uint16_t port);
  // network.tlsTerminate: hands the client, the dialed origin and what was read so far to a
  // TLS-terminating session (terminated_session.h), which takes over; this session ends.
  // `to_client`: what the client gets first (a CONNECT's 200, a SOCKS reply), after anything
  // still queued for it.
  void HandOverToTermination(DialOutcome outcome, std::string_view to_client,
                             ConnectionRecord record, const Host& host, uint16_t port,
                             std::shared_ptr<const NetworkRules> rules,
                             std::unique_ptr<TlsTunnelSlot> slot);
  // A denial or failure before anything was relayed: log it now.
  void Record(const ConnectionRecord& record) const { server_.Record(record); }
  // A record for a request decided now.
  [[nodiscard]] ConnectionRecord NewRecord(Protocol protocol, std::string host,
                                           uint16_t port) const;
  // Fills a record from a dial outcome (kBlocked turns it into a denial).
  static void NoteDial(ConnectionRecord& record, const DialOutcome& outcome);
  // Starts a dial that the session's destruction cancels; `done` runs on the loop thread.
  void Dial(DialRequest request, std::function<void(DialOutcome)> done);

  // Ends the session: destroys *this.
  void End();
  // Ends it with a TCP reset, so the client cannot take a cut connection for a complete one.
  void Abort();

  ProxyServer& server_;
  EventLoop& loop_;
  UniqueFd client_;
  std::string in_;  // bytes read from the client and not consumed yet
  Dialer::Id dial_ = 0;

 private:
  std::string out_;
  size_t out_sent_ = 0;
  bool close_after_flush_ = false;
  bool write_shut_ = false;
  size_t drained_ = 0;
  bool registered_ = false;
  uint32_t interest_ = 0;
  EventLoop::TimerId timer_ = EventLoop::kNoTimer;
  std::chrono::steady_clock::time_point timer_due_;  // when timer_ fires
  std::chrono::steady_clock::time_point
      timeout_at_;    // when OnTimeout() is due (timer_due_ or later)
  void StartTimer();  // timer_ for timeout_at_
  // Moves tunnel_record_ out, completed with the tunnel's bytes, duration and `end`.
  [[nodiscard]] ConnectionRecord TakeTunnelRecord(const TunnelStats& stats, std::string_view end);

  std::unique_ptr<Tunnel> tunnel_;
  std::optional<ConnectionRecord> tunnel_record_;
  std::chrono::steady_clock::time_point tunnel_start_;
};

// The session kinds. A kProxy connection starts as a mux session, which hands the connection to
// an HTTP or SOCKS5 session after its first byte.
[[nodiscard]] std::unique_ptr<Session> MakeMuxSession(ProxyServer& server, UniqueFd client);
[[nodiscard]] std::unique_ptr<Session> MakeHttpSession(ProxyServer& server, UniqueFd client,
                                                       std::string initial);
[[nodiscard]] std::unique_ptr<Session> MakeSocks5Session(ProxyServer& server, UniqueFd client,
                                                         std::string initial);
// A client of the user's own proxy (ProxyOptions::external_proxies), relayed to the host's
// 127.0.0.1:`host_port`.
[[nodiscard]] std::unique_ptr<Session> MakeForwardSession(ProxyServer& server, UniqueFd client,
                                                          uint16_t host_port);
// An opaque tunnel waiting for its client's first bytes (Session::StartOpaqueTunnel).
struct PeekedTunnel {
  UniqueFd client;
  std::string client_in;    // bytes the client sent after its request
  std::string client_out;   // for the client first: its backlog, then the CONNECT/SOCKS reply
  UniqueFd upstream;        // dialed
  ConnectionRecord record;  // the request's (decision, address)
  Host host;                // canonical target
  uint16_t port = 0;
};
[[nodiscard]] std::unique_ptr<Session> MakePeekSession(ProxyServer& server, PeekedTunnel tunnel);
[[nodiscard]] std::unique_ptr<Session> MakeCaptureSession(ProxyServer& server, UniqueFd client,
                                                          Endpoint destination);

}  // namespace srt::proxy
