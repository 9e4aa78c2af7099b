// SPDX-License-Identifier: Apache-2.0
// fake_http_server.h: a tiny scripted HTTP/1.1 server on 127.0.0.1:0 for the api client tests.
//
// One thread accepts connections one at a time, reads one request (head + Content-Length body),
// records it, and answers with the next scripted response (Connection: close). A response can be
// sent in timed chunks without Content-Length (SSE) and can be held open until Release() or
// destruction, so tests can check streaming and cancellation.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "api/headers.h"
#include "base/unique_fd.h"

namespace srt::poller::testing {

struct RecordedRequest {
  std::string method;
  std::string target;  // path and query as sent
  std::string path;
  std::string query;  // after '?', empty if none
  Headers headers;
  std::string body;
  std::chrono::steady_clock::time_point at;
};

struct ScriptedResponse {
  int status = 200;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;                 // sent with Content-Length unless `chunks` is set
  std::vector<std::string> chunks;  // sent without Content-Length, in order, one write each
  std::chrono::milliseconds chunk_delay{0};
  bool hold_open = false;  // after the chunks, keep the connection until Release()/shutdown
};

class FakeHttpServer {
 public:
  FakeHttpServer();
  ~FakeHttpServer();
  FakeHttpServer(const FakeHttpServer&) = delete;
  FakeHttpServer& operator=(const FakeHttpServer&) = delete;

  std::string base_url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  uint16_t port() const { return port_; }
  // Responses are served in order; with none left the server answers 599.
  void Enqueue(ScriptedResponse r);
  void EnqueueJson(int status, std::string body,
                   std::vector<std::pair<std::string, std::string>> headers = {});
  std::vector<RecordedRequest> requests() const;
  size_t request_count() const;
  void Release();

 private:
  void Loop();
  void Serve(UniqueFd conn);

  UniqueFd listen_;
  uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<bool> release_{false};
  mutable std::mutex mu_;
  std::deque<ScriptedResponse> script_;
  std::vector<RecordedRequest> requests_;
  std::thread thread_;
};

}  // namespace srt::poller::testing
