// SPDX-License-Identifier: Apache-2.0
// server/capture_session.cc: a transparently captured connection (a program in the sandbox
// connected to some address directly, ignoring the proxy variables; the sandbox's routes deliver
// every address to its loopback, where srt listens). The original destination is the socket's
// local address. An address the DNS stub gave out stands for the names it gave it out for
// (dns/answers.h): a synthetic address for its one name, a real address for every allowed name it
// was shown for (names sharing a CDN's address); any other address stands for itself. The
// connection is then decided and dialed like a CONNECT to that host and port; a real address that
// no name allowed on the port covers is judged as itself.
//
// On port 443 the first bytes must be a TLS ClientHello whose SNI names the same host (for an
// address the stub gave out: one of its names that the policy allows on 443; for an IP
// destination: a name the policy allows on that port, or no SNI). Otherwise a client could reach
// an allowed address while its TLS asks a shared front end (a CDN) for another, refused name.
// Refusals reset the connection: there is no protocol to explain them in. With
// network.tlsTerminate, TLS on 443 to a host it does not exclude is then terminated like a
// CONNECT's (terminated_session.cc), so clients that ignore the proxy variables are covered too.
#include "dns/answers.h"
#include "server/session.h"
#include "tls/client_hello.h"

namespace srt::proxy {
namespace {

constexpr uint16_t kTlsPort = 443;

class CaptureSession final : public Session {
 public:
  CaptureSession(ProxyServer& server, UniqueFd client, Endpoint destination)
      : Session(server, std::move(client), std::string()), destination_(destination) {}

  void Start() override {
    const IpAddress address = UnmapIpv4(destination_.address);
    rules_ = server_.rules();
    const std::vector<std::string> names = server_.answers().NamesFor(address);
    if (DnsAnswers::InPool(address)) {
      if (names.empty()) {
        return Refuse(FormatIpAddress(address),
                      "a synthetic address the DNS stub never handed out");
      }
      Result<Host> host = CanonicalizeHost(names.front());
      if (!host) return Refuse(names.front(), std::string(kMalformedHost));
      named_.push_back(std::move(*host));
    } else {
      // The names a real address was shown for, as far as the policy allows them on this port
      // now (it may have changed since the answer).
      for (const std::string& name : names) {
        Result<Host> host = CanonicalizeHost(name);
        if (host && rules_->matcher.Evaluate(*host, destination_.port).allowed) {
          named_.push_back(std::move(*host));
        }
      }
    }
    host_ = named_.empty() ? HostFromAddress(address) : named_.front();
    record_ = NewRecord(Protocol::kCapture, host_.text, destination_.port);
    const Decision decision = rules_->matcher.Evaluate(host_, destination_.port);
    record_.matched_entry = decision.matched_entry;
    if (!decision.allowed) {
      // A real address shown for names the policy refuses here: the refusal names the first of
      // them, which is what the client asked for.
      if (named_.empty() && !names.empty()) {
        Result<Host> name = CanonicalizeHost(names.front());
        if (name) {
          return Refuse(name->text, rules_->matcher.Evaluate(*name, destination_.port).reason);
        }
      }
      return Refuse(host_.text, decision.reason);
    }
    if (destination_.port != kTlsPort) return DialDestination();
    ArmTimeout(server_.options().handshake_timeout);
    if (!SetClientInterest(EPOLLIN)) return End();
  }

  void OnEvents(uint32_t) override {
    switch (ReadClient(kMaxTlsClientHelloBytes)) {
      case ReadStatus::kEof:
      case ReadStatus::kError:
        return End();
      case ReadStatus::kAgain:
        return;
      case ReadStatus::kData:
      case ReadStatus::kFull:
        break;
    }
    const auto* bytes = reinterpret_cast<const uint8_t*>(in_.data());
    tls::SniResult sni = tls::ExtractSni({bytes, in_.size()});
    switch (sni.status) {
      case tls::SniStatus::kNeedMore:
        if (in_.size() >= kMaxTlsClientHelloBytes) {
          return Refuse(host_.text, "TLS ClientHello larger than the limit");
        }
        return;
      case tls::SniStatus::kNotTls:
        return Refuse(host_.text, "not TLS on port 443");
      case tls::SniStatus::kMalformed:
        return Refuse(host_.text, "malformed TLS ClientHello: " + sni.error);
      case tls::SniStatus::kNoSni:
        if (!named_.empty()) return Refuse(host_.text, "TLS ClientHello without a server name");
        break;
      case tls::SniStatus::kFound:
        if (!SniMatches(sni.host)) {
          return Refuse(host_.text, "TLS server name '" + sni.host + "' does not match");
        }
        break;
    }
    if (!SetClientInterest(0)) return End();
    DialDestination();
  }

 protected:
  void LogInFlight() override {
    if (dial_ == 0) return;
    record_.end = "shutdown";
    Record(record_);
  }

 private:
  // For a destination that stands for names, also makes the name the SNI asks for the host
  // dialed and recorded.
  bool SniMatches(const std::string& sni) {
    Result<Host> asked = CanonicalizeHost(sni);
    if (!asked) return false;
    if (named_.empty()) {
      // An IP destination: the name the client asks the server for must itself be allowed.
      return rules_->matcher.Evaluate(*asked, destination_.port).allowed;
    }
    for (const Host& name : named_) {
      if (name == *asked) {
        host_ = name;
        record_.host = host_.text;
        record_.matched_entry = rules_->matcher.Evaluate(host_, destination_.port).matched_entry;
        return true;
      }
    }
    return false;
  }

  void Refuse(const std::string& host, std::string reason) {
    record_ = NewRecord(Protocol::kCapture, host, destination_.port);
    record_.reason = std::move(reason);
    Record(record_);
    Abort();
  }

  void DialDestination() {
    CancelTimeout();
    record_.allowed = true;
    // network.tlsTerminate: TLS on 443 to a host it covers is terminated like a CONNECT's (the
    // ClientHello already read goes to the terminated session). At the cap: a reset, there is
    // no protocol to say 503 in.
    if (destination_.port == kTlsPort && server_.Terminates(*rules_, host_, kTlsPort)) {
      tls_slot_ = server_.TakeTlsSlot(*rules_);
      if (!tls_slot_) return Refuse(host_.text, "too many TLS-terminated tunnels at once");
    }
    Dial({host_, destination_.port, rules_, /*tunnel=*/true},
         [this](DialOutcome outcome) { Dialed(std::move(outcome)); });
  }

  void Dialed(DialOutcome outcome) {
    NoteDial(record_, outcome);
    if (!outcome.ok()) {
      Record(record_);
      return Abort();
    }
    if (tls_slot_) {
      return HandOverToTermination(std::move(outcome), std::string(), std::move(record_), host_,
                                   destination_.port, rules_, std::move(tls_slot_));
    }
    StartTunnel(std::move(outcome.fd), std::move(in_), outcome.leftover, std::move(record_));
  }

  const Endpoint destination_;
  std::unique_ptr<TlsTunnelSlot> tls_slot_;  // 443 to a host whose TLS is terminated
  Host host_;
  // The names the destination address stands for that the policy allows on its port (first:
  // the one dialed unless the SNI picks another); empty for an address that stands for itself.
  std::vector<Host> named_;
  std::shared_ptr<const NetworkRules> rules_;
  ConnectionRecord record_;
};

}  // namespace

std::unique_ptr<Session> MakeCaptureSession(ProxyServer& server, UniqueFd client,
                                            Endpoint destination) {
  return std::make_unique<CaptureSession>(server, std::move(client), destination);
}

}  // namespace srt::proxy
