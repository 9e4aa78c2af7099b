// SPDX-License-Identifier: Apache-2.0
// srt-mcp/protocol/streams.cc: a session's streams and their replay buffers.
#include "protocol/streams.h"

#include <charconv>

namespace srt::mcp {

Result<uint64_t> SessionStreams::OpenRequest(const std::string& id_json,
                                             const std::string& progress_token) {
  if (by_id_.contains(id_json)) {
    return MakeError(Errc::kInvalidArgument, "request id " + id_json + " is already in flight");
  }
  const uint64_t number = next_stream_++;
  streams_[number] = Stream{id_json, progress_token, 1, {}, false};
  by_id_[id_json] = number;
  return number;
}

SseRecord SessionStreams::Append(uint64_t number, Stream& s, std::string data) {
  SseRecord r{s.next_seq, std::to_string(number) + "-" + std::to_string(s.next_seq),
              std::move(data)};
  ++s.next_seq;
  if (replay_events_ > 0) {
    s.replay.push_back(r);
    retained_bytes_ += r.data.size();
    while (s.replay.size() > replay_events_) {
      retained_bytes_ -= s.replay.front().data.size();
      s.replay.pop_front();
    }
    Trim(s.replay);
  }
  return r;
}

void SessionStreams::Trim(std::deque<SseRecord>& records) {
  while (retained_bytes_ > max_retained_bytes_ && !records.empty()) {
    retained_bytes_ -= records.front().data.size();
    records.pop_front();
  }
}

std::optional<SessionStreams::Delivery> SessionStreams::Route(const Message& m, std::string data) {
  if (m.kind == MessageKind::kResponse) {
    auto it = by_id_.find(m.id);
    if (it == by_id_.end()) return std::nullopt;
    const uint64_t number = it->second;
    by_id_.erase(it);
    Stream& s = streams_[number];
    s.complete = true;
    return Delivery{number, Append(number, s, std::move(data)), true};
  }
  if (m.kind == MessageKind::kNotification && !m.progress_token.empty()) {
    for (auto& [number, s] : streams_) {
      if (number != 0 && !s.complete && s.progress_token == m.progress_token) {
        return Delivery{number, Append(number, s, std::move(data)), false};
      }
    }
  }
  if (!standalone_attached_) {
    for (auto it = streams_.rbegin(); it != streams_.rend(); ++it) {
      if (it->first != 0 && !it->second.complete) {
        return Delivery{it->first, Append(it->first, it->second, std::move(data)), false};
      }
    }
  }
  SseRecord r = Append(0, streams_[0], std::move(data));
  if (!standalone_attached_) {
    standalone_pending_.push_back(r);
    retained_bytes_ += r.data.size();
    // Bounded like the replay buffer: the oldest are lost (a GET with Last-Event-ID gets what
    // is left).
    while (standalone_pending_.size() > std::max<size_t>(replay_events_, 1)) {
      retained_bytes_ -= standalone_pending_.front().data.size();
      standalone_pending_.pop_front();
    }
    Trim(standalone_pending_);
  }
  return Delivery{0, std::move(r), false};
}

std::vector<SseRecord> SessionStreams::TakeStandalonePending() {
  std::vector<SseRecord> out(standalone_pending_.begin(), standalone_pending_.end());
  for (const SseRecord& r : standalone_pending_) retained_bytes_ -= r.data.size();
  standalone_pending_.clear();
  return out;
}

Result<SessionStreams::Resume> SessionStreams::ResumeAfter(std::string_view last_event_id) const {
  auto bad = [&] {
    return MakeError(Errc::kNotFound, "no stream of this session has event id '" +
                                          std::string(last_event_id.substr(0, 64)) + "'");
  };
  size_t dash = last_event_id.find('-');
  if (dash == std::string_view::npos) return bad();
  uint64_t number = 0;
  uint64_t seq = 0;
  std::string_view a = last_event_id.substr(0, dash);
  std::string_view b = last_event_id.substr(dash + 1);
  auto r1 = std::from_chars(a.data(), a.data() + a.size(), number);
  auto r2 = std::from_chars(b.data(), b.data() + b.size(), seq);
  if (a.empty() || b.empty() || r1.ec != std::errc() || r1.ptr != a.data() + a.size() ||
      r2.ec != std::errc() || r2.ptr != b.data() + b.size()) {
    return bad();
  }
  auto it = streams_.find(number);
  if (it == streams_.end() || seq >= it->second.next_seq) return bad();
  Resume out;
  out.stream = number;
  out.complete = it->second.complete;
  for (const SseRecord& r : it->second.replay) {
    if (r.seq > seq) out.records.push_back(r);
  }
  return out;
}

std::string SessionStreams::Abandon(uint64_t stream) {
  auto it = streams_.find(stream);
  if (stream == 0 || it == streams_.end() || it->second.complete) return "";
  std::string id = it->second.request_id;
  by_id_.erase(id);
  for (const SseRecord& r : it->second.replay) retained_bytes_ -= r.data.size();
  streams_.erase(it);
  return id;
}

void SessionStreams::Forget(uint64_t stream) {
  auto it = streams_.find(stream);
  if (stream != 0 && it != streams_.end() && it->second.complete) {
    for (const SseRecord& r : it->second.replay) retained_bytes_ -= r.data.size();
    streams_.erase(it);
  }
}

std::vector<std::pair<uint64_t, std::string>> SessionStreams::InFlight() const {
  std::vector<std::pair<uint64_t, std::string>> out;
  for (const auto& [id, number] : by_id_) out.emplace_back(number, id);
  return out;
}

}  // namespace srt::mcp
