// SPDX-License-Identifier: Apache-2.0
// api/http.cc: libcurl (easy handle driven by a private multi handle) behind HttpClient.
//
// The multi interface is used even for one transfer because it lets us wait in slices of
// kPollSlice and look at the cancel flag in between; the progress callback alone can stay silent
// for about a second on an idle connection, too slow for the runner's ~100 ms abort budget.
#include "api/http.h"

#include <curl/curl.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <vector>

namespace srt::poller {
namespace {

constexpr int kPollSliceMs = 50;

struct CurlEasyDeleter {
  void operator()(CURL* c) const { curl_easy_cleanup(c); }
};
struct CurlMultiDeleter {
  void operator()(CURLM* m) const { curl_multi_cleanup(m); }
};
struct SlistDeleter {
  void operator()(curl_slist* l) const { curl_slist_free_all(l); }
};
using CurlEasy = std::unique_ptr<CURL, CurlEasyDeleter>;
using CurlMulti = std::unique_ptr<CURLM, CurlMultiDeleter>;
using Slist = std::unique_ptr<curl_slist, SlistDeleter>;

// Idle multi handles kept per client, and connections kept per handle. A handle runs one
// transfer at a time, so one kept connection is all it can reuse; the cap bounds the idle
// sockets (and their fds) a worker holds to the concurrency it last had.
constexpr size_t kMaxIdleHandles = 32;
constexpr long kConnectionsPerHandle = 1;

void GlobalInitOnce() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

bool HasBadHeaderChar(std::string_view s) {
  return s.find_first_of(std::string_view("\r\n\0", 3)) != std::string_view::npos;
}

// libcurl opens sockets without SOCK_CLOEXEC on older versions; ours are CLOEXEC from birth
// (house style §2.4) so a sandbox spawned meanwhile never inherits a connection.
curl_socket_t OpenSocketCloexec(void* /*clientp*/, curlsocktype /*purpose*/,
                                struct curl_sockaddr* addr) {
  return ::socket(addr->family, addr->socktype | SOCK_CLOEXEC, addr->protocol);
}

struct Transfer {
  const Request* req = nullptr;
  const ByteSink* on_bytes = nullptr;  // null: collect the body (Send)
  const HeadSink* on_head = nullptr;
  Response resp;
  bool head_done = false;
  bool stopped = false;
  bool too_large = false;
  std::chrono::steady_clock::time_point last_activity = std::chrono::steady_clock::now();
};

size_t OnBody(char* data, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const size_t len = size * n;
  t->last_activity = std::chrono::steady_clock::now();
  const bool ok_status = t->resp.status >= 200 && t->resp.status < 300;
  if (t->on_bytes != nullptr && ok_status) {
    if (!(*t->on_bytes)(std::string_view(data, len))) {
      t->stopped = true;
      return 0;  // makes curl fail the transfer with CURLE_WRITE_ERROR
    }
    return len;
  }
  if (t->resp.body.size() + len > t->req->max_body) {
    if (t->on_bytes != nullptr) {
      // An error body while streaming: keep the head, drop the excess.
      t->resp.body.append(data, t->req->max_body - t->resp.body.size());
      return len;
    }
    t->too_large = true;
    return 0;
  }
  t->resp.body.append(data, len);
  return len;
}

// Fills in the status once the final head has arrived and hands it to on_head.
bool MaybeHead(CURL* easy, Transfer& t) {
  if (t.head_done) return true;
  long code = 0;
  curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &code);
  if (code < 200) return true;  // nothing final yet
  t.resp.status = static_cast<int>(code);
  t.head_done = true;
  if (t.on_head != nullptr && *t.on_head && !(*t.on_head)(t.resp)) {
    t.stopped = true;
    return false;
  }
  return true;
}

struct Easy {
  CURL* easy;
  Transfer* t;
};

size_t OnHeader(char* data, size_t size, size_t n, void* user) {
  auto* e = static_cast<Easy*>(user);
  Transfer* t = e->t;
  const size_t len = size * n;
  std::string_view line(data, len);
  t->last_activity = std::chrono::steady_clock::now();
  if (line.starts_with("HTTP/")) {
    // A status line; after a 1xx interim response a second head follows: start over.
    t->resp.headers = Headers();
    return len;
  }
  if (line == "\r\n" || line == "\n") {
    // The end of a head: if it is the final one, tell on_head now, before any body byte, so a
    // stream's consumer learns it is connected even while the server stays silent.
    return MaybeHead(e->easy, *t) ? len : 0;
  }
  if (size_t colon = line.find(':'); colon != std::string_view::npos) {
    t->resp.headers.Add(line.substr(0, colon), line.substr(colon + 1));
  }
  return len;
}

size_t OnBodyWithHead(char* data, size_t size, size_t n, void* user) {
  auto* e = static_cast<Easy*>(user);
  if (!MaybeHead(e->easy, *e->t)) return 0;
  return OnBody(data, size, n, e->t);
}

enum class Outcome { kDone, kCancelled, kIdleTimeout };

struct RunResult {
  Outcome outcome = Outcome::kDone;
  CURLcode code = CURLE_OK;
};

}  // namespace

// A multi handle is used by one thread at a time (curl allows handing it between threads, never
// sharing it), so a call takes one out of the pool and puts it back when its transfer is over.
// A pool that keeps no handle (capacity 0) gives every call a new connection.
class HttpClient::ConnectionPool {
 public:
  explicit ConnectionPool(size_t capacity) : capacity_(capacity) {}

  CurlMulti Take() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!idle_.empty()) {
        CurlMulti m = std::move(idle_.back());
        idle_.pop_back();
        return m;
      }
    }
    CurlMulti m(curl_multi_init());
    if (m) curl_multi_setopt(m.get(), CURLMOPT_MAXCONNECTS, kConnectionsPerHandle);
    return m;
  }
  void Give(CurlMulti m) {
    std::lock_guard<std::mutex> lock(mu_);
    // Last in, first out: the handle most recently used has the connection most likely alive.
    if (idle_.size() < capacity_) idle_.push_back(std::move(m));
  }

 private:
  const size_t capacity_;
  std::mutex mu_;
  std::vector<CurlMulti> idle_;
};

namespace {

// Callers are HttpClient members, whose constructor already ran GlobalInitOnce().
Result<RunResult> Run(const HttpOptions& opts, HttpClient::ConnectionPool& pool, const Request& req,
                      Transfer& t) {
  const std::string what = req.method + " '" + req.url + "'";
  for (const auto& [name, value] : req.headers.fields()) {
    if (HasBadHeaderChar(name) || HasBadHeaderChar(value) || name.empty()) {
      return MakeError(
          Errc::kInvalidArgument,
          what + ": header '" + (HasBadHeaderChar(name) ? "?" : name) + "' contains CR, LF or NUL");
    }
  }
  CurlEasy easy(curl_easy_init());
  CurlMulti multi = pool.Take();
  if (!easy || !multi) return MakeError(Errc::kSystem, what + ": curl init failed");
  // On every way out: every path removes the easy handle from the multi first; the easy
  // handle is cleaned up before the multi goes back, so no other thread's transfer ever runs
  // on a multi that a handle of ours is still tied to.
  struct GiveBack {
    HttpClient::ConnectionPool& pool;
    CurlEasy& easy;
    CurlMulti& multi;
    ~GiveBack() {
      easy.reset();
      pool.Give(std::move(multi));
    }
  } give_back{pool, easy, multi};
  CURL* e = easy.get();
  t.req = &req;
  Easy ctx{e, &t};
  char errbuf[CURL_ERROR_SIZE] = {0};

  Slist headers;
  auto add_header = [&](const std::string& line) {
    curl_slist* l = curl_slist_append(headers.get(), line.c_str());
    if (l != nullptr) {
      (void)headers.release();
      headers.reset(l);
    }
  };
  for (const auto& [name, value] : req.headers.fields()) add_header(name + ": " + value);
  add_header("Expect:");  // no 100-continue round trip
  const bool has_body = !req.body.empty() || req.method == "POST" || req.method == "PUT";
  if (has_body && !req.headers.Has("Content-Type")) add_header("Content-Type:");

  curl_easy_setopt(e, CURLOPT_URL, req.url.c_str());
  curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, opts.allow_plain_http ? "http,https" : "https");
  curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(e, CURLOPT_ERRORBUFFER, errbuf);
  curl_easy_setopt(e, CURLOPT_HTTPHEADER, headers.get());
  curl_easy_setopt(e, CURLOPT_OPENSOCKETFUNCTION, OpenSocketCloexec);
  if (!req.headers.Has("User-Agent"))
    curl_easy_setopt(e, CURLOPT_USERAGENT, opts.user_agent.c_str());
  if (!opts.ca_file.empty()) curl_easy_setopt(e, CURLOPT_CAINFO, opts.ca_file.c_str());
  curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(opts.connect_timeout.count()));
  curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, static_cast<long>(req.timeout.count()));
  if (req.method == "GET") {
    curl_easy_setopt(e, CURLOPT_HTTPGET, 1L);
  } else if (req.method == "HEAD") {
    curl_easy_setopt(e, CURLOPT_NOBODY, 1L);
  } else {
    if (req.method != "POST") curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, req.method.c_str());
    curl_easy_setopt(e, CURLOPT_POSTFIELDS, req.body.data());
    curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(req.body.size()));
  }
  curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, OnHeader);
  curl_easy_setopt(e, CURLOPT_HEADERDATA, &ctx);
  curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, OnBodyWithHead);
  curl_easy_setopt(e, CURLOPT_WRITEDATA, &ctx);

  RunResult rr;
  if (req.cancel != nullptr && req.cancel->cancelled()) {
    rr.outcome = Outcome::kCancelled;
    return rr;
  }
  if (curl_multi_add_handle(multi.get(), e) != CURLM_OK) {
    return MakeError(Errc::kSystem, what + ": curl_multi_add_handle failed");
  }
  t.last_activity = std::chrono::steady_clock::now();
  bool done = false;
  while (!done) {
    int running = 0;
    CURLMcode mc = curl_multi_perform(multi.get(), &running);
    if (mc != CURLM_OK) {
      curl_multi_remove_handle(multi.get(), e);
      return MakeError(Errc::kSystem, what + ": " + curl_multi_strerror(mc));
    }
    int queued = 0;
    while (CURLMsg* msg = curl_multi_info_read(multi.get(), &queued)) {
      if (msg->msg == CURLMSG_DONE) {
        rr.code = msg->data.result;
        done = true;
      }
    }
    if (done) break;
    if (req.cancel != nullptr && req.cancel->cancelled()) {
      rr.outcome = Outcome::kCancelled;
      break;
    }
    if (req.idle_timeout.count() > 0 &&
        std::chrono::steady_clock::now() - t.last_activity > req.idle_timeout) {
      rr.outcome = Outcome::kIdleTimeout;
      break;
    }
    mc = curl_multi_poll(multi.get(), nullptr, 0, kPollSliceMs, nullptr);
    if (mc != CURLM_OK) {
      curl_multi_remove_handle(multi.get(), e);
      return MakeError(Errc::kSystem, what + ": " + curl_multi_strerror(mc));
    }
  }
  if (rr.outcome == Outcome::kDone && rr.code == CURLE_OK) (void)MaybeHead(e, t);
  if (!t.head_done) {
    long code = 0;
    curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &code);
    if (code >= 200) t.resp.status = static_cast<int>(code);
  }
  curl_multi_remove_handle(multi.get(), e);
  if (rr.outcome == Outcome::kIdleTimeout) {
    return Error(Errc::kSystem,
                 what + ": no data for " + std::to_string(req.idle_timeout.count()) + " ms",
                 ETIMEDOUT);
  }
  if (rr.outcome == Outcome::kDone && rr.code != CURLE_OK && !t.stopped) {
    if (t.too_large) {
      return Error(Errc::kProtocol,
                   what + ": response body larger than " + std::to_string(req.max_body) + " bytes",
                   EFBIG);
    }
    std::string reason = curl_easy_strerror(rr.code);
    if (errbuf[0] != '\0' && reason != errbuf) reason += std::string(": ") + errbuf;
    return Error(Errc::kSystem, what + ": " + reason,
                 rr.code == CURLE_OPERATION_TIMEDOUT ? ETIMEDOUT : ECONNABORTED);
  }
  return rr;
}

}  // namespace

void CancelToken::Cancel() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    cancelled_.store(true, std::memory_order_release);
  }
  cv_.notify_all();
}

bool CancelToken::WaitFor(Millis d) const {
  std::unique_lock<std::mutex> lock(mu_);
  return !cv_.wait_for(lock, d, [this] { return cancelled(); });
}

HttpClient::HttpClient(HttpOptions options)
    : options_(std::move(options)),
      pool_(std::make_shared<ConnectionPool>(options_.reuse_connections ? kMaxIdleHandles : 0)) {
  GlobalInitOnce();
}

Result<Response> HttpClient::Send(const Request& req) const {
  Transfer t;
  SRT_ASSIGN_OR_RETURN(RunResult rr, Run(options_, *pool_, req, t));
  if (rr.outcome == Outcome::kCancelled) {
    return Error(Errc::kSystem, req.method + " '" + req.url + "': cancelled", ECANCELED);
  }
  return std::move(t.resp);
}

Result<StreamResult> HttpClient::Stream(const Request& req, const ByteSink& on_bytes,
                                        const HeadSink& on_head) const {
  Transfer t;
  t.on_bytes = &on_bytes;
  t.on_head = &on_head;
  SRT_ASSIGN_OR_RETURN(RunResult rr, Run(options_, *pool_, req, t));
  StreamResult out;
  out.end = rr.outcome == Outcome::kCancelled ? StreamEnd::kCancelled
            : t.stopped                       ? StreamEnd::kStopped
                                              : StreamEnd::kEnded;
  out.head = std::move(t.resp);
  return out;
}

}  // namespace srt::poller
