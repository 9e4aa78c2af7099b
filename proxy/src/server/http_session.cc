// SPDX-License-Identifier: Apache-2.0
// server/http_session.cc: HTTP/1.x proxy requests on one client connection: CONNECT tunnels and
// absolute-form requests forwarded with keep-alive on both sides (RFC 9112; the origin connections
// a client connection used are kept in its own pool, server/upstream_pool.h, and reused for its
// later requests to the same authority under the same rules).
//
// One exchange at a time: the request head is parsed and decided, the upstream dialed (or
// reused), the head rewritten to origin form (absolute form to a parent proxy) and the body
// streamed by its framing while the response streams back by its own. Pipelined requests wait in
// the buffer for the next exchange. User-space copies here are bounded by kPumpBytes per side;
// bulk traffic takes CONNECT, which is spliced by a Tunnel.
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <optional>

#include "base/system_text.h"
#include "decider/protocol.h"
#include "http/base64.h"
#include "http/chunked_decoder.h"
#include "http/head_parser.h"
#include "http/response_writer.h"
#include "inject/exchange.h"
#include "server/decider_link.h"
#include "server/decider_step.h"
#include "server/host_match.h"
#include "server/responses.h"
#include "server/session.h"
#include "server/upstream_pool.h"
#include "wire/ascii.h"

namespace srt::proxy {
namespace {

// The most a session buffers in either direction before it stops reading the other side.
constexpr size_t kPumpBytes = size_t{256} * 1024;
// One recv() from the origin.
constexpr size_t kUpstreamReadBytes = size_t{64} * 1024;

bool IsHopByHopForUpstream(std::string_view name) {
  return ascii::EqualsIgnoreCase(name, "Proxy-Authorization") ||
         ascii::EqualsIgnoreCase(name, "Proxy-Connection") || ascii::EqualsIgnoreCase(name, "Host");
}

// The request-target of a head the parser refused, as the client sent it (for the log: at most
// kMaxHostLength bytes, anything outside printable ASCII as '?'), or "".
std::string RawTarget(std::string_view head) {
  const size_t line_end = head.find_first_of("\r\n");
  std::string_view line = head.substr(0, line_end);
  const size_t first = line.find(' ');
  if (first == std::string_view::npos) return "";
  std::string_view target = line.substr(first + 1);
  target = target.substr(0, target.find(' '));
  target = target.substr(0, kMaxHostLength);
  std::string out(target);
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x21 || static_cast<unsigned char>(c) > 0x7e) c = '?';
  }
  return out;
}

// The Host header for an origin: the authority without the default port.
std::string HostHeader(const Host& host, uint16_t port) {
  if (port == 80) return host.kind == Host::Kind::kIpv6 ? "[" + host.text + "]" : host.text;
  return FormatAuthority(host, port);
}

class HttpSession final : public Session {
 public:
  HttpSession(ProxyServer& server, UniqueFd client, std::string initial)
      : Session(server, std::move(client), std::move(initial)),
        pool_(loop_, server.idle_upstreams(), server.options().upstream_pool) {
    upstream_handler_.session = this;
  }

  ~HttpSession() override {
    if (ask_id_ != 0 && server_.options().decider) server_.options().decider->Cancel(ask_id_);
    DropUpstream();
  }

  void Start() override {
    ArmTimeout(server_.options().handshake_timeout);
    if (!UpdateInterest()) return End();
    ProcessHeads();
  }

  void OnEvents(uint32_t events) override {
    if (closing()) return ContinueClose();
    if ((events & EPOLLOUT) != 0 && !FlushClient()) return ClientGone();
    if ((events & EPOLLIN) != 0 && WantClientInput()) {
      // Once the request is in, what follows can only be the next (pipelined) head; while a
      // body is read for the decider, at most the part it asked for.
      const size_t limit = state_ == State::kHead || req_done_ ? http::Limits{}.max_head_bytes + 1
                           : state_ == State::kBody            ? head_bytes_ + body_->want()
                                                               : in_.size() + kPumpBytes;
      switch (ReadClient(limit)) {
        case ReadStatus::kData:
        case ReadStatus::kFull:
        case ReadStatus::kAgain:
          break;
        case ReadStatus::kEof:
          if (state_ == State::kHead) {
            if (!in_.empty()) return Abort();         // a partial head
            if (client_backlog() == 0) return End();  // closed between requests: nothing to log
            // A client that half-closed after its request: the rest of the last response is
            // still queued, and goes out before the session ends.
            client_eof_ = true;
            break;
          }
          if (state_ == State::kBody) return Abort();  // the body the decider asked for, cut
          if (!req_done_) return FailExchange("client closed the connection mid-request");
          client_eof_ = true;
          break;
        case ReadStatus::kError:
          return ClientGone();
      }
      if (state_ == State::kHead) return ProcessHeads();
      if (state_ == State::kBody) return CheckBody();
      if (state_ == State::kForwarding) {
        if (!PumpRequestBody()) return;
        if (!FlushUpstream()) return;
      }
    }
    if (state_ == State::kHead && !closing() && client_backlog() == 0 && client_eof_) return End();
    if (!UpdateInterest()) return End();
  }

  void OnUpstreamEvents(uint32_t events) {
    if ((events & EPOLLOUT) != 0 && !FlushUpstream()) return;
    if ((events & EPOLLIN) == 0) return;
    // Through the stack: growing resp_in_ by a read's worth to receive in place zero-filled
    // 64 KiB per response (a std::string cannot grow uninitialised), which cost more than
    // copying the bytes that came (a 100-byte answer copies 100 bytes).
    char buf[kUpstreamReadBytes];
    const ssize_t n = recv(up_->fd(), buf, sizeof buf, 0);
    if (n > 0) resp_in_.append(buf, static_cast<size_t>(n));
    if (n < 0) {
      if (errno == EAGAIN || errno == EINTR) return;
      return UpstreamFailed(std::string("reading from the destination: ") + ErrnoText(errno));
    }
    if (n == 0) return UpstreamEof();
    ProcessResponse();
  }

  void OnTimeout() override {
    if (state_ == State::kForwarding) return FailExchange("no traffic for too long");
    Abort();  // a client that never finished a head, or an idle kept-alive connection
  }

 protected:
  void LogInFlight() override {
    if (state_ == State::kDeciding || state_ == State::kBody || dial_ != 0) {
      record_.end = "shutdown";
      Record(record_);
    } else if (state_ == State::kForwarding) {
      CompleteRecord("shutdown", "");
    }
  }

 private:
  // kDeciding: the decider is asked (`srt proxy`); kBody: it asked for the body, being read.
  enum class State { kHead, kDeciding, kBody, kDialing, kForwarding };

  struct UpstreamHandler final : Handler {
    HttpSession* session = nullptr;
    void OnEvents(uint32_t events) override { session->OnUpstreamEvents(events); }
  };

  bool WantClientInput() const {
    if (state_ == State::kHead) return !client_eof_ && client_backlog() < kPumpBytes;
    if (state_ == State::kBody) return !client_eof_ && in_.size() < head_bytes_ + body_->want();
    if (state_ == State::kForwarding) {
      // After the request, the client stays watched (a close is seen, and its interest does not
      // flip at every exchange); a pipelined head waits in in_, bounded like any head.
      if (req_done_) return !client_eof_ && in_.size() <= http::Limits{}.max_head_bytes;
      return !client_eof_ && up_out_.size() - up_sent_ < kPumpBytes;
    }
    return false;
  }

  bool UpdateInterest() {
    uint32_t client = 0;
    if (WantClientInput()) client |= EPOLLIN;
    if (client_backlog() > 0) client |= EPOLLOUT;
    if (!SetClientInterest(client)) return false;
    if (!up_) return true;
    uint32_t upstream = 0;
    // EPOLLRDHUP too: the same mask as while it idles in the pool, so no epoll_ctl per exchange.
    if (state_ == State::kForwarding && !resp_done_ && client_backlog() < kPumpBytes) {
      upstream |= EPOLLIN | EPOLLRDHUP;
    }
    if (up_sent_ < up_out_.size()) upstream |= EPOLLOUT;
    return up_->SetInterest(upstream);
  }

  void DropUpstream() {
    up_.reset();
    up_out_.clear();
    up_sent_ = 0;
  }

  // --- Request heads ---------------------------------------------------------------------------

  void ProcessHeads() {
    while (state_ == State::kHead && !closing() && !in_.empty()) {
      http::RequestHeadResult head = http::ParseRequestHead(in_, {}, resume_);
      if (head.status == ParseStatus::kNeedMore) {
        resume_ = head.resume;
        break;
      }
      resume_ = 0;
      if (head.status == ParseStatus::kError) {
        const bool connect = in_.starts_with("CONNECT ");
        ConnectionRecord record =
            NewRecord(connect ? Protocol::kConnect : Protocol::kHttp, RawTarget(in_), 0);
        record.reason = "bad request: " + head.error;
        Record(record);
        return SendAndClose(HttpError(head.http_error, connect));
      }
      request_ = std::move(head.request);
      head_bytes_ = head.consumed;
      if (!HandleRequest()) return;  // the session ended
    }
    if (!closing() && !UpdateInterest()) return End();
  }

  // Decides one parsed request. false if the session ended.
  bool HandleRequest() {
    const bool connect = request_.method == "CONNECT";
    const Protocol protocol = connect ? Protocol::kConnect : Protocol::kHttp;
    const bool has_body = http::BodyFraming(request_).kind != http::Framing::Kind::kNone;
    record_ = NewRecord(protocol, request_.host, request_.port);

    if (!server_.options().token.empty()) {
      std::optional<http::BasicCredentials> credentials = request_.ProxyAuthorization();
      if (!credentials || !server_.Authorized(credentials->user, credentials->password)) {
        record_.reason = credentials ? "wrong proxy credentials" : "missing proxy credentials";
        Record(record_);
        return RefuseKeepingAlive(HttpProxyAuthRequired(), has_body);
      }
    }
    const bool proxy_form = connect ? request_.form == http::TargetForm::kAuthority
                                    : request_.form == http::TargetForm::kAbsolute;
    if (!proxy_form) {
      record_.reason = "bad request: not a proxy request target";
      Record(record_);
      SendAndClose(HttpError(400, connect));
      return false;
    }
    // A kept-alive client asks for the same origin request after request: the canonical host,
    // the lists' decision and the pool's key are kept for the spelling, port and rules they
    // were made for (a live update brings new rules, so a new decision).
    std::shared_ptr<const NetworkRules> rules = server_.rules();
    if (!decided_ || request_.host != decided_spelling_ || request_.port != decided_port_ ||
        rules != rules_) {
      decided_ = false;
      Result<Host> host = CanonicalizeHost(request_.host);
      if (!host) {
        record_.reason = std::string(kMalformedHost);
        Record(record_);
        SendAndClose(HttpBlocked(connect, kMalformedHost));
        return false;
      }
      host_ = std::move(*host);
      rules_ = std::move(rules);
      decision_ = rules_->matcher.Evaluate(host_, request_.port);
      authority_ = FormatAuthority(host_, request_.port);
      decided_spelling_ = request_.host;
      decided_port_ = request_.port;
      decided_ = true;
    }
    record_.host = host_.text;
    const Decision& decision = decision_;
    record_.matched_entry = decision.matched_entry;
    if (!decision.allowed) {
      record_.reason = decision.reason;
      Record(record_);
      if (server_.options().decider) {
        return Refuse(403, "host_not_allowed", kBlockedBody, has_body || connect);
      }
      if (connect) {
        SendAndClose(HttpBlocked(true, decision.reason));
        return false;
      }
      return RefuseKeepingAlive(HttpBlocked(false, decision.reason), has_body);
    }
    if (!connect && server_.options().require_host_match) {
      // network.requireHostMatch (and `srt proxy`): the Host a client wrote must name the origin
      // it asked for. Without it the Host is rewritten to the origin's own name (BeginForwarding),
      // so another virtual host of a shared front end is not reached either way; this makes the
      // client hear about it.
      if (std::optional<std::string> why = HostMismatch()) {
        record_.reason = *why;
        Record(record_);
        if (server_.options().decider) return Refuse(421, "misdirected", *why, has_body);
        return RefuseKeepingAlive(HttpRefusedInTunnel(421, *why, false), has_body);
      }
    }
    if (!connect && server_.options().decider) {
      // The echo of TRACE/TRACK would hand back what an allow added (upstream refuses them too).
      if (request_.method == "TRACE" || request_.method == "TRACK") {
        record_.reason = "method refused";
        Record(record_);
        return Refuse(405, "method_refused", "TRACE and TRACK are refused", has_body);
      }
      record_.allowed = true;
      return AskDecider(has_body);
    }
    record_.allowed = true;
    if (connect) {
      const bool terminates = server_.Terminates(*rules_, host_, request_.port);
      if (server_.options().refuse_opaque_tunnels && !terminates) {
        record_.allowed = false;
        record_.reason =
            "this proxy does not tunnel CONNECTs it cannot inspect (refuseOpaqueTunnels)";
        Record(record_);
        if (server_.options().decider) {
          return Refuse(403, "opaque_tunnel",
                        "this proxy does not tunnel CONNECTs it cannot inspect", true);
        }
        SendAndClose(HttpOpaqueTunnelRefused());
        return false;
      }
      in_.erase(0, head_bytes_);
      if (terminates) {
        // network.tlsTerminate: the slot is taken before the first bytes are seen (as upstream),
        // so at the cap a CONNECT that would not carry TLS is refused too.
        tls_slot_ = server_.TakeTlsSlot(*rules_);
        if (!tls_slot_) {
          record_.allowed = false;
          record_.reason = "too many TLS-terminated tunnels at once";
          Record(record_);
          SendAndClose(HttpTooManyTunnels());
          return false;
        }
      }
      BeginDial(/*tunnel=*/true);
      return state_ == State::kDialing;
    }
    return Forward();
  }

  // An allowed plain-HTTP request: over a kept upstream connection or a new one. false if the
  // session ended.
  bool Forward() {
    DropUpstream();
    UpstreamIdentity want;
    want.authority = authority_;
    want.rules = rules_;
    up_ = pool_.Take(want);
    if (up_) {
      up_->Activate(&upstream_handler_);
      reused_upstream_ = true;
      return BeginForwarding();
    }
    reused_upstream_ = false;
    BeginDial(/*tunnel=*/false);
    return state_ == State::kDialing;
  }

  // --- `srt proxy`: the decider ------------------------------------------------------------

  // A refusal of the proxy's own with X-Deny-Reason: kept alive unless `close`. false if the
  // session ended.
  bool Refuse(int status, std::string_view mark, std::string_view body, bool close) {
    const std::string response = HttpDenied(status, mark, body, close);
    if (close || request_.ConnectionClose()) {
      SendAndClose(response);
      return false;
    }
    return RefuseKeepingAlive(response, false);
  }

  // Asks the decider about request_ (allowed by the lists); the answer comes to Decided().
  bool AskDecider(bool has_body) {
    state_ = State::kDeciding;
    edits_.reset();
    CancelTimeout();
    if (!SetClientInterest(client_backlog() > 0 ? static_cast<uint32_t>(EPOLLOUT) : 0u)) {
      End();
      return false;
    }
    decider::Request r = DeciderRequest(request_, host_, request_.port);
    ask_id_ = server_.options().decider->Ask(
        std::move(r), [this, has_body, live = std::weak_ptr<int>(live_)](DeciderLink::Outcome o) {
          if (!live.expired()) Decided(std::move(o), has_body);
        });
    return true;
  }

  void Decided(DeciderLink::Outcome outcome, bool has_body) {
    using Kind = DeciderLink::Outcome::Kind;
    const bool keep_id =
        outcome.kind == Kind::kVerdict && outcome.verdict.action == decider::Action::kNeedBody;
    if (!keep_id) ask_id_ = 0;
    // Once a body was read for the decider, the connection cannot carry another request.
    const bool reading = body_.has_value();
    auto refuse = [&](int status, std::string_view mark, const std::string& why) {
      record_.allowed = false;
      record_.reason = why;
      Record(record_);
      state_ = State::kHead;
      body_.reset();
      if (Refuse(status, mark, why, has_body || reading)) ProcessHeads();
    };
    if (std::optional<DeciderRefusal> r = RefusalFor(outcome)) {
      return refuse(r->status, r->mark, r->reason);
    }
    decider::Verdict& v = outcome.verdict;
    if (v.action == decider::Action::kNeedBody) return StartBody(v.max);
    if ((!v.set_headers.empty() || !v.cred.empty()) && !server_.options().plaintext_header_set) {
      return refuse(403, "plaintext_header_set", std::string(kPlaintextHeaderSetBody));
    }
    edits_ = std::move(v);
    state_ = State::kHead;
    if (Forward() && state_ != State::kDialing && !UpdateInterest()) End();
  }

  // need_body: the body (at most `max` bytes of it, de-chunked) is read, then shown to the
  // decider (server/decider_step.h).
  void StartBody(uint32_t max) {
    body_.emplace(http::BodyFraming(request_), max);
    state_ = State::kBody;
    ArmTimeout(kIdleTimeout);
    CheckBody();
  }

  void CheckBody() {
    // The body is taken off in_ after the head as it comes.
    std::string rest = in_.substr(head_bytes_);
    const ParseStatus status = body_->Feed(rest);
    in_.resize(head_bytes_);
    in_ += rest;
    if (status == ParseStatus::kError) {
      server_.options().decider->Cancel(ask_id_);
      ask_id_ = 0;
      record_.allowed = false;
      record_.reason = "bad chunked request body: " + body_->error();
      Record(record_);
      return SendAndClose(HttpError(400, false));
    }
    if (status == ParseStatus::kNeedMore) {
      if (!UpdateInterest()) End();
      return;
    }
    state_ = State::kDeciding;
    CancelTimeout();
    if (!SetClientInterest(0)) return End();
    server_.options().decider->SendBody(
        ask_id_, body_->shown(), body_->cut(),
        [this, live = std::weak_ptr<int>(live_)](DeciderLink::Outcome o) {
          if (live.expired()) return;
          Decided(AfterBodyShown(std::move(o)), true);
        });
  }

  bool EditsDrop(std::string_view name) const {
    return edits_ && srt::proxy::EditsDrop(*edits_, name);
  }
  std::string EditedFields() const {
    return edits_ ? srt::proxy::EditedFields(*edits_, host_) : std::string();
  }

  // Why the absolute-form request's Host fields do not name its target (one field, naming the
  // same host and port, the port left out only for 80); nullopt if they do or there is none.
  std::optional<std::string> HostMismatch() const {
    const http::Header* host = nullptr;
    for (const http::Header& h : request_.headers) {
      if (!ascii::EqualsIgnoreCase(h.name, "Host")) continue;
      if (host != nullptr) return "more than one Host header";
      host = &h;
    }
    if (host == nullptr || HostHeaderNames(host->value, host_, request_.port, 80)) {
      return std::nullopt;
    }
    return "Host header does not match the request target";
  }

  // Answers a refused request and keeps the connection for the next one, unless the request
  // has a body (it would have to be read and thrown away) or the client asked to close.
  bool RefuseKeepingAlive(const std::string& response, bool has_body) {
    if (has_body || request_.ConnectionClose()) {
      SendAndClose(response);
      return false;
    }
    in_.erase(0, head_bytes_);
    QueueClient(response);
    if (!FlushClient()) {
      ClientGone();
      return false;
    }
    ArmTimeout(kIdleTimeout);
    return true;
  }

  void BeginDial(bool tunnel) {
    state_ = State::kDialing;
    CancelTimeout();
    if (!SetClientInterest(0)) return End();
    Dial({host_, request_.port, rules_, tunnel},
         [this, tunnel](DialOutcome outcome) { Dialed(tunnel, std::move(outcome)); });
  }

  void Dialed(bool tunnel, DialOutcome outcome) {
    NoteDial(record_, outcome);
    if (!outcome.ok()) {
      Record(record_);
      if (server_.options().decider && outcome.failure == DialFailure::kBlocked) {
        (void)Refuse(403, "address_not_allowed",
                     "Connection to " + host_.text + " blocked: " + outcome.error, true);
        return;
      }
      return SendAndClose(outcome.failure == DialFailure::kBlocked
                              ? HttpResolvedBlocked(tunnel, host_.text, outcome.error)
                              : HttpBadGateway(tunnel));
    }
    if (tunnel && tls_slot_) return HandOverToTermination(std::move(outcome));
    if (tunnel) {
      std::string to_client = http::FormatConnectEstablished() + outcome.leftover;
      return StartOpaqueTunnel(std::move(outcome.fd), to_client, std::move(record_), host_,
                               request_.port);
    }
    UpstreamIdentity identity;
    identity.authority = FormatAuthority(host_, request_.port);
    identity.rules = rules_;
    identity.via_parent = outcome.via_parent;
    identity.parent_authorization = std::move(outcome.parent_authorization);
    identity.address = record_.address;
    up_ = std::make_unique<UpstreamConn>(loop_, std::move(outcome.fd), std::move(identity));
    up_->Activate(&upstream_handler_);
    if (!BeginForwarding()) return;
    if (!UpdateInterest()) return End();
  }

  // The CONNECT is allowed, dialed and to be terminated: terminated_session.cc takes over.
  void HandOverToTermination(DialOutcome outcome) {
    Session::HandOverToTermination(std::move(outcome), http::FormatConnectEstablished(),
                                   std::move(record_), host_, request_.port, rules_,
                                   std::move(tls_slot_));
  }

  // --- Forwarding one exchange -----------------------------------------------------------------

  // false if the session ended.
  bool BeginForwarding() {
    // To a parent, the absolute form of the authority the policy decided on, never the client's
    // spelling of it (case, a trailing dot, userinfo, a default port): the parent must not read
    // it another way.
    const UpstreamIdentity& up = up_->identity();
    std::string head =
        request_.method + " " +
        (up.via_parent ? "http://" + HostHeader(host_, request_.port) + request_.path
                       : request_.path) +
        (request_.version == http::Version::kHttp10 ? " HTTP/1.0\r\n" : " HTTP/1.1\r\n");
    // The Host header names the origin the policy allowed, whatever the client wrote there
    // (a different Host would reach another virtual host of the same address).
    head += "Host: " + HostHeader(host_, request_.port) + "\r\n";
    StartInjection();
    const std::vector<std::string_view> named = http::NamedByConnection(request_.headers);
    for (const http::Header& h : request_.headers) {
      if (IsHopByHopForUpstream(h.name) || EditsDrop(h.name) || http::IsNamed(named, h.name)) {
        continue;
      }
      if (ascii::EqualsIgnoreCase(h.name, "Connection")) {
        const std::string options = http::ConnectionForNextHop(h.value);
        if (!options.empty()) head += h.name + ": " + options + "\r\n";
        continue;
      }
      // Header values are re-rendered, so a sentinel may have another length than its value.
      head += h.name + ": " + (inject_ ? inject_->RequestHeaderValue(h.value) : h.value) + "\r\n";
    }
    // edits_ stays until the next request is decided: a retry on a fresh upstream connection
    // re-renders this head and must carry the same edits.
    head += EditedFields();
    if (up.via_parent && !up.parent_authorization.empty()) {
      head += "Proxy-Authorization: " + up.parent_authorization + "\r\n";
    }
    head += "\r\n";
    in_.erase(0, head_bytes_);
    up_out_ += head;
    bytes_up_ = head.size();
    bytes_down_ = 0;
    record_.address = up.address;
    record_.via_parent = up.via_parent;
    exchange_start_ = std::chrono::steady_clock::now();

    req_framing_ = http::BodyFraming(request_);
    req_left_ = req_framing_.length;
    req_chunked_.emplace();
    req_done_ = req_framing_.kind == http::Framing::Kind::kNone ||
                (req_framing_.kind == http::Framing::Kind::kContentLength && req_left_ == 0);
    req_reframe_ = false;
    if (body_) {
      // The part of the body read for the decider goes first; the rest follows by its framing
      // (a chunked one re-framed from where the decider's reading stopped).
      const std::string prefix = body_->ForwardPrefix();
      up_out_ += prefix;
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
    resp_in_.clear();
    resp_resume_ = 0;
    resp_head_done_ = false;
    resp_done_ = false;
    resp_forwarded_ = false;
    state_ = State::kForwarding;
    ArmTimeout(kIdleTimeout);
    if (!PumpRequestBody()) return false;
    if (!FlushUpstream()) return false;
    if (!UpdateInterest()) {
      End();
      return false;
    }
    return true;
  }

  // Moves request body bytes from the client buffer to the upstream buffer. false if ended.
  bool PumpRequestBody() {
    if (req_done_ || in_.empty()) return true;
    size_t take = 0;
    bool chunked = false;
    inject::DataSpans data;
    if (req_framing_.kind == http::Framing::Kind::kContentLength) {
      take = static_cast<size_t>(std::min<uint64_t>(req_left_, in_.size()));
      req_left_ -= take;
      req_done_ = req_left_ == 0;
    } else if (req_reframe_) {
      // After a body shown to the decider (no injection under `srt proxy`): decoded, re-framed.
      std::string payload;
      http::ChunkedDecoder::Step step = req_chunked_->Feed(in_, &payload);
      if (step.status == ParseStatus::kError) {
        FailExchange("bad chunked request body: " + req_chunked_->error());
        return false;
      }
      req_done_ = step.status == ParseStatus::kDone;
      http::AppendChunk(up_out_, payload);
      if (req_done_) up_out_ += "0\r\n\r\n";
      in_.erase(0, step.consumed);
      bytes_up_ += step.consumed;
      return true;
    } else {
      http::ChunkedDecoder::Step step = req_chunked_->Feed(in_, inject_ ? &data : nullptr);
      if (step.status == ParseStatus::kError) {
        FailExchange("bad chunked request body: " + req_chunked_->error());
        return false;
      }
      take = step.consumed;
      req_done_ = step.status == ParseStatus::kDone;
      chunked = true;
    }
    if (inject_) {
      inject_->RequestBody(std::string_view(in_).substr(0, take), chunked ? &data : nullptr,
                           req_done_, up_out_);
      if (inject_->overflowed()) {
        FailExchange("chunked request body holds a sentinel's prefix for too long");
        return false;
      }
    } else {
      up_out_.append(in_, 0, take);
    }
    in_.erase(0, take);
    bytes_up_ += take;
    return true;
  }

  // Credential injection for this exchange (credentials.allowPlaintextInject): sentinels of the
  // host's credentials become real values in the head and body going up; real values become
  // sentinels in the response coming down (inject/exchange.h).
  void StartInjection() {
    inject_.reset();
    const ProxyOptions& o = server_.options();
    if (!o.injector || !o.inject_plaintext || o.injector->empty()) return;
    inject_.emplace(*o.injector, host_);
  }

  // The exchange's credential uses, for its record.
  void NoteInjection() {
    if (!inject_) return;
    record_.credentials.clear();
    for (const inject::Totals& t : inject_->totals()) {
      record_.credentials.push_back({t.name, t.injected, t.kept, t.masked});
    }
  }

  // false if the session ended.
  bool FlushUpstream() {
    while (up_sent_ < up_out_.size()) {
      const ssize_t n =
          send(up_->fd(), up_out_.data() + up_sent_, up_out_.size() - up_sent_, MSG_NOSIGNAL);
      if (n < 0) {
        if (errno == EAGAIN || errno == EINTR) break;
        UpstreamFailed(std::string("writing to the destination: ") + ErrnoText(errno));
        return false;
      }
      up_sent_ += static_cast<size_t>(n);
    }
    if (up_sent_ == up_out_.size()) {
      up_out_.clear();
      up_sent_ = 0;
    }
    ArmTimeout(kIdleTimeout);
    if (!UpdateInterest()) {
      End();
      return false;
    }
    return true;
  }

  void ProcessResponse() {
    ArmTimeout(kIdleTimeout);
    while (!resp_head_done_) {
      http::ResponseHeadResult head = http::ParseResponseHead(resp_in_, {}, resp_resume_);
      if (head.status == ParseStatus::kNeedMore) {
        resp_resume_ = head.resume;
        if (resp_in_.size() > http::Limits{}.max_head_bytes) {
          return UpstreamFailed("response head larger than the limit");
        }
        return Pumped();
      }
      resp_resume_ = 0;
      if (head.status == ParseStatus::kError) return UpstreamFailed("bad response: " + head.error);
      std::string out;
      if (inject_) {
        inject_->ResponseHead(std::string_view(resp_in_).substr(0, head.consumed), out);
      } else {
        out.assign(resp_in_, 0, head.consumed);
      }
      if (!server_.options().strip_response_headers.empty()) {
        out = http::WithoutFields(out, [this](std::string_view name) {
          return server_.options().StripsResponseHeader(name);
        });
      }
      QueueClient(out);
      resp_in_.erase(0, head.consumed);
      bytes_down_ += head.consumed;
      resp_forwarded_ = true;
      if (head.response.status == 101) return Upgrade();
      if (head.response.status < 200) continue;  // interim (100 Continue, 103): the final follows
      response_ = std::move(head.response);
      resp_framing_ = http::BodyFraming(request_, response_);
      resp_left_ = resp_framing_.length;
      resp_chunked_.emplace();
      resp_head_done_ = true;
      resp_done_ = resp_framing_.kind == http::Framing::Kind::kNone ||
                   (resp_framing_.kind == http::Framing::Kind::kContentLength && resp_left_ == 0);
    }
    if (!resp_done_ && !resp_in_.empty()) {
      size_t take = resp_in_.size();
      bool chunked = false;
      inject::DataSpans data;
      if (resp_framing_.kind == http::Framing::Kind::kContentLength) {
        take = static_cast<size_t>(std::min<uint64_t>(resp_left_, resp_in_.size()));
        resp_left_ -= take;
        resp_done_ = resp_left_ == 0;
      } else if (resp_framing_.kind == http::Framing::Kind::kChunked && inject_) {
        // Re-framed, as on terminated TLS: chunk extensions and trailer fields are framing the
        // injector does not read, so an origin could echo a real value there. Only the payload
        // goes on, swapped back, in chunks of srt's own.
        std::string payload;
        http::ChunkedDecoder::Step step = resp_chunked_->Feed(resp_in_, &payload);
        if (step.status == ParseStatus::kError) {
          return UpstreamFailed("bad chunked response body: " + resp_chunked_->error());
        }
        take = step.consumed;
        resp_done_ = step.status == ParseStatus::kDone;
        std::string out;
        inject_->ResponseBody(payload, nullptr, resp_done_, out);
        std::string framed;
        http::AppendChunk(framed, out);
        if (resp_done_) framed += "0\r\n\r\n";
        QueueClient(framed);
        bytes_down_ += take;
        resp_in_.erase(0, take);
        if (!FlushClient()) return ClientGone();
        if (resp_done_) return FinishExchange();
        return Pumped();
      } else if (resp_framing_.kind == http::Framing::Kind::kChunked) {
        http::ChunkedDecoder::Step step = resp_chunked_->Feed(resp_in_, inject_ ? &data : nullptr);
        if (step.status == ParseStatus::kError) {
          return UpstreamFailed("bad chunked response body: " + resp_chunked_->error());
        }
        take = step.consumed;
        resp_done_ = step.status == ParseStatus::kDone;
        chunked = true;
      }
      if (inject_) {
        std::string out;
        inject_->ResponseBody(std::string_view(resp_in_).substr(0, take), chunked ? &data : nullptr,
                              resp_done_, out);
        if (inject_->overflowed()) {
          return FailExchange("chunked response body holds a secret's prefix for too long");
        }
        QueueClient(out);
      } else {
        QueueClient(std::string_view(resp_in_).substr(0, take));
      }
      bytes_down_ += take;
      resp_in_.erase(0, take);
    }
    if (!FlushClient()) return ClientGone();
    if (resp_done_) return FinishExchange();
    Pumped();
  }

  void Pumped() {
    if (!UpdateInterest()) return End();
  }

  void FinishExchange() {
    CompleteRecord("closed", "");
    const bool until_close = resp_framing_.kind == http::Framing::Kind::kUntilClose;
    const bool keep_upstream = req_done_ && up_sent_ == up_out_.size() && resp_in_.empty() &&
                               !response_.ConnectionClose() && !until_close;
    const bool keep_client =
        req_done_ && !request_.ConnectionClose() && !until_close && !client_eof_;
    if (keep_upstream) {
      // Kept only for this client, for this authority and these rules (server/upstream_pool.h).
      up_out_.clear();
      up_sent_ = 0;
      pool_.Put(std::move(up_));
    }
    DropUpstream();
    if (!keep_client) return SendAndClose("");
    state_ = State::kHead;
    ArmTimeout(kIdleTimeout);
    ProcessHeads();
  }

  void Upgrade() {
    // 101 Switching Protocols (WebSocket over plain HTTP): from here both sides speak another
    // protocol; relay bytes. The record covers the whole upgraded connection.
    UniqueFd upstream = up_->Release();
    up_.reset();
    std::string to_upstream = up_out_.substr(up_sent_) + in_;
    in_.clear();
    ConnectionRecord record = record_;
    record.bytes_up = 0;  // the tunnel counts from here; heads were small
    std::string to_client = std::move(resp_in_);
    resp_in_.clear();
    up_out_.clear();
    up_sent_ = 0;
    pool_.Clear();
    StartTunnel(std::move(upstream), std::move(to_upstream), to_client, std::move(record));
  }

  // A kept-alive connection the destination closed (or reset) while it was idle, found out as
  // the request went out (RFC 9112 §9.3.1): retry once on a fresh one, when nothing of this
  // request was answered and it has no body to replay. True if it did.
  bool RetryOnFreshConnection() {
    if (resp_forwarded_ || !reused_upstream_ || req_framing_.kind != http::Framing::Kind::kNone ||
        !resp_in_.empty()) {
      return false;
    }
    DropUpstream();
    reused_upstream_ = false;
    head_bytes_ = 0;  // the head was already taken off in_; BeginForwarding re-renders it
    BeginDial(/*tunnel=*/false);
    return true;
  }

  void UpstreamEof() {
    if (!resp_head_done_) {
      if (RetryOnFreshConnection()) return;
      return UpstreamFailed("the destination closed the connection before answering");
    }
    if (resp_framing_.kind == http::Framing::Kind::kUntilClose) {
      resp_done_ = true;
      if (inject_) {
        std::string out;
        inject_->ResponseBody({}, nullptr, /*last=*/true, out);
        QueueClient(out);
      }
      if (!FlushClient()) return ClientGone();
      return FinishExchange();
    }
    FailExchange("the destination closed the connection mid-response");
  }

  void UpstreamFailed(const std::string& error) {
    if (resp_forwarded_) return FailExchange(error);
    if (RetryOnFreshConnection()) return;
    CompleteRecord("error", error);
    DropUpstream();
    SendAndClose(HttpBadGateway(false));
  }

  // The exchange cannot complete: log it and reset the client, so it cannot mistake a cut
  // response for a whole one.
  void FailExchange(const std::string& error) {
    CompleteRecord("error", error);
    Abort();
  }

  void ClientGone() {
    if (state_ == State::kForwarding) CompleteRecord("error", "client connection lost");
    End();
  }

  void CompleteRecord(std::string_view end, std::string_view error) {
    if (state_ != State::kForwarding) return;
    NoteInjection();
    record_.bytes_up = bytes_up_;
    record_.bytes_down = bytes_down_;
    record_.duration = std::chrono::duration_cast<std::chrono::microseconds>(
        std::chrono::steady_clock::now() - exchange_start_);
    record_.end = end;
    record_.error = error;
    Record(record_);
    state_ = State::kHead;  // recorded once
  }

  State state_ = State::kHead;
  size_t resume_ = 0;
  // `srt proxy`: the request the decider is asked about (0: none), the body it asked for, and
  // the allow's header edits for the request about to be forwarded.
  uint64_t ask_id_ = 0;
  // The decider link may answer after this session ended (a queued "unavailable"): its
  // callbacks hold this weakly and do nothing once it is gone.
  std::shared_ptr<int> live_ = std::make_shared<int>(0);
  std::optional<DeciderBody> body_;  // need_body's, until the request is forwarded or refused
  std::optional<decider::Verdict> edits_;
  std::unique_ptr<TlsTunnelSlot> tls_slot_;  // a CONNECT to be TLS-terminated
  bool client_eof_ = false;

  // The exchange.
  http::Request request_;
  size_t head_bytes_ = 0;
  Host host_;
  std::shared_ptr<const NetworkRules> rules_;
  // HandleRequest's memo: host_, decision_ and authority_ were made from decided_spelling_ and
  // decided_port_ under rules_.
  bool decided_ = false;
  std::string decided_spelling_;
  uint16_t decided_port_ = 0;
  Decision decision_;
  std::string authority_;
  ConnectionRecord record_;
  std::chrono::steady_clock::time_point exchange_start_;
  uint64_t bytes_up_ = 0;
  uint64_t bytes_down_ = 0;
  http::Framing req_framing_;
  uint64_t req_left_ = 0;
  std::optional<http::ChunkedDecoder> req_chunked_;
  bool req_reframe_ = false;  // a chunked body continued after the decider read its start
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
  // Credential injection (StartInjection); empty when off.
  std::optional<inject::Exchange> inject_;

  // The origin connection of the exchange; between exchanges it waits in pool_.
  UpstreamHandler upstream_handler_;
  UpstreamPool pool_;
  std::unique_ptr<UpstreamConn> up_;
  bool reused_upstream_ = false;
  std::string up_out_;
  size_t up_sent_ = 0;
};

}  // namespace

std::unique_ptr<Session> MakeHttpSession(ProxyServer& server, UniqueFd client,
                                         std::string initial) {
  return std::make_unique<HttpSession>(server, std::move(client), std::move(initial));
}

}  // namespace srt::proxy
