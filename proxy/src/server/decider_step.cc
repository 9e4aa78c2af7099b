// SPDX-License-Identifier: Apache-2.0
#include "server/decider_step.h"

#include <algorithm>

#include "http/base64.h"
#include "wire/ascii.h"

namespace srt::proxy {
namespace {

// A content piece one Feed may decode past `max` (what a buffer holds beyond it).
constexpr size_t kChunkReadAhead = size_t{64} * 1024;

bool LeftOutOfRequest(std::string_view name) {
  return ascii::EqualsIgnoreCase(name, "Proxy-Authorization") ||
         ascii::EqualsIgnoreCase(name, "Proxy-Connection");
}

}  // namespace

decider::Request DeciderRequest(const http::Request& request, const Host& host, uint16_t port,
                                std::optional<std::string> sni) {
  decider::Request r;
  r.method = request.method;
  r.host = host.text;
  r.port = port;
  r.sni = std::move(sni);
  const size_t q = request.path.find('?');
  r.path = request.path.substr(0, q);
  if (q != std::string::npos) r.query = request.path.substr(q + 1);
  for (const http::Header& h : request.headers) {
    if (ascii::EqualsIgnoreCase(h.name, "Host")) {
      r.host_header = h.value;
      continue;
    }
    if (LeftOutOfRequest(h.name)) continue;
    r.headers.emplace_back(ascii::ToLower(h.name), h.value);
  }
  return r;
}

DeciderLink::Outcome AfterBodyShown(DeciderLink::Outcome outcome) {
  if (outcome.kind == DeciderLink::Outcome::Kind::kVerdict &&
      outcome.verdict.action == decider::Action::kNeedBody) {
    return {DeciderLink::Outcome::Kind::kUnavailable, {}, "request decider: a second need_body"};
  }
  return outcome;
}

std::optional<DeciderRefusal> RefusalFor(const DeciderLink::Outcome& outcome) {
  using Kind = DeciderLink::Outcome::Kind;
  if (outcome.kind == Kind::kUnavailable) {
    return DeciderRefusal{503, "decider_unavailable", outcome.reason};
  }
  if (outcome.kind == Kind::kBadRequest) return DeciderRefusal{400, "bad_request", outcome.reason};
  const decider::Verdict& v = outcome.verdict;
  if (v.action != decider::Action::kDeny) return std::nullopt;
  return DeciderRefusal{v.status, "decider",
                        v.reason.empty() ? "request denied by the decider" : v.reason};
}

bool EditsDrop(const decider::Verdict& edits, std::string_view name) {
  const std::string folded = ascii::FoldHeaderName(name);
  for (const std::string& r : edits.remove_headers) {
    if (ascii::FoldHeaderName(r) == folded) return true;
  }
  for (const auto& [set, values] : edits.set_headers) {
    if (ascii::FoldHeaderName(set) == folded) return true;
  }
  if (!edits.cred.empty()) {
    for (std::string_view c : decider::kCredentialHeaders) {
      if (c == folded) return true;
    }
  }
  return false;
}

std::string EditedFields(const decider::Verdict& edits, const Host& host) {
  std::string out;
  for (const auto& [name, values] : edits.set_headers) {
    for (const std::string& v : values) out += name + ": " + v + "\r\n";
  }
  if (!edits.cred.empty()) {
    if (edits.cred == "github" && host.text == "github.com") {
      out += "authorization: Basic " + http::EncodeBase64("x-access-token:" + edits.credential) +
             "\r\n";
    } else {
      out += "authorization: Bearer " + edits.credential + "\r\n";
    }
  }
  return out;
}

DeciderBody::DeciderBody(const http::Framing& framing, uint32_t max)
    : framing_(framing), max_(max) {
  if (framing_.kind == http::Framing::Kind::kContentLength) length_left_ = framing_.length;
  ended_ = framing_.kind == http::Framing::Kind::kNone || length_left_ == 0;
  if (framing_.kind == http::Framing::Kind::kChunked) ended_ = false;
}

ParseStatus DeciderBody::Feed(std::string& in) {
  if (framing_.kind == http::Framing::Kind::kChunked) {
    // More than max (or the end) is needed to know whether the decider sees it all.
    while (!ended_ && held_.size() <= max_ && !in.empty()) {
      http::ChunkedDecoder::Step step = decoder_.Feed(in, &held_);
      if (step.status == ParseStatus::kError) {
        error_ = decoder_.error();
        return ParseStatus::kError;
      }
      in.erase(0, step.consumed);
      ended_ = step.status == ParseStatus::kDone;
      if (step.consumed == 0) break;
    }
    return ended_ || held_.size() > max_ ? ParseStatus::kDone : ParseStatus::kNeedMore;
  }
  const uint64_t shown_length = std::min<uint64_t>(framing_.length, max_);
  const size_t need = static_cast<size_t>(shown_length) - held_.size();
  const size_t take = std::min(need, in.size());
  held_.append(in, 0, take);
  in.erase(0, take);
  length_left_ -= take;
  ended_ = length_left_ == 0;
  return held_.size() == shown_length ? ParseStatus::kDone : ParseStatus::kNeedMore;
}

size_t DeciderBody::want() const {
  if (framing_.kind == http::Framing::Kind::kChunked) return kChunkReadAhead;
  return static_cast<size_t>(std::min<uint64_t>(framing_.length, max_)) - held_.size();
}

std::string_view DeciderBody::shown() const {
  return std::string_view(held_).substr(0, std::min<size_t>(held_.size(), max_));
}

bool DeciderBody::cut() const {
  if (framing_.kind == http::Framing::Kind::kChunked) return held_.size() > max_;
  return framing_.length > max_;
}

std::string DeciderBody::ForwardPrefix() const {
  if (framing_.kind != http::Framing::Kind::kChunked) return held_;
  std::string out;
  http::AppendChunk(out, held_);
  if (ended_) out += "0\r\n\r\n";
  return out;
}

}  // namespace srt::proxy
