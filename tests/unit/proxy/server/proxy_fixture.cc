// SPDX-License-Identifier: Apache-2.0
// proxy_fixture.cc: the component tests' ProxyServer fixture.
#include "proxy_fixture.h"

#include <signal.h>
#include <sys/socket.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "server/rules.h"
#include "support/network_policy_for.h"

namespace srt::proxy::testing {

void RecordLog::Add(const ConnectionRecord& record) {
  std::lock_guard<std::mutex> lock(mu_);
  records_.push_back(record);
  cv_.notify_all();
}

std::vector<ConnectionRecord> RecordLog::WaitFor(size_t n, Clock::time_point deadline) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait_until(lock, deadline, [&] { return records_.size() >= n; });
  return records_;
}

std::vector<ConnectionRecord> RecordLog::Snapshot() const {
  std::lock_guard<std::mutex> lock(mu_);
  return records_;
}

void RecordLog::Clear() {
  std::lock_guard<std::mutex> lock(mu_);
  records_.clear();
}

void ExpectRecord(const ConnectionRecord& r, const WantRecord& want) {
  SCOPED_TRACE(FormatRecordText(r));
  EXPECT_EQ(ProtocolName(r.protocol), ProtocolName(want.protocol));
  EXPECT_EQ(r.host, want.host);
  EXPECT_EQ(r.port, want.port);
  EXPECT_EQ(r.allowed, want.allowed);
  EXPECT_EQ(r.reason, want.reason);
  if (want.address) {
    EXPECT_EQ(r.address, *want.address);
  }
  if (want.end) {
    EXPECT_EQ(r.end, *want.end);
  }
  if (want.bytes_up) {
    EXPECT_EQ(r.bytes_up, *want.bytes_up);
  }
  if (want.bytes_down) {
    EXPECT_EQ(r.bytes_down, *want.bytes_down);
  }
  if (want.error_contains) {
    EXPECT_NE(r.error.find(*want.error_contains), std::string::npos) << r.error;
  }
  if (want.via_parent) {
    EXPECT_EQ(r.via_parent, *want.via_parent);
  }
  if (!want.allowed) {
    EXPECT_EQ(r.end, "");
    EXPECT_EQ(r.bytes_up, 0u);
    EXPECT_EQ(r.bytes_down, 0u);
  }

  const std::string line = FormatRecordJson(r, kSandboxId);
  ASSERT_TRUE(line.ends_with("\n"));
  EXPECT_EQ(std::count(line.begin(), line.end(), '\n'), 1);
  nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  ASSERT_FALSE(j.is_discarded()) << line;
  ASSERT_TRUE(j.is_object()) << line;
  EXPECT_EQ(j.value("sandbox", ""), kSandboxId);
  EXPECT_EQ(j.value("protocol", ""), ProtocolName(want.protocol));
  EXPECT_EQ(j.value("host", ""), r.host);
  EXPECT_EQ(j.value("port", -1), static_cast<int>(r.port));
  EXPECT_EQ(j.value("address", ""), r.address);
  EXPECT_EQ(j.value("decision", ""), r.allowed ? "allow" : "deny");
  EXPECT_EQ(j.value("reason", ""), r.reason);
  EXPECT_EQ(j.value("bytes_up", uint64_t{0}), r.bytes_up);
  EXPECT_EQ(j.value("bytes_down", uint64_t{0}), r.bytes_down);
  EXPECT_EQ(j.value("end", ""), r.end);
  EXPECT_EQ(j.value("via", ""), r.via_parent ? "parent" : "direct");
  EXPECT_TRUE(j.contains("time") && j["time"].is_string());
  EXPECT_TRUE(j.contains("duration_ms") && j["duration_ms"].is_number());
}

void ProxyComponentTest::SetUpTestSuite() {
  // A write to a socket the proxy reset must fail with EPIPE, not kill the test.
  signal(SIGPIPE, SIG_IGN);
}

void ProxyComponentTest::SetUp() {
  ASSERT_TRUE(origin_.Start());
  ASSERT_TRUE(origin2_.Start());
  ASSERT_TRUE(echo_.Start());
  dead_ = BindWithoutListening("127.0.0.1");
  ASSERT_TRUE(dead_.has_value());
  Result<void> started = loop_thread_.Start();
  ASSERT_TRUE(started.has_value()) << started.error().message();
  StartProxy();
}

void ProxyComponentTest::TearDown() {
  StopProxy();
  loop_thread_.Stop();
  origin_.Stop();
  origin2_.Stop();
  echo_.Stop();
}

NetworkSettings ProxyComponentTest::DefaultNetwork() const {
  NetworkSettings n;
  const std::string o = std::to_string(origin_.port());
  const std::string o2 = std::to_string(origin2_.port());
  const std::string e = std::to_string(echo_.port());
  const std::string d = std::to_string(dead_->port);
  n.allowed_domains = {"origin.test",     "other.test",     "echo.test",
                       "dead.test",       "loopy.test",     "127.0.0.1:" + o,
                       "127.0.0.1:" + o2, "127.0.0.1:" + e, "127.0.0.1:" + d};
  n.denied_domains = {"denied.test", "reason.test"};
  n.denied_domain_reasons = {{"reason.test", "no <exfiltration>\there"}};
  return n;
}

ProxyOptions ProxyComponentTest::DefaultOptions() {
  ProxyOptions options;
  options.sandbox_id = std::string(kSandboxId);
  options.token = std::string(kToken);
  options.on_record = [this](const ConnectionRecord& r) { records_.Add(r); };
  options.connect_timeout = std::chrono::milliseconds(5000);
  return options;
}

void ProxyComponentTest::OnLoop(const std::function<void()>& fn) {
  std::promise<void> done;
  std::future<void> future = done.get_future();
  loop_thread_.loop().RunInLoop([&] {
    fn();
    done.set_value();
  });
  future.wait();
}

void ProxyComponentTest::StartProxy(const NetworkSettings& network, ProxyOptions options,
                                    const std::function<void(FakeResolver&)>& script) {
  StartProxyWith(network, std::move(options), [&](EventLoop& loop) {
    auto fake = std::make_unique<FakeResolver>(loop);
    for (const char* name : {"origin.test", "other.test", "echo.test", "dead.test"}) {
      fake->SetAddresses(name, {"127.0.0.1"});
    }
    fake->SetAddresses("loopy.test", {"127.0.0.2"});
    if (script) script(*fake);
    return fake;
  });
}

void ProxyComponentTest::StartProxyWith(
    const NetworkSettings& network, ProxyOptions options,
    const std::function<std::unique_ptr<Resolver>(EventLoop&)>& make_resolver) {
  StopProxy();
  records_.Clear();
  Result<NetworkPolicy> policy = srt::testing::NetworkPolicyFor(network);
  ASSERT_TRUE(policy.has_value()) << policy.error().message();
  std::shared_ptr<const NetworkRules> rules = BuildNetworkRules(*policy, {});
  std::optional<Listening> listening = ListenTcp("127.0.0.1");
  ASSERT_TRUE(listening.has_value());
  if (listener_send_buffer_ > 0) {
    ASSERT_EQ(setsockopt(listening->fd.get(), SOL_SOCKET, SO_SNDBUF, &listener_send_buffer_,
                         sizeof listener_send_buffer_),
              0);
  }
  proxy_port_ = listening->port;
  std::string error;
  OnLoop([&] {
    EventLoop& loop = loop_thread_.loop();
    Result<std::unique_ptr<ProxyServer>> server =
        ProxyServer::Create(loop, std::move(options), make_resolver(loop), rules);
    if (!server) {
      error = server.error().message();
      return;
    }
    if (Result<void> added = (*server)->AddListener(std::move(listening->fd), ListenerRole::kProxy);
        !added) {
      error = added.error().message();
      return;
    }
    server_ = std::move(*server);
  });
  ASSERT_EQ(error, "");
}

void ProxyComponentTest::StopProxy() {
  if (!server_) return;
  OnLoop([&] { server_.reset(); });
}

void ProxyComponentTest::UpdateRules(const NetworkSettings& network) {
  Result<NetworkPolicy> policy = srt::testing::NetworkPolicyFor(network);
  ASSERT_TRUE(policy.has_value()) << policy.error().message();
  OnLoop([&] { server_->UpdateRules(BuildNetworkRules(*policy, {})); });
}

size_t ProxyComponentTest::ServerConnections() {
  size_t n = 0;
  OnLoop([&] { n = server_->connections(); });
  return n;
}

Stream ProxyComponentTest::ConnectProxy() {
  UniqueFd fd = ConnectTcp("127.0.0.1", proxy_port_);
  EXPECT_TRUE(fd) << "connect to the proxy on " << proxy_port_;
  return Stream(std::move(fd));
}

bool ProxyComponentTest::OpenTunnel(Stream& client, const std::string& authority,
                                    std::string_view extra) {
  const std::string head = "CONNECT " + authority + " HTTP/1.1\r\nHost: " + authority + "\r\n" +
                           std::string(kAuthHeader) + "\r\n" + std::string(extra);
  if (!client.SendAll(head)) return false;
  std::optional<std::string> answer = client.ReadExactly(kConnectEstablished.size());
  EXPECT_EQ(
      answer.value_or("<" + std::string(StatusName(client.status())) + ">: " + client.buffer()),
      kConnectEstablished);
  return answer == kConnectEstablished;
}

}  // namespace srt::proxy::testing
