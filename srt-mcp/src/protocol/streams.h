// SPDX-License-Identifier: Apache-2.0
// srt-mcp/protocol/streams: one MCP session's SSE streams (Streamable HTTP, MCP 2025-06-18 and
// 2025-11-25 "Resumability and Redelivery"): which stream each message of the server goes to,
// the requests in flight, and a bounded replay buffer per stream for Last-Event-ID. Pure: the
// daemon owns the connections and asks this book where to write.
//
// Streams: number 0 is the standalone stream (HTTP GET), which always exists and buffers what
// arrives while no GET is connected; each POSTed request opens stream N >= 1 that ends with
// the request's response. Event ids are "N-SEQ", unique in the session and naming their stream.
//
// Where a message from the server goes (MCP: "each of its JSON-RPC messages on only one of the
// connected streams"):
//   1. a response: the stream of the request it answers (it ends that stream); a response to no
//      request in flight is dropped (a cancelled request's late answer);
//   2. a notification with a progress token of a request in flight: that request's stream;
//   3. anything else: the standalone stream when a GET is attached to it, else the newest open
//      request stream, else the standalone stream's buffer (sent when a GET attaches).
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/jsonrpc.h"
#include "srt/result.h"

namespace srt::mcp {

struct SseRecord {
  uint64_t seq = 0;
  std::string id;    // "N-SEQ"
  std::string data;  // the JSON-RPC message
};

class SessionStreams {
 public:
  // The bytes of messages a session keeps for replay and for a GET not yet attached, over all its
  // streams: past it the oldest go (a server or client that makes many large messages cannot
  // make the daemon hold them all; a hostile review held 540 MB per session).
  static constexpr size_t kDefaultMaxRetainedBytes = size_t{4} << 20;

  explicit SessionStreams(size_t replay_events,
                          size_t max_retained_bytes = kDefaultMaxRetainedBytes)
      : replay_events_(replay_events), max_retained_bytes_(max_retained_bytes) {}
  // What the session holds now (replay buffers and pending standalone records).
  size_t retained_bytes() const { return retained_bytes_; }

  // A POSTed request `id_json` opens a stream. kInvalidArgument when that id is in flight.
  [[nodiscard]] Result<uint64_t> OpenRequest(const std::string& id_json,
                                             const std::string& progress_token);
  // Whether a GET is attached to the standalone stream (the daemon says so).
  void SetStandaloneAttached(bool attached) { standalone_attached_ = attached; }
  bool standalone_attached() const { return standalone_attached_; }

  struct Delivery {
    uint64_t stream = 0;
    SseRecord record;
    bool ends_stream = false;  // the response of the stream's request
  };
  // Routes one message of the server (see the file comment) and records it for replay.
  [[nodiscard]] std::optional<Delivery> Route(const Message& message, std::string data);

  // The standalone stream's records not yet sent to a GET (and forgets them as pending).
  [[nodiscard]] std::vector<SseRecord> TakeStandalonePending();

  // For GET with Last-Event-ID: the stream `last_event_id` names and its records after it.
  // kNotFound when no stream of this session has that id's form or number.
  struct Resume {
    uint64_t stream = 0;
    std::vector<SseRecord> records;
    bool complete = false;  // the stream's response was sent: replay, then end
  };
  [[nodiscard]] Result<Resume> ResumeAfter(std::string_view last_event_id) const;

  // The request stream `stream` was abandoned before its response (the client went away): the
  // request leaves the in-flight set; returns its id (for notifications/cancelled), or "" when
  // the stream is unknown or already complete.
  std::string Abandon(uint64_t stream);
  // Forgets a complete request stream once no connection is attached (replay ends with it).
  void Forget(uint64_t stream);
  // The ids of the requests in flight, with their streams (a crashed server answers them all).
  [[nodiscard]] std::vector<std::pair<uint64_t, std::string>> InFlight() const;
  size_t inflight() const { return by_id_.size(); }
  size_t stream_count() const { return streams_.size(); }

 private:
  struct Stream {
    std::string request_id;  // "" for the standalone stream
    std::string progress_token;
    uint64_t next_seq = 1;
    std::deque<SseRecord> replay;
    bool complete = false;
  };
  SseRecord Append(uint64_t number, Stream& s, std::string data);

  // Drops the oldest of `records` until the session is within its byte budget.
  void Trim(std::deque<SseRecord>& records);

  size_t replay_events_;
  size_t max_retained_bytes_;
  size_t retained_bytes_ = 0;
  uint64_t next_stream_ = 1;
  bool standalone_attached_ = false;
  std::map<uint64_t, Stream> streams_ = {{0, Stream{}}};
  std::map<std::string, uint64_t> by_id_;  // request id -> stream, requests in flight
  std::deque<SseRecord> standalone_pending_;
};

}  // namespace srt::mcp
