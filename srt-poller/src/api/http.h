// SPDX-License-Identifier: Apache-2.0
// api/http.h: blocking HTTP(S) client on libcurl, with bounded bodies and prompt cancellation.
//
// Usage: build one HttpClient per worker and call Send() for ordinary requests or Stream() for
// server-sent events. Every call uses its own curl easy handle, so one client may be used from
// many threads at once. Connections are kept: a call borrows an idle curl multi handle (and
// with it the connections that handle keeps alive) from the client's pool and gives it back,
// so consecutive polls, heartbeats and posts skip the TCP and TLS handshakes. A transfer that
// ends early (cancelled, stopped, failed) closes its connection. Copies share one pool.
// curl_global_init runs once per process, on the first HttpClient.
//
// Failure modes (the Error's sys_errno tells them apart):
//   - transport failures (DNS, connect, TLS, reset, timeout): Errc::kSystem, sys_errno ETIMEDOUT
//     for timeouts, else ECONNABORTED; the message names the method and URL and curl's reason.
//   - cancellation through Request::cancel: Errc::kSystem with sys_errno ECANCELED (Send only;
//     Stream reports it as StreamEnd::kCancelled).
//   - a response body over Request::max_body: Errc::kProtocol, sys_errno EFBIG.
//   - a header containing CR, LF or NUL: Errc::kInvalidArgument (the value is never quoted).
// An HTTP error status is not an Error here: it is a Response, for the caller to judge.
// Nothing is logged; in particular the Authorization header never leaves the request.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "api/headers.h"
#include "srt/result.h"

namespace srt::poller {

using Millis = std::chrono::milliseconds;

// A one-way "stop now" flag shared between a caller and the thread doing the I/O. In-flight
// transfers notice within ~50 ms; WaitFor() sleeps are woken at once.
class CancelToken {
 public:
  void Cancel();
  bool cancelled() const { return cancelled_.load(std::memory_order_acquire); }
  // Sleeps for `d` or until cancelled; returns false if cancelled (before or during the sleep).
  bool WaitFor(Millis d) const;

 private:
  std::atomic<bool> cancelled_{false};
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
};

inline constexpr size_t kDefaultMaxBody = size_t{64} << 20;

struct Request {
  std::string method = "GET";
  std::string url;
  Headers headers;
  std::string body;
  Millis timeout{30'000};               // the whole transfer; 0 = no limit (streams)
  Millis idle_timeout{0};               // abort when no byte arrives for this long; 0 = no limit
  size_t max_body = kDefaultMaxBody;    // Send: larger bodies fail; Stream: cap on an error body
  const CancelToken* cancel = nullptr;  // not owned; must outlive the call
};

struct Response {
  int status = 0;
  Headers headers;
  std::string body;
};

struct HttpOptions {
  std::string ca_file;  // PEM CA bundle for HTTPS; empty = the system's
  Millis connect_timeout{10'000};
  std::string user_agent = "srt-poller";
  bool allow_plain_http = true;   // http:// (the tests' loopback fake); https:// is always allowed
  bool reuse_connections = true;  // false: a new connection per call (the bench's baseline)
};

enum class StreamEnd {
  kEnded,      // the server closed the stream (or sent a non-2xx response)
  kStopped,    // on_head or on_bytes returned false
  kCancelled,  // Request::cancel fired
};

struct StreamResult {
  Response head;  // status and headers; body holds the (capped) body of a non-2xx response
  StreamEnd end = StreamEnd::kEnded;
};

// Receives a 2xx response's body as it arrives; return false to stop the transfer.
using ByteSink = std::function<bool(std::string_view)>;
// Sees the final status and headers before any body byte; return false to stop.
using HeadSink = std::function<bool(const Response&)>;

class HttpClient {
 public:
  explicit HttpClient(HttpOptions options = {});

  // Performs `req` and returns the whole response. Redirects are not followed.
  [[nodiscard]] srt::Result<Response> Send(const Request& req) const;

  // Performs `req`, handing a 2xx body to `on_bytes` as it arrives (non-2xx bodies are collected
  // into StreamResult::head.body instead). Returns when the server ends the response, a sink
  // stops it, or `req.cancel` fires (within ~50 ms, even while blocked on a silent server).
  [[nodiscard]] srt::Result<StreamResult> Stream(const Request& req, const ByteSink& on_bytes,
                                                 const HeadSink& on_head = nullptr) const;

  const HttpOptions& options() const { return options_; }

  class ConnectionPool;  // idle curl multi handles, each with its kept connection

 private:
  HttpOptions options_;
  std::shared_ptr<ConnectionPool> pool_;
};

}  // namespace srt::poller
