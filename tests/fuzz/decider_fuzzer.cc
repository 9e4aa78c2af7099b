// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: `srt proxy`'s decider protocol (proxy/src/decider/protocol.h), what a decider
// sends the proxy. The input is a byte stream cut into frames by FrameReader; each frame is read
// as a hello and as a verdict. Properties: no crash; a frame is never longer than the limit; an
// accepted verdict keeps the protocol's invariants (id 1..2^53-1, deny status 400..599 with a
// reason of at most 1 KiB, need_body max 1..32 MiB, header names lower-case tokens that are never
// framing fields, cred and credential together); every accepted hello entry is an egress entry;
// an accepted verdict still parses once re-framed (the reader is not confused by its own output).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "decider/protocol.h"

namespace {

void Require(bool condition) {
  if (!condition) std::abort();
}

using srt::proxy::decider::Action;

void CheckVerdict(const srt::proxy::decider::Verdict& v) {
  Require(v.id >= 1 && v.id <= srt::proxy::decider::kMaxId);
  switch (v.action) {
    case Action::kDeny:
      Require(v.status >= 400 && v.status <= 599);
      Require(v.reason.size() <= srt::proxy::decider::kMaxReasonBytes);
      for (char c : v.reason) Require(static_cast<unsigned char>(c) >= 0x20 || c == '\t');
      break;
    case Action::kNeedBody:
      Require(v.max >= 1 && v.max <= srt::proxy::decider::kMaxBodyBytes);
      break;
    case Action::kAllow:
      Require(v.cred.empty() == v.credential.empty());
      Require(v.credential.size() <= srt::proxy::decider::kMaxCredentialBytes);
      for (const auto& [name, values] : v.set_headers) {
        Require(!name.empty());
        for (char c : name) Require(!(c >= 'A' && c <= 'Z') && c != ':' && c != ' ');
        Require(name != "host" && name != "content-length" && name != "transfer-encoding");
        for (const std::string& value : values) {
          for (char c : value) Require(c != '\r' && c != '\n' && c != '\0');
        }
      }
      for (const std::string& name : v.remove_headers) {
        Require(name != "host" && name != "content-length" && name != "transfer-encoding");
      }
      break;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  // Small limit, so that the oversized path is reached too.
  srt::proxy::decider::FrameReader reader(4096);
  // Fed in two pieces: where a frame is cut must not matter.
  const size_t cut = size == 0 ? 0 : data[0] % (size + 1);
  reader.Append(input.substr(0, cut));
  std::string frame;
  std::vector<std::string> frames;
  for (int round = 0; round < 2; ++round) {
    for (;;) {
      const auto status = reader.Next(frame);
      if (status != srt::proxy::decider::FrameReader::Status::kFrame) break;
      Require(frame.size() <= 4096);
      frames.push_back(frame);
    }
    if (round == 0) reader.Append(input.substr(cut));
  }
  // The whole input as one frame, too (most inputs are JSON texts from the corpus).
  frames.emplace_back(input);
  for (const std::string& f : frames) {
    if (auto hello = srt::proxy::decider::ParseDeciderHello(f)) {
      for (const std::string& e : hello->allowed_domains) {
        Require(srt::proxy::decider::IsEgressEntry(e));
      }
      for (const std::string& e : hello->denied_domains) {
        Require(srt::proxy::decider::IsEgressEntry(e));
      }
    }
    if (auto verdict = srt::proxy::decider::ParseVerdict(f)) {
      CheckVerdict(*verdict);
      srt::proxy::decider::FrameReader again;
      again.Append(srt::proxy::decider::EncodeFrame(f));
      std::string back;
      Require(again.Next(back) == srt::proxy::decider::FrameReader::Status::kFrame && back == f);
    }
  }
  return 0;
}
