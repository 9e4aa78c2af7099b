// SPDX-License-Identifier: Apache-2.0
// server/socks5_session.cc: SOCKS5 (RFC 1928) CONNECT with username/password authentication
// (RFC 1929) on one client connection, then a Tunnel.
//
// Authentication, as upstream srt: a client offering username/password (0x02) must present the
// sandbox's credentials (a wrong pair gets status 1 and a close). A client offering only "no
// authentication" is accepted into the request phase and then refused with REP 0x02 (not allowed
// by ruleset), so it learns why; for port 22 the refusal is an SSH banner and disconnect message
// instead, which ssh prints. A destination the policy or the address guard refuses on port 22 gets
// the same, saying to use an https remote (ssh through the proxy is how git's ssh remotes reach
// out; a bare REP 2 would only show "Connection closed by remote host"). With no token
// configured, no authentication is required.
#include "server/responses.h"
#include "server/session.h"
#include "socks5/socks5_parser.h"

namespace srt::proxy {
namespace {

constexpr uint16_t kSshPort = 22;

// Greeting (2 + 255), user/pass (3 + 255 + 255) and a request (4 + 1 + 255 + 2) all fit.
constexpr size_t kMaxHandshakeBytes = 1024;

std::span<const uint8_t> Bytes(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

std::string_view AsText(std::span<const uint8_t> bytes) {
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

class Socks5Session final : public Session {
 public:
  using Session::Session;

  void Start() override {
    ArmTimeout(server_.options().handshake_timeout);
    if (!SetClientInterest(EPOLLIN)) return End();
    Process();
  }

  void OnEvents(uint32_t events) override {
    if (closing()) return ContinueClose();
    if ((events & EPOLLOUT) != 0 && !FlushClient()) return End();
    if ((events & EPOLLIN) != 0 && phase_ != Phase::kDialing) {
      switch (ReadClient(kMaxHandshakeBytes)) {
        case ReadStatus::kEof:
        case ReadStatus::kError:
          return End();
        case ReadStatus::kFull:
          return Abort();  // more than any handshake message can be
        case ReadStatus::kData:
        case ReadStatus::kAgain:
          break;
      }
      Process();
      return;
    }
    UpdateInterest();
  }

 protected:
  void LogInFlight() override {
    if (dial_ == 0) return;
    record_.end = "shutdown";
    Record(record_);
  }

 private:
  enum class Phase { kGreeting, kUserPass, kRequest, kDialing };

  void UpdateInterest() {
    uint32_t events = phase_ == Phase::kDialing ? 0u : static_cast<uint32_t>(EPOLLIN);
    if (client_backlog() > 0) events |= EPOLLOUT;
    if (!SetClientInterest(events)) return End();
  }

  void Reply(std::span<const uint8_t> bytes) { QueueClient(AsText(bytes)); }

  void Process() {
    for (;;) {
      switch (phase_) {
        case Phase::kGreeting: {
          socks5::GreetingResult r = socks5::ParseGreeting(Bytes(in_));
          if (r.status == ParseStatus::kNeedMore) return UpdateInterest();
          if (r.status == ParseStatus::kError) return Abort();
          in_.erase(0, r.consumed);
          const bool token = !server_.options().token.empty();
          if (!token && r.greeting.Offers(socks5::kMethodNoAuth)) {
            authenticated_ = true;
            Reply(socks5::MethodSelection(socks5::kMethodNoAuth));
            phase_ = Phase::kRequest;
          } else if (r.greeting.Offers(socks5::kMethodUserPass)) {
            Reply(socks5::MethodSelection(socks5::kMethodUserPass));
            phase_ = Phase::kUserPass;
          } else if (r.greeting.Offers(socks5::kMethodNoAuth)) {
            // Accepted only to refuse the request with a reason (see the file comment).
            Reply(socks5::MethodSelection(socks5::kMethodNoAuth));
            phase_ = Phase::kRequest;
          } else {
            return SendAndClose(AsText(socks5::MethodSelection(socks5::kMethodNoAcceptable)));
          }
          if (!FlushClient()) return End();
          break;
        }
        case Phase::kUserPass: {
          socks5::UserPassResult r = socks5::ParseUserPass(Bytes(in_));
          if (r.status == ParseStatus::kNeedMore) return UpdateInterest();
          if (r.status == ParseStatus::kError) return Abort();
          in_.erase(0, r.consumed);
          if (!server_.Authorized(r.credentials.username, r.credentials.password)) {
            ConnectionRecord record = NewRecord(Protocol::kSocks5, "", 0);
            record.reason = "wrong proxy credentials";
            Record(record);
            return SendAndClose(AsText(socks5::UserPassStatus(false)));
          }
          authenticated_ = true;
          Reply(socks5::UserPassStatus(true));
          if (!FlushClient()) return End();
          phase_ = Phase::kRequest;
          break;
        }
        case Phase::kRequest: {
          socks5::RequestResult r = socks5::ParseRequest(Bytes(in_));
          if (r.status == ParseStatus::kNeedMore) return UpdateInterest();
          if (r.status == ParseStatus::kError) {
            ConnectionRecord record = NewRecord(Protocol::kSocks5, "", 0);
            record.reason = "bad request: " + r.error;
            Record(record);
            return SendAndClose(AsText(socks5::Reply(r.reply)));
          }
          in_.erase(0, r.consumed);
          return HandleRequest(r.request);
        }
        case Phase::kDialing:
          return;
      }
    }
  }

  void HandleRequest(const socks5::Request& request) {
    record_ = NewRecord(Protocol::kSocks5, request.host, request.port);
    if (!authenticated_) {
      record_.reason = "missing proxy credentials";
      Record(record_);
      if (request.port == kSshPort) {
        std::string bytes(AsText(socks5::Reply(socks5::kReplySucceeded)));
        bytes += SshPolicyRefusal(
            "srt: this SOCKS5 client sent no proxy credentials; use the sandbox's "
            "ALL_PROXY or GIT_SSH_COMMAND");
        return SendAndClose(bytes);
      }
      return SendAndClose(AsText(socks5::Reply(socks5::kReplyNotAllowed)));
    }
    if (request.command != socks5::kCommandConnect) {
      record_.reason = "unsupported SOCKS5 command " + std::to_string(request.command);
      Record(record_);
      return SendAndClose(AsText(socks5::Reply(socks5::kReplyCommandNotSupported)));
    }
    if (server_.options().refuse_opaque_tunnels) {
      // Every SOCKS5 tunnel is opaque to the proxy (upstream: REP 1, general failure).
      record_.reason = std::string(kRefuseOpaqueTunnelsReason);
      Record(record_);
      return SendAndClose(AsText(socks5::Reply(socks5::kReplyGeneralFailure)));
    }
    Result<Host> host = request.address ? Result<Host>(HostFromAddress(*request.address))
                                        : CanonicalizeHost(request.host);
    if (!host) {
      record_.reason = std::string(kMalformedHost);
      Record(record_);
      return SendAndClose(AsText(socks5::Reply(socks5::kReplyNotAllowed)));
    }
    host_ = std::move(*host);
    record_.host = host_.text;
    std::shared_ptr<const NetworkRules> rules = server_.rules();
    const Decision decision = rules->matcher.Evaluate(host_, request.port);
    record_.matched_entry = decision.matched_entry;
    if (!decision.allowed) {
      record_.reason = decision.reason;
      Record(record_);
      return RefuseByPolicy(request.port);
    }
    record_.allowed = true;
    port_ = request.port;
    if (server_.Terminates(*rules, host_, request.port)) {
      // network.tlsTerminate, as for a CONNECT (http_session.cc): the slot first.
      tls_slot_ = server_.TakeTlsSlot(*rules);
      if (!tls_slot_) {
        record_.allowed = false;
        record_.reason = "too many TLS-terminated tunnels at once";
        Record(record_);
        return SendAndClose(AsText(socks5::Reply(socks5::kReplyGeneralFailure)));
      }
    }
    phase_ = Phase::kDialing;
    CancelTimeout();
    if (!SetClientInterest(client_backlog() > 0 ? static_cast<uint32_t>(EPOLLOUT) : 0u))
      return End();
    rules_ = rules;  // a terminated tunnel dials again under the rules it was allowed by
    Dial({host_, request.port, std::move(rules), /*tunnel=*/true},
         [this](DialOutcome outcome) { Dialed(std::move(outcome)); });
  }

  void Dialed(DialOutcome outcome) {
    NoteDial(record_, outcome);
    if (!outcome.ok()) {
      Record(record_);
      if (outcome.failure == DialFailure::kBlocked) return RefuseByPolicy(port_);
      return SendAndClose(AsText(socks5::Reply(socks5::kReplyHostUnreachable)));
    }
    std::string to_client(AsText(socks5::Reply(socks5::kReplySucceeded)));
    if (tls_slot_) {
      return HandOverToTermination(std::move(outcome), to_client, std::move(record_), host_, port_,
                                   std::move(rules_), std::move(tls_slot_));
    }
    to_client += outcome.leftover;
    StartOpaqueTunnel(std::move(outcome.fd), to_client, std::move(record_), host_, port_);
  }

  // REP 2, or on port 22 what ssh shows the user.
  void RefuseByPolicy(uint16_t port) {
    if (port != kSshPort) return SendAndClose(AsText(socks5::Reply(socks5::kReplyNotAllowed)));
    std::string bytes(AsText(socks5::Reply(socks5::kReplySucceeded)));
    bytes += SshPolicyRefusal(
        "ssh to this destination is blocked by sandbox policy; use an https remote");
    SendAndClose(bytes);
  }

  Phase phase_ = Phase::kGreeting;
  bool authenticated_ = false;
  Host host_;
  uint16_t port_ = 0;
  std::shared_ptr<const NetworkRules> rules_;
  ConnectionRecord record_;
  std::unique_ptr<TlsTunnelSlot> tls_slot_;  // a tunnel to be TLS-terminated
};

}  // namespace

std::unique_ptr<Session> MakeSocks5Session(ProxyServer& server, UniqueFd client,
                                           std::string initial) {
  return std::make_unique<Socks5Session>(server, std::move(client), std::move(initial));
}

}  // namespace srt::proxy
