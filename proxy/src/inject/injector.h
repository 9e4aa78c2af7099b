// SPDX-License-Identifier: Apache-2.0
// inject/injector: credential injection, pure. Swaps each masked credential's sentinel for its
// real value in requests to the credential's inject hosts, and every real value back to its
// sentinel in responses, on streams of any length with bounded memory.
//
// An HTTP exchange uses all of these through inject::Exchange (exchange.h); the pieces:
// Usage (per exchange, on any thread; an Injector is immutable and shared):
//   std::shared_ptr<const Injector> injector = Injector::Build(secrets);   // once per sandbox
//   std::unique_ptr<Rewriter> up = injector->ForRequest(host, {.fixed_length = true});
//   up->Feed(bytes, out);  ...  up->Finish(out);      // out: what goes to the destination
//   std::unique_ptr<Rewriter> down = injector->ForResponse(host);
//   down->Feed(bytes, out); ... down->Finish(out);    // out: what goes to the sandbox
//   for (const Use& u : up->uses()) log(u.name, u.count);   // never the values
//
// A rewriter holds back at most (longest pattern - 1) bytes between Feed calls: a pattern that
// straddles two chunks is still found. Matching is leftmost-ending (Aho-Corasick), without
// overlaps: after a match, scanning restarts behind it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/host.h"
#include "network_policy/network_policy.h"

namespace srt::proxy::inject {

// How often one credential's pattern was met in a stream.
struct Use {
  std::string name;       // CredentialSecret::name
  uint64_t replaced = 0;  // swapped (request: sentinel -> real; response: real -> sentinel)
  uint64_t kept = 0;      // request only: a sentinel left as it is (host not in injectHosts,
                          // or lengths differ where the length is fixed)
};

class Automaton;

class Rewriter {
 public:
  Rewriter(std::shared_ptr<const Automaton> automaton, std::vector<bool> active);
  // Appends the rewritten form of `in` to `out`, holding back a possible pattern prefix.
  void Feed(std::string_view in, std::string& out);
  // Appends what is held back; the stream has ended. Feed may start a new stream afterwards.
  void Finish(std::string& out);
  // A whole value (a header's): Feed + Finish.
  [[nodiscard]] std::string Rewrite(std::string_view whole);
  // The credentials met so far (only those with a non-zero count).
  [[nodiscard]] std::vector<Use> uses() const;
  // Bytes held back now (at most the longest pattern's length - 1).
  [[nodiscard]] size_t held() const { return held_.size() - held_start_; }

 private:
  std::shared_ptr<const Automaton> automaton_;
  friend class Injector;
  std::vector<bool> active_;  // per pattern: swap (true) or keep (false)
  std::vector<std::string> names_;
  int32_t state_ = 0;
  std::string held_;
  size_t held_start_ = 0;
  std::vector<uint64_t> replaced_;
  std::vector<uint64_t> kept_;
};

inline constexpr size_t kMaxFramedHoldBytes = size_t{1} << 20;

// A length-preserving rewriter applied to the payload bytes of a framed stream only (the
// chunk-data of a chunked body), the framing passed through in place: a pattern split across
// chunks is still found, and chunk sizes stay right. Holds back the stream from the first
// payload byte whose rewritten form is not known yet. The rewriter must be fixed-length
// (ForRequest with fixed_length, ForResponse(true)).
class FramedRewriter {
 public:
  explicit FramedRewriter(std::unique_ptr<Rewriter> payload);
  // `in` with the payload spans `data` ([begin, end) offsets in `in`, in order); appends to
  // `out` what is ready.
  void Feed(std::string_view in, const std::vector<std::pair<size_t, size_t>>& data,
            std::string& out);
  // The stream has ended: appends the rest.
  void Finish(std::string& out);
  [[nodiscard]] const Rewriter& payload() const { return *payload_; }
  // Bytes held back now. Framing between held payload bytes counts too: a peer that sends a
  // pattern's prefix one byte per chunk makes this grow; the caller ends the stream past
  // kMaxFramedHoldBytes (passing the bytes on could hand over a secret).
  [[nodiscard]] size_t held() const { return pending_.size(); }

 private:
  void Emit(std::string& out);
  std::unique_ptr<Rewriter> payload_;
  std::string pending_;             // raw bytes not yet passed on
  std::vector<size_t> payload_at_;  // offsets in pending_ of payload bytes still unresolved
  size_t resolved_ = 0;             // how many of payload_at_ have their output written
};

struct RequestOptions {
  // The stream's length must not change (a body framed by Content-Length): sentinels whose
  // real value has another length are kept.
  bool fixed_length = false;
};

class Injector {
 public:
  // Secrets with an empty sentinel or real value are left out. Never fails.
  [[nodiscard]] static std::shared_ptr<const Injector> Build(
      const std::vector<CredentialSecret>& secrets);
  // sentinel -> real for the credentials whose inject hosts match `host` (canonical).
  [[nodiscard]] std::unique_ptr<Rewriter> ForRequest(const Host& host,
                                                     RequestOptions options = {}) const;
  // real -> sentinel for every credential (a destination that echoes a secret, or knows it
  // otherwise, never hands it to the sandbox). Lengths match, so framing is unchanged;
  // a real value whose sentinel is longer is replaced only when `fixed_length` is false.
  [[nodiscard]] std::unique_ptr<Rewriter> ForResponse(bool fixed_length = true) const;
  [[nodiscard]] bool empty() const { return secrets_.empty(); }
  // The longest sentinel or real value: what a rewriter may hold back, plus one.
  [[nodiscard]] size_t max_pattern_length() const;

 private:
  Injector() = default;
  [[nodiscard]] std::vector<std::string> Names() const;
  std::vector<CredentialSecret> secrets_;
  std::vector<std::vector<DomainPattern>> hosts_;
  std::shared_ptr<const Automaton> requests_;   // patterns: sentinels
  std::shared_ptr<const Automaton> responses_;  // patterns: real values
};

// True if `host` (canonical) is one of `patterns` (ports ignored).
[[nodiscard]] bool HostMatches(const Host& host, const std::vector<DomainPattern>& patterns);

}  // namespace srt::proxy::inject
