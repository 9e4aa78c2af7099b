// SPDX-License-Identifier: Apache-2.0
// server/terminated_session.cc: a CONNECT tunnel whose TLS the proxy terminates
// (network.tlsTerminate). The HTTP session hands it over once the CONNECT is allowed, not
// excluded, has a slot (TlsTunnelRules::max_tunnels) and its origin is dialed. Then:
//
//   kSniff      200 Connection Established goes out; the first bytes decide. A TLS handshake
//               record (0x16) is a ClientHello: its SNI is read (tls/client_hello.h) and the
//               proxy terminates. Anything else is an opaque tunnel as before (the slot is freed).
//   kHandshake  TLS with the client (a leaf for the CONNECT target, mitm/tls_engine.h) and,
//               at the same time, verified TLS with the origin over the dialed connection.
//               Both bounded by TlsTunnelRules::handshake_timeout (client side).
//   kOpen       HTTP/1.1 requests from the decrypted stream, one exchange at a time (pipelined
//               ones wait), each checked, logged (protocol "https": method, host, path without
//               query, status) and forwarded to the origin, bodies streamed by their framing
//               with bounded buffers; keep-alive on both sides; the origin connection is dialed
//               again (through the dialer and its guard) when it closed between requests.
//               Under `srt proxy` (ProxyOptions::decider), each request that passed the checks
//               below is decided by the decider first, exactly as a plain-HTTP one
//               (server/decider_step.h: the req frame with the CONNECT target and the SNI, a
//               need_body's body, an allow's header edits); its refusals carry X-Deny-Reason.
//
// Checks on every request (upstream's requireHostMatch, on by default here; RFC 9110 §7.4):
// the TLS server name, when sent, and the Host header must name the CONNECT target (its port may
// be left out for 443), else 421; HTTP/1.1 without Host is 400; TRACE and TRACK are 405 (the echo
// would hand back what the proxy or a rewriter added); only origin-form and `OPTIONS *` targets.
// The leaf always names the CONNECT target, whatever the SNI asks for (as upstream with host
// matching on: a client cannot have certificates minted for names it does not connect to).
//
// Byte flow (all on the loop; TlsStream is a pure transformer over memory BIOs):
//   client socket -> in_ -> client_tls_ -> req_in_ (plaintext) -> [HTTP] -> up_tls_ -> origin
//   socket -> up_tls_ -> resp_in_ (plaintext) -> [HTTP] -> client_tls_ -> client socket
// Ciphertext goes to each socket straight from its TlsStream's output (TlsStream::output), and
// only what a socket did not take waits there (or, on the close paths, in the session's queue).
// Each buffer stops its producer at kPumpBytes (or a head's limit), so memory per tunnel is
// bounded whatever either peer does.
#include "server/terminated_session.h"

#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <optional>
#include <span>

#include "base/system_text.h"
#include "http/chunked_decoder.h"
#include "http/head_parser.h"
#include "http/response_writer.h"
#include "mitm/tls_engine.h"
#include "server/decider_link.h"
#include "server/decider_step.h"
#include "server/host_match.h"
#include "server/responses.h"
#include "server/session.h"
#include "tls/client_hello.h"
#include "wire/ascii.h"

namespace srt::proxy {
namespace {

constexpr size_t kPumpBytes = size_t{256} * 1024;
constexpr size_t kReadChunk = size_t{16} * 1024;
// One recv() of ciphertext: four full TLS records (16 KiB of plaintext each, plus framing), so a
// busy stream takes one loop turn per 64 KiB rather than one per record (or less: a 16 KiB read
// splits every record in two).
constexpr size_t kCipherChunk = size_t{64} * 1024 + size_t{4} * 256;
// TLS record type handshake(22) (RFC 8446 §5.1): what a ClientHello starts with.
constexpr char kTlsHandshakeRecord = 0x16;

std::string PathWithoutQuery(std::string_view target) {
  return std::string(target.substr(0, target.find_first_of("?#")));
}

// A field value a rewriter set that cannot split the head: no CR, LF or NUL.
bool SafeFieldValue(std::string_view value) {
  return value.find_first_of(std::string_view("\r\n\0", 3)) == std::string_view::npos;
}

// The request bodies every session holds for its rewriter (exchange_rewriter.h), together: a
// sandbox that opens many tunnels cannot make srt hold max_tunnels times one body's limit.
constexpr uint64_t kMaxHeldBytesTotal = uint64_t{256} << 20;
std::atomic<uint64_t> g_held_bytes{0};

// One session's share of g_held_bytes, given back when it is done or gone.
class HeldBytes {
 public:
  HeldBytes() = default;
  HeldBytes(const HeldBytes&) = delete;
  HeldBytes& operator=(const HeldBytes&) = delete;
  ~HeldBytes() { Release(); }
  // false (nothing taken) when the total would pass kMaxHeldBytesTotal.
  bool Take(uint64_t n) {
    uint64_t now = g_held_bytes.load();
    do {
      if (n > kMaxHeldBytesTotal - now) return false;
    } while (!g_held_bytes.compare_exchange_weak(now, now + n));
    taken_ += n;
    return true;
  }
  void Release() {
    g_held_bytes -= taken_;
    taken_ = 0;
  }

 private:
  uint64_t taken_ = 0;
};

// Frees an empty buffer's memory, unless it is small enough to keep for the next request.
void ReleaseIfEmpty(std::string& buffer) {
  if (buffer.empty() && buffer.capacity() > size_t{4} * 1024) std::string().swap(buffer);
}

bool IsFraming(std::string_view name) {
  return ascii::EqualsIgnoreCase(name, "Content-Length") ||
         ascii::EqualsIgnoreCase(name, "Transfer-Encoding");
}

bool IsHost(std::string_view name) { return ascii::EqualsIgnoreCase(name, "Host"); }

bool IsFramingOrHost(std::string_view name) {
  return ascii::EqualsIgnoreCase(name, "Host") || ascii::EqualsIgnoreCase(name, "Content-Length") ||
         ascii::EqualsIgnoreCase(name, "Transfer-Encoding");
}

class TerminatedSession final : public Session {
 public:
  explicit TerminatedSession(TerminatedTunnel t)
      : Session(t.server, std::move(t.client), std::move(t.client_in)),
        tls_(*t.server.options().tls),
        host_(std::move(t.host)),
        port_(t.port),
        rules_(std::move(t.rules)),
        slot_(std::move(t.slot)),
        tunnel_record_(std::move(t.record)),
        up_(std::move(t.upstream)),
        up_leftover_(std::move(t.upstream_leftover)),
        client_preamble_(std::move(t.client_out)) {
    up_handler_.session = this;
  }

  ~TerminatedSession() override {
    if (ask_id_ != 0 && server_.options().decider) server_.options().decider->Cancel(ask_id_);
    loop_.CancelTimer(up_timer_);
    DropUpstream();
  }

  void Start() override {
    QueueClient(client_preamble_);
    client_preamble_.clear();
    ArmTimeout(rules_->tls.handshake_timeout);
    if (!FlushClient()) return ClientGone("client connection lost");
    Step();
  }

  void OnEvents(uint32_t events) override {
    if (closing()) return ContinueClose();
    NoteTraffic();
    if ((events & EPOLLOUT) != 0 && !FlushClient()) return ClientGone("client connection lost");
    if ((events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) != 0 && WantClientInput()) {
      switch (ReadClient(in_.size() + kReadChunk)) {
        case ReadStatus::kData:
        case ReadStatus::kFull:
        case ReadStatus::kAgain:
          break;
        case ReadStatus::kEof:
          client_eof_ = true;
          break;
        case ReadStatus::kError:
          return ClientGone("client connection lost");
      }
    }
    Step();
  }

  void OnUpstreamEvents(uint32_t events) {
    NoteTraffic();
    if ((events & EPOLLOUT) != 0 && !FlushUpstream()) return;
    if ((events & EPOLLIN) != 0) {
      // Ciphertext while the client keeps up, but never more than one Step() decrypts
      // (ciphertext is longer than its plaintext): bytes left in the TLS stream would wait for
      // a socket event that may never come.
      // Received straight into the TLS stream's input (no copy on the way).
      const size_t room = kPumpBytes - std::min(resp_in_.size(), kPumpBytes);
      while (ClientOwed() < kPumpBytes && up_tls_->pending_input() + kCipherChunk <= room) {
        const std::span<char> space = up_tls_->InputSpace(kCipherChunk);
        const ssize_t n = recv(up_.get(), space.data(), space.size(), 0);
        if (n > 0) {
          up_tls_->CommitInput(static_cast<size_t>(n));
          if (static_cast<size_t>(n) < space.size()) break;  // drained for now
        } else if (n == 0) {
          up_tls_->FeedEof();
          up_eof_ = true;
          break;
        } else if (errno == EAGAIN || errno == EINTR) {
          break;
        } else {
          return UpstreamFailed(std::string("reading from the origin: ") + ErrnoText(errno));
        }
      }
    }
    Step();
  }

  void OnTimeout() override {
    if (phase_ != Phase::kOpen) return FailTunnel("TLS handshake not done in time", "idle");
    if (ex_ == Exchange::kHead) {
      // Idle between requests: a clean close (close_notify), as upstream's keep-alive timeout.
      return CloseClient();
    }
    FailExchange("no traffic for too long");
  }

 protected:
  void LogInFlight() override {
    if (phase_ == Phase::kOpen && ex_ != Exchange::kHead) {
      CompleteRecord("shutdown", "");
    } else if (requests_ == 0) {
      LogTunnel("shutdown", "");
    }
  }

 private:
  enum class Phase { kSniff, kHandshake, kOpen };
  // kHolding: a rewriter's request body being read before its head goes out. kDeciding: the
  // decider is asked (`srt proxy`); kBody: it asked for the body, being read.
  enum class Exchange { kHead, kDeciding, kBody, kHolding, kForwarding, kRelay };

  struct UpstreamHandler final : Handler {
    TerminatedSession* session = nullptr;
    void OnEvents(uint32_t events) override { session->OnUpstreamEvents(events); }
  };

  // --- The pump ------------------------------------------------------------------------------

  // An exchange with traffic either way is not idle (kIdleTimeout counts from the last event).
  void NoteTraffic() {
    if (phase_ == Phase::kOpen && ex_ != Exchange::kHead) ArmTimeout(kIdleTimeout);
  }

  // Moves bytes as far as they go, then sets the sockets' interests. Every path that changes
  // state ends here (or ends the session).
  void Step() {
    if (closing()) return;
    if (phase_ == Phase::kSniff) {
      if (!Sniff()) return;
      if (phase_ == Phase::kSniff) return Interest();
    }
    if (!ClientTls()) return;
    if (!UpstreamTls()) return;
    if (phase_ == Phase::kOpen) {
      if (!ProcessRequests()) return;
      if (!ProcessResponse()) return;
    }
    if (!FlushAll()) return;
    if ((client_eof_ || client_closed_) && phase_ == Phase::kOpen && ex_ == Exchange::kHead &&
        req_in_.empty() && ClientOwed() == 0) {
      return Finish();
    }
    Interest();
  }

  // kSniff: the first byte says TLS or not. false if the session ended (or became a tunnel).
  bool Sniff() {
    if (in_.empty()) {
      if (client_eof_) {
        LogTunnel("closed", "");
        End();
        return false;
      }
      return true;
    }
    if (in_[0] != kTlsHandshakeRecord) {
      // Not TLS: an opaque tunnel, as without termination; the slot is free again. Refused
      // under network.refuseOpaqueTunnels (upstream closes it too: the 200 is out already).
      slot_.reset();
      if (server_.options().refuse_opaque_tunnels) {
        tunnel_record_.allowed = false;
        tunnel_record_.reason =
            "tunnel carries no TLS and cannot be inspected (refuseOpaqueTunnels)";
        Record(tunnel_record_);
        Abort();
        return false;
      }
      UniqueFd up = std::move(up_);
      StartOpaqueTunnel(std::move(up), up_leftover_, std::move(tunnel_record_), host_, port_);
      return false;
    }
    const auto* bytes = reinterpret_cast<const uint8_t*>(in_.data());
    tls::SniResult hello = tls::ExtractSni({bytes, in_.size()});
    switch (hello.status) {
      case tls::SniStatus::kNeedMore:
        if (in_.size() >= kMaxTlsClientHelloBytes || client_eof_) {
          FailTunnel("TLS ClientHello larger than the limit or cut short", "error");
          return false;
        }
        return true;
      case tls::SniStatus::kNotTls:
      case tls::SniStatus::kMalformed:
        FailTunnel("malformed TLS ClientHello: " + hello.error, "error");
        return false;
      case tls::SniStatus::kNoSni:
        break;
      case tls::SniStatus::kFound: {
        sni_ = hello.host;
        Result<Host> asked = CanonicalizeHost(hello.host);
        sni_mismatch_ = !asked || !(*asked == host_);
        break;
      }
    }
    mitm::TlsEngine& engine = *tls_.engine;
    Result<std::unique_ptr<mitm::TlsStream>> client =
        engine.NewServerStream(host_.text, host_.is_ip());
    if (!client) {
      FailTunnel(client.error().message(), "error");
      return false;
    }
    client_tls_ = std::move(*client);
    if (!StartUpstreamTls()) return false;
    phase_ = Phase::kHandshake;
    return true;
  }

  // Feeds the client's ciphertext, advances its handshake, decrypts what the exchange wants.
  bool ClientTls() {
    client_tls_->Feed(in_);
    in_.clear();
    if (client_eof_ && !client_eof_fed_) {
      client_tls_->FeedEof();
      client_eof_fed_ = true;
    }
    if (phase_ == Phase::kHandshake) {
      switch (client_tls_->Handshake()) {
        case mitm::TlsStream::Status::kOk:
          phase_ = Phase::kOpen;
          ArmTimeout(kHandshakeTimeout);  // for the first request head, as the proxy's own
          break;
        case mitm::TlsStream::Status::kWantInput:
          return true;
        case mitm::TlsStream::Status::kClosed:
        case mitm::TlsStream::Status::kError:
          // The client refused srt's certificate (it does not trust the CA) or broke TLS.
          (void)DrainClient();  // its alert
          FailTunnel("TLS handshake with the client failed: " + client_tls_->error(), "error");
          return false;
      }
    }
    if (!WantPlaintext()) return true;
    const size_t limit = ex_ == Exchange::kHead ? http::Limits{}.max_head_bytes + 1 : kPumpBytes;
    if (req_in_.size() >= limit) return true;
    switch (client_tls_->Read(req_in_, limit - req_in_.size())) {
      case mitm::TlsStream::Status::kOk:
      case mitm::TlsStream::Status::kWantInput:
        return true;
      case mitm::TlsStream::Status::kClosed:
        client_closed_ = true;
        if (ex_ == Exchange::kBody ||
            ((ex_ == Exchange::kForwarding || ex_ == Exchange::kHolding) && !req_done_)) {
          FailExchange("client closed the connection mid-request");
          return false;
        }
        return true;
      case mitm::TlsStream::Status::kError:
        if (ex_ != Exchange::kHead) {
          FailExchange("client TLS: " + client_tls_->error());
        } else {
          Abort();
        }
        return false;
    }
    return true;
  }

  bool WantPlaintext() const {
    if (phase_ != Phase::kOpen || client_closed_) return false;
    switch (ex_) {
      case Exchange::kHead:
        return ClientOwed() < kPumpBytes;
      case Exchange::kDeciding:
        return false;
      case Exchange::kBody:
        return req_in_.size() < head_bytes_ + body_->want();
      case Exchange::kHolding:
        return !req_done_;
      case Exchange::kForwarding:
        return !req_done_ && UpstreamBacklog() < kPumpBytes;
      case Exchange::kRelay:
        return UpstreamBacklog() < kPumpBytes;
    }
    return false;
  }

  bool WantClientInput() const {
    if (client_eof_) return false;
    if (phase_ != Phase::kOpen) return in_.size() < kMaxTlsClientHelloBytes;
    return WantPlaintext() && client_tls_->pending_output() < kPumpBytes;
  }

  // --- The origin side -------------------------------------------------------------------------

  bool StartUpstreamTls() {
    Result<std::unique_ptr<mitm::TlsStream>> up =
        tls_.engine->NewClientStream(host_.text, host_.is_ip());
    if (!up) {
      FailTunnel(up.error().message(), "error");
      return false;
    }
    up_tls_ = std::move(*up);
    up_used_ = false;
    up_eof_ = false;
    up_tls_->Feed(up_leftover_);
    up_leftover_.clear();
    up_error_.clear();
    return true;
  }

  bool UpstreamTls() {
    if (!up_tls_ || !up_) return true;
    if (!up_tls_->handshake_done()) {
      switch (up_tls_->Handshake()) {
        case mitm::TlsStream::Status::kOk:
          break;
        case mitm::TlsStream::Status::kWantInput:
          return true;
        case mitm::TlsStream::Status::kClosed:
        case mitm::TlsStream::Status::kError:
          up_error_ = "TLS with " + host_.text + ": " + up_tls_->error();
          DropUpstream();
          // Requests waiting for it are answered 502 with the reason; a tunnel in its
          // handshake with the client carries on, so the client is told in HTTP.
          if (ex_ == Exchange::kForwarding) return RefuseForwarded(502, up_error_);
          return true;
      }
    }
    if (ex_ == Exchange::kHead || ex_ == Exchange::kHolding || ex_ == Exchange::kDeciding ||
        ex_ == Exchange::kBody) {
      // Between exchanges the origin has nothing to say. Bytes it sends anyway (a 408 before
      // an idle close, say) would be taken for the next request's answer: the connection is
      // dropped instead, as is one it closed.
      std::string stray;
      const mitm::TlsStream::Status status = up_tls_->Read(stray, kReadChunk);
      if (!stray.empty() || up_eof_ || status == mitm::TlsStream::Status::kClosed ||
          status == mitm::TlsStream::Status::kError) {
        DropUpstream();
      }
      return true;
    }
    if (ClientOwed() >= kPumpBytes) return true;
    switch (
        up_tls_->Read(resp_in_, kPumpBytes > resp_in_.size() ? kPumpBytes - resp_in_.size() : 0)) {
      case mitm::TlsStream::Status::kOk:
      case mitm::TlsStream::Status::kWantInput:
        return true;
      case mitm::TlsStream::Status::kClosed:
        up_closed_ = true;
        return true;
      case mitm::TlsStream::Status::kError:
        UpstreamFailed("TLS with the origin: " + up_tls_->error());
        return false;
    }
    return true;
  }

  size_t UpstreamBacklog() const {
    return up_plain_.size() + (up_tls_ ? up_tls_->pending_output() : 0);
  }

  void DropUpstream() {
    if (up_registered_) loop_.Remove(up_.get());
    up_registered_ = false;
    up_.reset();
    up_tls_.reset();
    up_eof_ = false;
    up_closed_ = false;
    loop_.CancelTimer(up_timer_);
    up_timer_ = EventLoop::kNoTimer;
  }

  // A connection to the origin for the exchange in flight: the dialer again (its guard judges
  // the addresses anew), then TLS.
  void Redial() {
    DropUpstream();
    dialing_ = true;
    Dial({host_, port_, rules_, /*tunnel=*/true}, [this](DialOutcome outcome) {
      dialing_ = false;
      NoteDial(record_, outcome);
      if (!outcome.ok()) {
        if (outcome.failure == DialFailure::kBlocked) {
          return (void)RefuseForwarded(403, outcome.error);
        }
        return (void)RefuseForwarded(502, "cannot reach " + host_.text + ": " + outcome.error);
      }
      up_ = std::move(outcome.fd);
      up_leftover_ = std::move(outcome.leftover);
      if (!StartUpstreamTls()) return;
      Step();
    });
  }

  // --- Requests ------------------------------------------------------------------------------

  bool ProcessRequests() {
    while (ex_ == Exchange::kHead && !closing() && !req_in_.empty()) {
      http::RequestHeadResult head = http::ParseRequestHead(req_in_, {}, resume_);
      if (head.status == ParseStatus::kNeedMore) {
        resume_ = head.resume;
        if (client_closed_) {
          CloseClient();
          return false;
        }
        return true;
      }
      resume_ = 0;
      if (head.status == ParseStatus::kError) {
        record_ = NewRecord(Protocol::kHttps, host_.text, port_);
        record_.reason = "bad request: " + head.error;
        record_.status = head.http_error;
        ++requests_;
        Record(record_);
        return Refuse(head.http_error, "bad request", /*close=*/true);
      }
      request_ = std::move(head.request);
      head_bytes_ = head.consumed;
      if (!HandleRequest()) return false;
    }
    if (ex_ == Exchange::kBody) return FeedDeciderBody();
    if (ex_ == Exchange::kHolding) return PumpHeldBody();
    if (ex_ == Exchange::kForwarding) return PumpRequestBody();
    if (ex_ == Exchange::kRelay && !req_in_.empty()) {
      up_plain_ += req_in_;
      bytes_up_ += req_in_.size();
      req_in_.clear();
    }
    return true;
  }

  // Checks and forwards one request. false if the session ended.
  bool HandleRequest() {
    record_ = NewRecord(Protocol::kHttps, host_.text, port_);
    record_.matched_entry = tunnel_record_.matched_entry;
    record_.method = request_.method;
    record_.path = PathWithoutQuery(request_.target);
    ++requests_;
    const bool has_body = http::BodyFraming(request_).kind != http::Framing::Kind::kNone;
    const bool close = has_body || request_.ConnectionClose();
    const std::string method = ascii::ToLower(request_.method);
    if (request_.form != http::TargetForm::kOrigin &&
        !(request_.form == http::TargetForm::kAsterisk && request_.method == "OPTIONS")) {
      return Deny(400, "only origin-form requests are forwarded in a TLS tunnel", close);
    }
    if (sni_mismatch_) {
      return Deny(421, "TLS server name does not match the request target", close);
    }
    const http::Header* host = request_.Find("Host");
    if (host == nullptr && request_.version == http::Version::kHttp11) {
      return Deny(400, "HTTP/1.1 request without a Host header", close);
    }
    if (host != nullptr && !NamesTarget(host->value)) {
      return Deny(421, "Host header does not match the request target", close);
    }
    if (method == "trace" || method == "track") {
      return Deny(405, "the " + request_.method + " method is not forwarded", close);
    }
    edits_.reset();
    if (server_.options().decider) return AskDecider();
    return ContinueRequest();
  }

  // --- `srt proxy`: the decider (server/decider_step.h) ---------------------------------------

  bool AskDecider() {
    ex_ = Exchange::kDeciding;
    exchange_start_ = std::chrono::steady_clock::now();
    ask_id_ = server_.options().decider->Ask(
        DeciderRequest(request_, host_, port_,
                       sni_.empty() ? std::nullopt : std::optional<std::string>(sni_)),
        [this, live = std::weak_ptr<int>(live_)](DeciderLink::Outcome o) {
          if (!live.expired()) Decided(std::move(o));
        });
    return true;
  }

  void Decided(DeciderLink::Outcome outcome) {
    const bool need_body = outcome.kind == DeciderLink::Outcome::Kind::kVerdict &&
                           outcome.verdict.action == decider::Action::kNeedBody;
    if (!need_body) ask_id_ = 0;
    const bool has_body = http::BodyFraming(request_).kind != http::Framing::Kind::kNone;
    if (std::optional<DeciderRefusal> r = RefusalFor(outcome)) {
      ex_ = Exchange::kHead;
      body_.reset();
      if (DenyMarked(r->status, r->mark, r->reason, has_body || request_.ConnectionClose())) {
        Step();
      }
      return;
    }
    if (need_body) {
      body_.emplace(http::BodyFraming(request_), outcome.verdict.max);
      ex_ = Exchange::kBody;
      ArmTimeout(kIdleTimeout);
      if (FeedDeciderBody()) Step();
      return;
    }
    edits_ = std::move(outcome.verdict);
    ex_ = Exchange::kHead;
    if (ContinueRequest()) Step();
  }

  // kBody: the body after the head, taken off req_in_ as it comes, then shown. false if ended.
  bool FeedDeciderBody() {
    std::string rest = req_in_.substr(head_bytes_);
    const ParseStatus status = body_->Feed(rest);
    req_in_.resize(head_bytes_);
    req_in_ += rest;
    if (status == ParseStatus::kError) {
      server_.options().decider->Cancel(ask_id_);
      ask_id_ = 0;
      ex_ = Exchange::kHead;
      const std::string why = "bad chunked request body: " + body_->error();
      body_.reset();
      return DenyMarked(400, "bad_request", why, /*close=*/true);
    }
    if (status == ParseStatus::kNeedMore) return true;
    ex_ = Exchange::kDeciding;
    server_.options().decider->SendBody(
        ask_id_, body_->shown(), body_->cut(),
        [this, live = std::weak_ptr<int>(live_)](DeciderLink::Outcome o) {
          if (live.expired()) return;
          Decided(AfterBodyShown(std::move(o)));
        });
    return true;
  }

  // A refusal of `srt proxy`'s with X-Deny-Reason (Deny() without a decider). false if ended.
  bool DenyMarked(int status, std::string_view mark, const std::string& reason, bool close) {
    record_.reason = reason;
    record_.status = status;
    Record(record_);
    req_in_.erase(0, close ? req_in_.size() : head_bytes_);
    head_bytes_ = 0;
    if (!WriteClient(HttpDenied(status, mark, reason, close))) return false;
    if (close) {
      CloseClient();
      return false;
    }
    ArmTimeout(tls_.client_idle);
    return true;
  }

  // The request, checked (and allowed by the decider, with its edits), goes on: the rewriter,
  // then the origin. false if the session ended.
  bool ContinueRequest() {
    const bool close = http::BodyFraming(request_).kind != http::Framing::Kind::kNone ||
                       request_.ConnectionClose();
    RequestHead head{request_.method, request_.target, host_.text, port_, {}};
    const std::vector<std::string_view> named = http::NamedByConnection(request_.headers);
    for (const http::Header& h : request_.headers) {
      if ((edits_ && EditsDrop(*edits_, h.name)) || http::IsNamed(named, h.name)) continue;
      if (ascii::EqualsIgnoreCase(h.name, "Connection")) {
        std::string options = http::ConnectionForNextHop(h.value);
        if (!options.empty()) head.headers.push_back({h.name, std::move(options)});
        continue;
      }
      head.headers.push_back({h.name, h.value});
    }
    if (edits_) AddEditedFields(head);
    std::unique_ptr<ExchangeRewriter> rewriter;
    if (server_.options().rewriter) rewriter = server_.options().rewriter(head);
    if (rewriter) {
      if (Result<void> r = rewriter->OnRequestHead(head); !r) {
        return Deny(403, r.error().message(), close);
      }
      KeepHostAndFraming(head);
      if (rewriter->HoldsRequestBody() > 0) {
        rewriter_ = std::move(rewriter);
        return Hold(std::move(head));
      }
    }
    // A body to rewrite goes out re-framed as chunked (HTTP/1.1 only: 1.0 has no chunked).
    const http::Framing framing = http::BodyFraming(request_);
    rewrite_req_body_ =
        rewriter && rewriter->RewritesBodies() && request_.version == http::Version::kHttp11 &&
        (framing.kind == http::Framing::Kind::kChunked ||
         (framing.kind == http::Framing::Kind::kContentLength && framing.length > 0));
    // A rewriter that keeps lengths keeps a Content-Length (many origins refuse chunked
    // requests); the total is checked as the body goes.
    req_keep_length_ = rewrite_req_body_ && rewriter->KeepsBodyLengths() &&
                       framing.kind == http::Framing::Kind::kContentLength;
    req_kept_left_ = req_keep_length_ ? framing.length : 0;
    if (rewrite_req_body_ && !req_keep_length_) {
      std::erase_if(head.headers, [](const HeaderField& f) { return IsFraming(f.name); });
      head.headers.push_back({"Transfer-Encoding", "chunked"});
    }
    rewriter_ = std::move(rewriter);
    return Forward(head);
  }

  // An allow's added fields (EditedFields' lines) as header fields of `head`.
  void AddEditedFields(RequestHead& head) const {
    const std::string lines = EditedFields(*edits_, host_);
    size_t at = 0;
    while (at < lines.size()) {
      const size_t end = lines.find("\r\n", at);
      const std::string_view line = std::string_view(lines).substr(at, end - at);
      const size_t colon = line.find(": ");
      head.headers.push_back(
          {std::string(line.substr(0, colon)), std::string(line.substr(colon + 2))});
      at = end + 2;
    }
  }

  // Host and framing stay the client's (exchange_rewriter.h).
  void KeepHostAndFraming(RequestHead& head) const {
    std::vector<HeaderField> kept;
    for (HeaderField& f : head.headers) {
      if (!IsFramingOrHost(f.name)) kept.push_back(std::move(f));
    }
    head.headers.clear();
    for (const http::Header& h : request_.headers) {
      if (IsFramingOrHost(h.name)) head.headers.push_back({h.name, h.value});
    }
    head.headers.insert(head.headers.end(), kept.begin(), kept.end());
  }

  // The rewriter wants the whole body before the head goes out (exchange_rewriter.h): it is
  // read and decoded here, bounded by the rewriter's limit, then forwarded with a
  // Content-Length.
  bool Hold(RequestHead head) {
    held_head_ = std::move(head);
    held_body_.clear();
    req_in_.erase(0, head_bytes_);
    head_bytes_ = 0;
    req_framing_ = http::BodyFraming(request_);
    req_left_ = req_framing_.length;
    req_chunked_.emplace();
    req_done_ = req_framing_.kind == http::Framing::Kind::kNone ||
                (req_framing_.kind == http::Framing::Kind::kContentLength && req_left_ == 0);
    rewrite_req_body_ = rewriter_->RewritesBodies();
    // A client that waits for 100 Continue before its body would wait for the origin, which
    // gets the head only after the body: the proxy answers it (as Node's server does for
    // upstream's proxy). The origin may send its own 100 later; a client skips interim heads.
    if (const http::Header* expect = request_.Find("Expect");
        !req_done_ && expect != nullptr && request_.version == http::Version::kHttp11 &&
        ascii::EqualsIgnoreCase(expect->value, "100-continue")) {
      if (!WriteClient("HTTP/1.1 100 Continue\r\n\r\n")) return false;
    }
    exchange_start_ = std::chrono::steady_clock::now();
    bytes_up_ = 0;
    bytes_down_ = 0;
    ex_ = Exchange::kHolding;
    ArmTimeout(kIdleTimeout);
    return PumpHeldBody();
  }

  bool PumpHeldBody() {
    if (!req_done_ && !req_in_.empty()) {
      size_t take = 0;
      std::string data;
      if (req_framing_.kind == http::Framing::Kind::kContentLength) {
        take = static_cast<size_t>(std::min<uint64_t>(req_left_, req_in_.size()));
        req_left_ -= take;
        req_done_ = req_left_ == 0;
        data.assign(req_in_, 0, take);
      } else {
        http::ChunkedDecoder::Step step = req_chunked_->Feed(req_in_, &data);
        if (step.status == ParseStatus::kError) {
          ex_ = Exchange::kHead;
          return Deny(400, "bad chunked request body: " + req_chunked_->error(), true);
        }
        take = step.consumed;
        req_done_ = step.status == ParseStatus::kDone;
      }
      req_in_.erase(0, take);
      bytes_up_ += take;
      const std::string piece =
          rewrite_req_body_ ? rewriter_->OnRequestBody(data, req_done_) : data;
      if (held_body_.size() + piece.size() > rewriter_->HoldsRequestBody()) {
        DropHeldBody();
        ex_ = Exchange::kHead;
        return Deny(403, rewriter_->HeldBodyTooLarge(), /*close=*/true);
      }
      if (!held_bytes_.Take(piece.size())) {
        DropHeldBody();
        ex_ = Exchange::kHead;
        return Deny(503, "srt's proxy holds too many request bodies at once; try again later",
                    /*close=*/true);
      }
      held_body_ += piece;
    }
    if (!req_done_) return true;
    if (req_framing_.kind != http::Framing::Kind::kNone) {
      std::erase_if(held_head_.headers, [](const HeaderField& f) { return IsFraming(f.name); });
      held_head_.headers.push_back({"Content-Length", std::to_string(held_body_.size())});
    }
    const bool close = req_framing_.kind != http::Framing::Kind::kNone;
    if (Result<void> r = rewriter_->OnRequestBodyHeld(held_head_, held_body_); !r) {
      ex_ = Exchange::kHead;
      return Deny(403, r.error().message(), close);
    }
    // Host stays the client's, the framing the one just set.
    std::vector<HeaderField> out;
    for (const http::Header& h : request_.headers) {
      if (IsHost(h.name)) out.push_back({h.name, h.value});
    }
    for (HeaderField& f : held_head_.headers) {
      if (!IsHost(f.name)) out.push_back(std::move(f));
    }
    if (req_framing_.kind != http::Framing::Kind::kNone) {
      std::erase_if(out, [](const HeaderField& f) { return IsFraming(f.name); });
      out.push_back({"Content-Length", std::to_string(held_body_.size())});
    }
    held_head_.headers = std::move(out);
    rewrite_req_body_ = false;
    req_keep_length_ = false;
    body_held_ = true;
    ex_ = Exchange::kHead;
    return Forward(held_head_);
  }

  void DropHeldBody() {
    held_body_.clear();
    held_body_.shrink_to_fit();
    held_bytes_.Release();
  }

  // The Host header names the CONNECT target (server/host_match.h); 443 may go unsaid.
  bool NamesTarget(std::string_view value) const {
    return HostHeaderNames(value, host_, port_, /*default_port=*/443);
  }

  bool Forward(const RequestHead& head) {
    std::string out =
        head.method + " " + head.target +
        (request_.version == http::Version::kHttp10 ? " HTTP/1.0\r\n" : " HTTP/1.1\r\n");
    for (const HeaderField& h : head.headers) {
      if (ascii::EqualsIgnoreCase(h.name, "Proxy-Authorization") ||
          ascii::EqualsIgnoreCase(h.name, "Proxy-Connection")) {
        continue;
      }
      out += h.name + ": " + h.value + "\r\n";
    }
    out += "\r\n";
    req_in_.erase(0, head_bytes_);
    up_plain_ += out;
    last_head_ = std::move(out);
    bytes_up_ = last_head_.size();
    bytes_down_ = 0;
    exchange_start_ = std::chrono::steady_clock::now();
    req_framing_ = http::BodyFraming(request_);
    req_left_ = req_framing_.length;
    req_chunked_.emplace();
    req_done_ = req_framing_.kind == http::Framing::Kind::kNone ||
                (req_framing_.kind == http::Framing::Kind::kContentLength && req_left_ == 0);
    req_reframe_ = false;
    if (body_) {
      // The part read for the decider goes first; the rest follows by its framing (a chunked
      // one re-framed from where the decider's reading stopped).
      const std::string prefix = body_->ForwardPrefix();
      up_plain_ += prefix;
      bytes_up_ += prefix.size();
      if (req_framing_.kind == http::Framing::Kind::kChunked) {
        req_chunked_.emplace(body_->TakeDecoder());
        req_reframe_ = true;
        req_done_ = body_->ended();
      } else {
        req_left_ = body_->remaining();
        req_done_ = req_left_ == 0;
      }
      body_.reset();
    }
    if (body_held_) {
      // Read whole before the head (Hold): it goes out now, in one piece.
      body_held_ = false;
      up_plain_ += held_body_;
      bytes_up_ += held_body_.size();
      DropHeldBody();
      req_done_ = true;
    }
    resp_in_.clear();
    resp_resume_ = 0;
    resp_head_done_ = false;
    resp_done_ = false;
    resp_forwarded_ = false;
    up_closed_ = false;
    ex_ = Exchange::kForwarding;
    reused_upstream_ = up_ && up_used_;
    loop_.CancelTimer(up_timer_);
    up_timer_ = EventLoop::kNoTimer;
    ArmTimeout(kIdleTimeout);
    if (!up_error_.empty()) return RefuseForwarded(502, up_error_);
    if (!up_ && !dialing_) Redial();
    return PumpRequestBody();
  }

  bool PumpRequestBody() {
    if (req_done_ || req_in_.empty()) return true;
    size_t take = 0;
    std::string data;  // the decoded content, when it is rewritten
    if (req_framing_.kind == http::Framing::Kind::kContentLength) {
      take = static_cast<size_t>(std::min<uint64_t>(req_left_, req_in_.size()));
      req_left_ -= take;
      req_done_ = req_left_ == 0;
      if (rewrite_req_body_) data.assign(req_in_, 0, take);
    } else {
      http::ChunkedDecoder::Step step =
          req_chunked_->Feed(req_in_, rewrite_req_body_ || req_reframe_ ? &data : nullptr);
      if (step.status == ParseStatus::kError) {
        FailExchange("bad chunked request body: " + req_chunked_->error());
        return false;
      }
      take = step.consumed;
      req_done_ = step.status == ParseStatus::kDone;
    }
    if (req_reframe_ && !rewrite_req_body_) {
      // After a body shown to the decider: the decoded rest, in chunks of srt's own.
      http::AppendChunk(up_plain_, data);
      if (req_done_) up_plain_ += "0\r\n\r\n";
    } else if (rewrite_req_body_ && req_keep_length_) {
      const std::string out = rewriter_->OnRequestBody(data, req_done_);
      if (out.size() > req_kept_left_ || (req_done_ && out.size() != req_kept_left_)) {
        FailExchange("the request rewriter changed the body's length");
        return false;
      }
      req_kept_left_ -= out.size();
      up_plain_ += out;
    } else if (rewrite_req_body_) {
      http::AppendChunk(up_plain_, rewriter_->OnRequestBody(data, req_done_));
      if (req_done_) up_plain_ += "0\r\n\r\n";
    } else {
      up_plain_.append(req_in_, 0, take);
    }
    req_in_.erase(0, take);
    bytes_up_ += take;
    return true;
  }

  // A refusal recorded and answered in the tunnel; the connection stays for the next request
  // unless `close`.
  bool Deny(int status, const std::string& reason, bool close) {
    if (server_.options().decider) {
      // `srt proxy`: the proxy's own refusals say why in X-Deny-Reason, as on plain HTTP.
      const std::string_view mark = status == 421   ? "misdirected"
                                    : status == 405 ? "method_refused"
                                                    : "bad_request";
      return DenyMarked(status, mark, reason, close);
    }
    record_.reason = reason;
    record_.status = status;
    Record(record_);
    return Refuse(status, reason, close);
  }

  bool Refuse(int status, const std::string& reason, bool close) {
    req_in_.erase(0, close ? req_in_.size() : head_bytes_);
    head_bytes_ = 0;
    // The reason may quote the origin (a malformed response head): no real value goes back.
    if (!WriteClient(HttpRefusedInTunnel(status, server_.Scrub(reason), close))) return false;
    if (close) {
      CloseClient();
      return false;
    }
    ArmTimeout(tls_.client_idle);
    return true;
  }

  // The exchange in flight cannot reach the origin: answered by the proxy, logged, closed.
  bool RefuseForwarded(int status, const std::string& reason) {
    if (ex_ != Exchange::kForwarding) return true;
    if (resp_forwarded_) {
      FailExchange(reason);
      return false;
    }
    record_.allowed = status != 403;
    if (status == 403) record_.reason = reason;
    record_.status = status;
    CompleteRecord(status == 403 ? "" : "error", status == 403 ? "" : reason);
    ex_ = Exchange::kHead;
    req_in_.clear();
    if (!WriteClient(HttpRefusedInTunnel(status, reason, /*close=*/true))) return false;
    CloseClient();
    return false;
  }

  // --- Responses -----------------------------------------------------------------------------

  bool ProcessResponse() {
    if (ex_ == Exchange::kRelay) {
      if (!resp_in_.empty()) {
        bytes_down_ += resp_in_.size();
        if (!WriteClient(resp_in_)) return false;
        resp_in_.clear();
      }
      if (up_closed_ || (client_closed_ && UpstreamBacklog() == 0)) {
        CompleteRecord("closed", "");
        CloseClient();
        return false;
      }
      return true;
    }
    if (ex_ != Exchange::kForwarding) return true;
    while (!resp_head_done_ && !resp_in_.empty()) {
      http::ResponseHeadResult head = http::ParseResponseHead(resp_in_, {}, resp_resume_);
      if (head.status == ParseStatus::kNeedMore) {
        resp_resume_ = head.resume;
        if (resp_in_.size() > http::Limits{}.max_head_bytes) {
          UpstreamFailed("response head larger than the limit");
          return false;
        }
        break;
      }
      resp_resume_ = 0;
      if (head.status == ParseStatus::kError) {
        UpstreamFailed("bad response: " + head.error);
        return false;
      }
      std::string bytes = resp_in_.substr(0, head.consumed);
      rewrite_resp_body_ = false;
      resp_keep_length_ = false;
      if (rewriter_ && head.response.status >= 200) {
        const http::Framing framing = http::BodyFraming(request_, head.response);
        rewrite_resp_body_ =
            rewriter_->RewritesBodies() && framing.kind != http::Framing::Kind::kNone &&
            !(framing.kind == http::Framing::Kind::kContentLength && framing.length == 0);
        resp_keep_length_ = rewrite_resp_body_ && rewriter_->KeepsBodyLengths() &&
                            framing.kind == http::Framing::Kind::kContentLength;
        resp_kept_left_ = resp_keep_length_ ? framing.length : 0;
        bytes = RewriteResponse(head.response);
      }
      // Every head, interim and 101 ones included, whole (reason phrase, names, the fields the
      // rewriter may not touch): no masked credential's real value reaches the client in it.
      bytes = server_.Scrub(bytes);
      if (!server_.options().strip_response_headers.empty()) {
        bytes = http::WithoutFields(bytes, [this](std::string_view name) {
          return server_.options().StripsResponseHeader(name);
        });
      }
      resp_in_.erase(0, head.consumed);
      bytes_down_ += bytes.size();
      if (!WriteClient(bytes)) return false;
      resp_forwarded_ = true;
      record_.status = head.response.status;
      if (head.response.status == 101) {
        // Switching Protocols (WebSocket over TLS): from here both sides' bytes are relayed.
        ex_ = Exchange::kRelay;
        record_.allowed = true;
        if (!req_in_.empty()) {
          up_plain_ += req_in_;
          req_in_.clear();
        }
        return ProcessResponse();
      }
      if (head.response.status < 200) continue;  // interim: the final head follows
      response_ = std::move(head.response);
      resp_framing_ = http::BodyFraming(request_, response_);
      resp_left_ = resp_framing_.length;
      resp_chunked_.emplace();
      resp_head_done_ = true;
      resp_done_ = resp_framing_.kind == http::Framing::Kind::kNone ||
                   (resp_framing_.kind == http::Framing::Kind::kContentLength && resp_left_ == 0);
    }
    if (resp_head_done_ && !resp_done_ && !resp_in_.empty()) {
      size_t take = resp_in_.size();
      std::string data;  // the decoded content, when it is rewritten
      if (resp_framing_.kind == http::Framing::Kind::kContentLength) {
        take = static_cast<size_t>(std::min<uint64_t>(resp_left_, resp_in_.size()));
        resp_left_ -= take;
        resp_done_ = resp_left_ == 0;
        if (rewrite_resp_body_) data.assign(resp_in_, 0, take);
      } else if (resp_framing_.kind == http::Framing::Kind::kChunked) {
        http::ChunkedDecoder::Step step =
            resp_chunked_->Feed(resp_in_, rewrite_resp_body_ ? &data : nullptr);
        if (step.status == ParseStatus::kError) {
          UpstreamFailed("bad chunked response body: " + resp_chunked_->error());
          return false;
        }
        take = step.consumed;
        resp_done_ = step.status == ParseStatus::kDone;
      } else if (rewrite_resp_body_) {
        data = resp_in_;  // until close
      }
      if (rewrite_resp_body_) {
        if (!WriteRewrittenBody(data, resp_done_)) return false;
      } else {
        if (!WriteClient(std::string_view(resp_in_).substr(0, take))) return false;
        bytes_down_ += take;
      }
      resp_in_.erase(0, take);
    }
    if (resp_done_) return FinishExchange();
    if (up_closed_ || (up_eof_ && !up_tls_)) return UpstreamEnded();
    return true;
  }

  // The response head after the rewriter: its framing kept, or, when the body is rewritten,
  // chunked (an HTTP/1.0 client: until close).
  std::string RewriteResponse(const http::Response& response) {
    ResponseHead head{response.status, response.reason, {}};
    for (const http::Header& h : response.headers) head.headers.push_back({h.name, h.value});
    rewriter_->OnResponseHead(head);
    std::string out =
        std::string(response.version == http::Version::kHttp10 ? "HTTP/1.0 " : "HTTP/1.1 ") +
        std::to_string(response.status) + " ";
    for (char c : head.reason) out.push_back(static_cast<unsigned char>(c) < 0x20 ? ' ' : c);
    out += "\r\n";
    for (const http::Header& h : response.headers) {
      if (IsFramingOrHost(h.name) &&
          !(rewrite_resp_body_ && !resp_keep_length_ && IsFraming(h.name))) {
        out += h.name + ": " + h.value + "\r\n";
      }
    }
    if (rewrite_resp_body_ && !resp_keep_length_) {
      out += request_.version == http::Version::kHttp11 ? "Transfer-Encoding: chunked\r\n"
                                                        : "Connection: close\r\n";
    }
    for (const HeaderField& f : head.headers) {
      if (IsFramingOrHost(f.name) || !ascii::IsToken(f.name) || !SafeFieldValue(f.value)) {
        continue;
      }
      out += f.name + ": " + f.value + "\r\n";
    }
    return out + "\r\n";
  }

  // What the rewriter makes of a piece of response body, framed for the client. false if the
  // session ended.
  bool WriteRewrittenBody(std::string_view data, bool last) {
    const std::string out = rewriter_->OnResponseBody(data, last);
    if (resp_keep_length_) {
      if (out.size() > resp_kept_left_ || (last && out.size() != resp_kept_left_)) {
        UpstreamFailed("the response rewriter changed the body's length");
        return false;
      }
      resp_kept_left_ -= out.size();
      bytes_down_ += out.size();
      return WriteClient(out);
    }
    std::string framed;
    if (request_.version == http::Version::kHttp11) {
      http::AppendChunk(framed, out);
      if (last) framed += "0\r\n\r\n";
    } else {
      framed = out;
    }
    bytes_down_ += framed.size();
    return WriteClient(framed);
  }

  // The origin's connection ended (TLS close or EOF) during an exchange.
  bool UpstreamEnded() {
    if (resp_head_done_ && resp_framing_.kind == http::Framing::Kind::kUntilClose) {
      resp_done_ = true;
      if (rewrite_resp_body_ && !WriteRewrittenBody("", /*last=*/true)) return false;
      return FinishExchange();
    }
    if (!resp_forwarded_ && reused_upstream_ && req_framing_.kind == http::Framing::Kind::kNone &&
        resp_in_.empty()) {
      // A kept-alive connection the origin closed while idle (RFC 9112 §9.3.1): once more on a
      // fresh one.
      reused_upstream_ = false;
      up_plain_ = last_head_;
      Redial();
      return true;
    }
    return RefuseForwarded(502, "the origin closed the connection before answering");
  }

  bool FinishExchange() {
    CompleteRecord("closed", "");
    rewriter_.reset();
    const bool until_close = resp_framing_.kind == http::Framing::Kind::kUntilClose;
    const bool keep_upstream = req_done_ && UpstreamBacklog() == 0 && resp_in_.empty() &&
                               !response_.ConnectionClose() && !until_close && !up_closed_;
    // A rewritten body sent to an HTTP/1.0 client ends with the connection.
    const bool keep_client = req_done_ && !request_.ConnectionClose() && !until_close &&
                             !client_closed_ && !client_eof_ &&
                             !(rewrite_resp_body_ && request_.version == http::Version::kHttp10);
    if (!keep_upstream) {
      DropUpstream();
    } else {
      up_used_ = true;
      up_timer_ = loop_.AddTimer(tls_.upstream_idle, [this] {
        up_timer_ = EventLoop::kNoTimer;
        DropUpstream();
      });
    }
    if (!keep_client) {
      CloseClient();
      return false;
    }
    ex_ = Exchange::kHead;
    ArmTimeout(tls_.client_idle);
    return ProcessRequests();
  }

  // --- Output and ends ----------------------------------------------------------------------

  // Encrypts plaintext for the client; FlushAll() sends it. false if the session ended.
  bool WriteClient(std::string_view plain) {
    if (client_tls_->Write(plain) != mitm::TlsStream::Status::kOk) {
      ClientGone("client TLS: " + client_tls_->error());
      return false;
    }
    return true;
  }

  // Moves the client's pending ciphertext to the session's queue (before SendAndClose).
  bool DrainClient() {
    const std::string_view cipher = client_tls_->output();
    QueueClient(cipher);
    client_tls_->Consume(cipher.size());
    return true;
  }

  // What the client is owed: queued bytes and ciphertext not sent yet.
  size_t ClientOwed() const {
    return client_backlog() + (client_tls_ ? client_tls_->pending_output() : 0);
  }

  bool FlushAll() {
    if (!FlushClient()) {
      ClientGone("client connection lost");
      return false;
    }
    // The queue first (a CONNECT's 200 before the handshake), then records in place.
    while (client_tls_ && client_backlog() == 0 && client_tls_->pending_output() > 0) {
      const std::string_view cipher = client_tls_->output();
      const ssize_t n = send(client_.get(), cipher.data(), cipher.size(), MSG_NOSIGNAL);
      if (n < 0) {
        if (errno == EAGAIN || errno == EINTR) break;
        ClientGone("client connection lost");
        return false;
      }
      client_tls_->Consume(static_cast<size_t>(n));
    }
    return FlushUpstream();
  }

  bool FlushUpstream() {
    if (!up_ || !up_tls_) return true;
    // Plaintext waits for the origin's handshake (a Write before it would start one).
    if (!up_plain_.empty() && up_tls_->handshake_done()) {
      if (up_tls_->Write(up_plain_) != mitm::TlsStream::Status::kOk) {
        UpstreamFailed("TLS with the origin: " + up_tls_->error());
        return false;
      }
      up_plain_.clear();
    }
    while (up_tls_->pending_output() > 0) {
      const std::string_view cipher = up_tls_->output();
      const ssize_t n = send(up_.get(), cipher.data(), cipher.size(), MSG_NOSIGNAL);
      if (n < 0) {
        if (errno == EAGAIN || errno == EINTR) break;
        UpstreamFailed(std::string("writing to the origin: ") + ErrnoText(errno));
        return false;
      }
      up_tls_->Consume(static_cast<size_t>(n));
    }
    return true;
  }

  void Interest() {
    uint32_t client = 0;
    if (WantClientInput()) client |= EPOLLIN | EPOLLRDHUP;
    if (ClientOwed() > 0) client |= EPOLLOUT;
    if (ex_ == Exchange::kHead) {
      // Idle between requests: no buffer a burst grew stays behind (a bulk response grows
      // resp_in_ to kPumpBytes; an idle tunnel must cost less than 64 KiB, issue 11).
      if (client_tls_) client_tls_->Trim();
      if (up_tls_) up_tls_->Trim();
      ReleaseIfEmpty(resp_in_);
      ReleaseIfEmpty(req_in_);
      ReleaseIfEmpty(up_plain_);
      ReleaseIfEmpty(in_);
    }
    if (!SetClientInterest(client)) return End();
    if (!up_ || !up_tls_) return;
    uint32_t upstream = 0;
    // While idle the origin is still watched, so its close is noticed (and the socket freed).
    const bool read_up = !up_eof_ && (!up_tls_->handshake_done() || ex_ == Exchange::kHead ||
                                      ex_ == Exchange::kHolding || ex_ == Exchange::kDeciding ||
                                      ex_ == Exchange::kBody || ClientOwed() < kPumpBytes);
    if (read_up) upstream |= EPOLLIN;
    if (up_tls_->pending_output() > 0) upstream |= EPOLLOUT;
    if (!SetUpstreamInterest(upstream)) End();
  }

  bool SetUpstreamInterest(uint32_t events) {
    if (events == 0) {
      if (up_registered_) loop_.Remove(up_.get());
      up_registered_ = false;
      return true;
    }
    if (!up_registered_) {
      if (!loop_.Add(up_.get(), events, &up_handler_)) return false;
      up_registered_ = true;
    } else if (events != up_interest_ && !loop_.Modify(up_.get(), events)) {
      return false;
    }
    up_interest_ = events;
    return true;
  }

  void UpstreamFailed(const std::string& error) {
    DropUpstream();
    if (ex_ == Exchange::kForwarding && !resp_forwarded_) {
      (void)RefuseForwarded(502, error);
      return;
    }
    // A kept-alive origin connection that goes while a body is held is dialed again.
    if (ex_ != Exchange::kHead && ex_ != Exchange::kHolding) return FailExchange(error);
    Step();
  }

  // The exchange cannot complete: logged, and the client reset so it cannot take a cut
  // response for a whole one.
  void FailExchange(const std::string& error) {
    CompleteRecord("error", error);
    Abort();
  }

  // The tunnel fails before any request: one record for the CONNECT.
  void FailTunnel(const std::string& error, std::string_view end) {
    LogTunnel(end, error);
    Abort();
  }

  void ClientGone(const std::string& error) {
    if (ex_ != Exchange::kHead) CompleteRecord("error", error);
    if (requests_ == 0) LogTunnel("error", error);
    End();
  }

  // A clean close: close_notify, then the socket once everything is written.
  void CloseClient() {
    DropUpstream();
    if (client_tls_) {
      client_tls_->Close();
      DrainClient();
    }
    if (requests_ == 0) LogTunnel("closed", "");
    SendAndClose("");
  }

  void Finish() { CloseClient(); }

  void LogTunnel(std::string_view end, std::string_view error) {
    if (tunnel_logged_) return;
    tunnel_logged_ = true;
    tunnel_record_.end = std::string(end);
    tunnel_record_.error = std::string(error);
    Record(tunnel_record_);
  }

  void CompleteRecord(std::string_view end, std::string_view error) {
    if (ex_ == Exchange::kHead) return;
    record_.credentials.clear();
    if (rewriter_) {
      for (const ExchangeRewriter::CredentialCount& c : rewriter_->credential_counts()) {
        record_.credentials.push_back({c.name, c.injected, c.kept, c.masked});
      }
    }
    record_.address = tunnel_record_.address;
    record_.via_parent = tunnel_record_.via_parent;
    record_.bytes_up = bytes_up_;
    record_.bytes_down = bytes_down_;
    record_.duration = std::chrono::duration_cast<std::chrono::microseconds>(
        std::chrono::steady_clock::now() - exchange_start_);
    record_.allowed = record_.reason.empty();
    record_.end = std::string(end);
    record_.error = std::string(error);
    Record(record_);
    ex_ = Exchange::kHead;  // recorded once
  }

  const TlsTermination& tls_;
  const Host host_;
  const uint16_t port_;
  std::shared_ptr<const NetworkRules> rules_;
  std::unique_ptr<TlsTunnelSlot> slot_;
  ConnectionRecord tunnel_record_;  // the CONNECT's: logged only if no request was
  bool tunnel_logged_ = false;

  Phase phase_ = Phase::kSniff;
  bool client_eof_ = false;
  bool client_eof_fed_ = false;
  bool client_closed_ = false;  // TLS close_notify or EOF from the client
  bool sni_mismatch_ = false;
  std::string sni_;  // the ClientHello's server name as sent, "" for none
  std::unique_ptr<mitm::TlsStream> client_tls_;
  std::string req_in_;  // decrypted, not consumed yet
  size_t resume_ = 0;
  size_t requests_ = 0;

  // The exchange.
  Exchange ex_ = Exchange::kHead;
  http::Request request_;
  size_t head_bytes_ = 0;
  std::string last_head_;
  ConnectionRecord record_;
  std::unique_ptr<ExchangeRewriter> rewriter_;
  // `srt proxy`: the request the decider is asked about (0: none), the body it asked for, and
  // the allow's header edits. The link may answer after this session ended: its callbacks hold
  // live_ weakly.
  uint64_t ask_id_ = 0;
  std::shared_ptr<int> live_ = std::make_shared<int>(0);
  std::optional<DeciderBody> body_;
  std::optional<decider::Verdict> edits_;
  bool req_reframe_ = false;  // a chunked body continued after the decider read its start
  // kHolding: the request's head as the rewriter left it, and its body so far (decoded).
  RequestHead held_head_;
  std::string held_body_;
  bool body_held_ = false;          // Forward sends held_body_ (read whole) instead of pumping
  HeldBytes held_bytes_;            // held_body_'s share of the process's budget
  bool rewrite_req_body_ = false;   // re-framed as chunked through the rewriter
  bool rewrite_resp_body_ = false;  // likewise
  // Through a rewriter that keeps lengths: the Content-Length kept, and what it still allows.
  bool req_keep_length_ = false;
  uint64_t req_kept_left_ = 0;
  bool resp_keep_length_ = false;
  uint64_t resp_kept_left_ = 0;
  std::chrono::steady_clock::time_point exchange_start_;
  uint64_t bytes_up_ = 0;
  uint64_t bytes_down_ = 0;
  http::Framing req_framing_;
  uint64_t req_left_ = 0;
  std::optional<http::ChunkedDecoder> req_chunked_;
  bool req_done_ = true;
  std::string resp_in_;
  size_t resp_resume_ = 0;
  bool resp_head_done_ = false;
  bool resp_done_ = false;
  bool resp_forwarded_ = false;
  http::Response response_;
  http::Framing resp_framing_;
  uint64_t resp_left_ = 0;
  std::optional<http::ChunkedDecoder> resp_chunked_;

  // The origin.
  UpstreamHandler up_handler_;
  UniqueFd up_;
  std::unique_ptr<mitm::TlsStream> up_tls_;
  std::string up_leftover_;
  std::string up_plain_;  // plaintext waiting for the origin's TLS
  bool up_registered_ = false;
  uint32_t up_interest_ = 0;
  bool up_eof_ = false;
  bool up_closed_ = false;
  bool dialing_ = false;
  bool reused_upstream_ = false;
  bool up_used_ = false;  // an exchange completed on this connection (a retry is safe)
  std::string up_error_;  // the origin's TLS failed: every request gets 502 with this
  EventLoop::TimerId up_timer_ = EventLoop::kNoTimer;

  std::string client_preamble_;
};

}  // namespace

std::unique_ptr<Session> MakeTerminatedSession(TerminatedTunnel tunnel) {
  return std::make_unique<TerminatedSession>(std::move(tunnel));
}

}  // namespace srt::proxy
