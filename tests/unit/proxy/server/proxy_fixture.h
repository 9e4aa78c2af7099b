// SPDX-License-Identifier: Apache-2.0
// proxy_fixture.h: the component tests' fixture: a ProxyServer on its own LoopThread with a
// listener on 127.0.0.1:<ephemeral>, token "tok", a FakeResolver (or any resolver) and rules
// from NetworkSettings, plus in-test origins on loopback and the decision records it logged.
//
// The origins are on loopback, which the resolved-address guard refuses for a *name*; the
// default settings therefore carve each origin out by IP:port (`127.0.0.1:<port>`), as a user
// would for a local service. `loopy.test` resolves to 127.0.0.2, which nothing carves out.
#pragma once

#include <gtest/gtest.h>

#include <condition_variable>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "component_support.h"
#include "dns/resolver.h"
#include "fake_resolver.h"
#include "loop/loop_thread.h"
#include "server/decision_log.h"
#include "server/proxy_server.h"
#include "srt/settings.h"

namespace srt::proxy::testing {

// "Proxy-Authorization: Basic base64(srt:tok)\r\n".
inline constexpr std::string_view kAuthHeader = "Proxy-Authorization: Basic c3J0OnRvaw==\r\n";
inline constexpr std::string_view kToken = "tok";
inline constexpr std::string_view kSandboxId = "sbx-1";
inline constexpr std::string_view kConnectEstablished =
    "HTTP/1.1 200 Connection Established\r\n\r\n";
inline constexpr std::string_view kProxyAuthRequired =
    "HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic "
    "realm=\"srt\"\r\nContent-Length: 0\r\n\r\n";
inline constexpr std::string_view kConnectBadGateway = "HTTP/1.1 502 Bad Gateway\r\n\r\n";
inline constexpr std::string_view kConnectBadRequest = "HTTP/1.1 400 Bad Request\r\n\r\n";

[[nodiscard]] inline std::string Port(uint16_t port) { return std::to_string(port); }

// The decision records a server logged, collected from its loop thread.
class RecordLog {
 public:
  void Add(const ConnectionRecord& record);
  // Waits until at least `n` records arrived; returns all of them (fewer on timeout).
  std::vector<ConnectionRecord> WaitFor(size_t n, Clock::time_point deadline = Deadline());
  [[nodiscard]] std::vector<ConnectionRecord> Snapshot() const;
  void Clear();

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<ConnectionRecord> records_;
};

// What a test expects of one record; unset optionals are not checked.
struct WantRecord {
  Protocol protocol = Protocol::kConnect;
  std::string host;
  uint16_t port = 0;
  bool allowed = false;
  std::string reason;  // checked exactly (empty for allowed records)
  std::optional<std::string> address;
  std::optional<std::string> end;
  std::optional<uint64_t> bytes_up;
  std::optional<uint64_t> bytes_down;
  std::optional<std::string> error_contains;
  std::optional<bool> via_parent;
};
// Checks the fields, and that FormatRecordJson renders the record as one JSON line with the
// same values.
void ExpectRecord(const ConnectionRecord& record, const WantRecord& want);

class ProxyComponentTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite();
  void SetUp() override;
  void TearDown() override;

  // The allow/deny lists described in the file comment.
  [[nodiscard]] NetworkSettings DefaultNetwork() const;
  [[nodiscard]] ProxyOptions DefaultOptions();
  // Replaces the running server (if any) by one with these settings. `script` adds to the
  // FakeResolver's default table (origin.test, other.test, echo.test, dead.test -> 127.0.0.1,
  // loopy.test -> 127.0.0.2).
  void StartProxy(const NetworkSettings& network, ProxyOptions options,
                  const std::function<void(FakeResolver&)>& script = {});
  void StartProxy() { StartProxy(DefaultNetwork(), DefaultOptions()); }
  // The same with a resolver made on the loop thread.
  void StartProxyWith(const NetworkSettings& network, ProxyOptions options,
                      const std::function<std::unique_ptr<Resolver>(EventLoop&)>& make_resolver);
  // Destroys the server on its loop thread (idempotent).
  void StopProxy();
  void UpdateRules(const NetworkSettings& network);
  [[nodiscard]] size_t ServerConnections();

  // Runs `fn` on the loop thread and waits for it.
  void OnLoop(const std::function<void()>& fn);

  // A new connection to the proxy (fails the test if it cannot connect).
  Stream ConnectProxy();
  // CONNECT `authority` with the right credentials; true if the answer was exactly
  // kConnectEstablished.
  bool OpenTunnel(Stream& client, const std::string& authority, std::string_view extra = "");
  // "http://origin.test:<origin_'s port><path>".
  [[nodiscard]] std::string OriginUrl(std::string_view path) const {
    return "http://origin.test:" + Port(origin_.port()) + std::string(path);
  }
  // Waits for the first record and checks that it is the only one and matches `want`.
  void ExpectOnlyRecord(const WantRecord& want) {
    std::vector<ConnectionRecord> records = records_.WaitFor(1);
    ASSERT_EQ(records.size(), 1u);
    ExpectRecord(records[0], want);
  }

  OriginServer origin_;
  OriginServer origin2_;  // "other.test"
  EchoServer echo_;
  std::optional<Listening> dead_;  // bound, not listening: dialing it is refused
  LoopThread loop_thread_{"srt-proxy-test"};
  std::unique_ptr<ProxyServer> server_;
  uint16_t proxy_port_ = 0;
  // SO_SNDBUF for the next StartProxy's listener (inherited by the accepted client sockets, with
  // autotuning off); 0: the kernel's default.
  int listener_send_buffer_ = 0;
  RecordLog records_;
};

}  // namespace srt::proxy::testing
