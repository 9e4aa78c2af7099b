// SPDX-License-Identifier: Apache-2.0
// srt-poller over HTTPS: the real binary against the fake control plane in TLS mode (a
// throwaway CA), with and without --ca-file.
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <vector>

#include "gtest/gtest.h"
#include "poller/support/fake_control_plane.h"
#include "poller/support/poller_process.h"

namespace {

using namespace std::chrono_literals;
using srt::testing::FakeControlPlane;
using srt::testing::PollerProcess;

class PollerTlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0 && getenv("SRT_MUST_WORK") == nullptr) {
      GTEST_SKIP() << "srt-poller's sessions need root here (cgroup limits)";
    }
    char tmpl[] = "/tmp/srt-poller-tls-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    FakeControlPlane::Options o;
    o.tls = true;
    auto cp = FakeControlPlane::Start(o);
    ASSERT_TRUE(cp.has_value()) << cp.error().message();
    cp_ = std::move(*cp);
    key_ = dir_ + "/key";
    std::ofstream(key_) << cp_->environment_key() << "\n";
    chmod(key_.c_str(), 0600);
  }
  void TearDown() override {
    cp_.reset();
    std::error_code ec;
    if (!dir_.empty()) std::filesystem::remove_all(dir_, ec);
  }
  std::vector<std::string> Args() const {
    return {"--environment-id",
            cp_->environment_id(),
            "--environment-key-file",
            key_,
            "--base-url",
            cp_->base_url(),
            "--sessions-dir",
            dir_ + "/sessions",
            "--max-idle",
            "1s"};
  }

  std::string dir_;
  std::string key_;
  std::unique_ptr<FakeControlPlane> cp_;
};

TEST_F(PollerTlsTest, ServesASessionOverHttpsWithTheGivenCa) {
  ASSERT_EQ(cp_->base_url().rfind("https://", 0), 0u) << cp_->base_url();
  auto work = cp_->Enqueue({.session_id = "sesn_tls"});
  ASSERT_TRUE(work.has_value()) << work.error().message();
  ASSERT_TRUE(cp_->AppendEvents("sesn_tls", {{{"type", "agent.tool_use"},
                                              {"id", "sevt_tls_1"},
                                              {"name", "bash"},
                                              {"input", {{"command", "echo over-tls"}}},
                                              {"evaluated_permission", "allow"}}})
                  .has_value());
  auto args = Args();
  args.insert(args.end(), {"--ca-file", cp_->ca_file()});
  auto p = PollerProcess::Start(args);
  ASSERT_TRUE(p.has_value()) << p.error().message();
  auto results = cp_->WaitForResults("sesn_tls", 1, 60s);
  ASSERT_TRUE(results.has_value()) << results.error().message() << "\n" << (*p)->Logs();
  const auto& ev = (*results)[0]["event"];
  EXPECT_EQ(ev["tool_use_id"], "sevt_tls_1");
  EXPECT_EQ(ev["is_error"], false);
  EXPECT_NE(ev["content"][0]["text"].get<std::string>().find("over-tls"), std::string::npos);
  (*p)->Signal(SIGTERM);
  EXPECT_EQ((*p)->Wait(40s), 0) << (*p)->Logs();
}

// srt-poller keeps its connections: the polls, acks, heartbeats, the session's reads and posts
// ride on a few TLS connections instead of one handshake each. The kept sockets (which carry
// the environment key) stay srt-poller's: the session's last call, hostile, looks for a socket
// in every process it can see, after eight calls have left connections idle in the pool.
TEST_F(PollerTlsTest, RequestsReuseConnections) {
  ASSERT_TRUE(cp_->Enqueue({.session_id = "sesn_reuse"}).has_value());
  std::vector<nlohmann::json> calls;
  auto bash = [&](const std::string& id, const std::string& command) {
    calls.push_back({{"type", "agent.tool_use"},
                     {"id", id},
                     {"name", "bash"},
                     {"input", {{"command", command}}},
                     {"evaluated_permission", "allow"}});
  };
  for (int i = 1; i <= 8; ++i) {
    bash("sevt_reuse_" + std::to_string(i), "echo call-" + std::to_string(i));
  }
  bash("sevt_reuse_probe",
       "n=0; for l in /proc/[0-9]*/fd/*; do case $(readlink \"$l\" 2>/dev/null) in "
       "socket:*) n=$((n+1)); echo \"$l\";; esac; done; echo sockets=$n");
  ASSERT_TRUE(cp_->AppendEvents("sesn_reuse", calls).has_value());
  auto args = Args();
  args.insert(args.end(), {"--ca-file", cp_->ca_file()});
  auto p = PollerProcess::Start(args);
  ASSERT_TRUE(p.has_value()) << p.error().message();
  auto results = cp_->WaitForResults("sesn_reuse", calls.size(), 60s);
  ASSERT_TRUE(results.has_value()) << results.error().message() << "\n" << (*p)->Logs();
  std::string probe;
  for (const auto& r : *results) {
    if (r["event"]["tool_use_id"] == "sevt_reuse_probe") {
      probe = r["event"]["content"][0]["text"].get<std::string>();
    }
  }
  EXPECT_NE(probe.find("sockets=0"), std::string::npos) << probe;
  (*p)->Signal(SIGTERM);
  EXPECT_EQ((*p)->Wait(40s), 0) << (*p)->Logs();
  auto requests = cp_->Requests();
  ASSERT_TRUE(requests.has_value()) << requests.error().message();
  std::set<int64_t> connections, post_connections;
  std::string seen;
  for (const auto& r : *requests) {
    connections.insert(r["conn"].get<int64_t>());
    if (r["endpoint"] == "events_post") post_connections.insert(r["conn"].get<int64_t>());
    seen += r["endpoint"].dump() + "@" + r["conn"].dump() + " ";
  }
  // One connection per request without reuse. With it, the session's posts, one after the
  // other, share one (two if a heartbeat took it meanwhile), and requests far outnumber
  // connections.
  EXPECT_LE(post_connections.size(), 2u) << seen;
  EXPECT_LT(connections.size() * 3, requests->size() * 2) << seen;
}

TEST_F(PollerTlsTest, AnUntrustedCertificateIsATransportErrorNotACrash) {
  // Without --ca-file the fake's certificate is not trusted: every poll fails with a TLS error,
  // which is transient (backoff, keep trying), and nothing is ever claimed.
  ASSERT_TRUE(cp_->Enqueue({.session_id = "sesn_untrusted"}).has_value());
  auto p = PollerProcess::Start(Args());
  ASSERT_TRUE(p.has_value()) << p.error().message();
  ASSERT_TRUE((*p)->WaitForLog("poll failed, backing off", 30s)) << (*p)->Logs();
  EXPECT_TRUE((*p)->running());
  EXPECT_EQ((*p)->CountLog("claimed work"), 0u);
  std::string logs = (*p)->Logs();
  EXPECT_TRUE(logs.find("certificate") != std::string::npos ||
              logs.find("SSL") != std::string::npos)
      << logs;
  EXPECT_EQ(logs.find(cp_->environment_key()), std::string::npos) << "the key must never be logged";
  (*p)->Signal(SIGTERM);
  EXPECT_EQ((*p)->Wait(40s), 0) << (*p)->Logs();
}

}  // namespace
