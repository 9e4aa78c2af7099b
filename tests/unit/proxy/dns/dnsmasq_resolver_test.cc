// SPDX-License-Identifier: Apache-2.0
// The c-ares resolver against a real dnsmasq (tests/support/dnsmasq.h): skipped when dnsmasq is
// not installed, unless SRT_MUST_WORK=1.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <cerrno>
#include <memory>

#include "dns/resolver.h"
#include "loop/event_loop.h"
#include "resolve_waiter.h"
#include "support/dnsmasq.h"

namespace srt::proxy::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

class DnsmasqResolverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto loop = EventLoop::Create();
    ASSERT_TRUE(loop.has_value());
    loop_ = std::move(loop).value();
    srt::testing::Dnsmasq::Options options;
    options.args = {
        "--local=/example/",  // everything under example. is ours: NXDOMAIN unless listed
        "--address=/test.example/127.0.0.2",
        "--address=/v6.example/fd00::2",
    };
    auto dns = srt::testing::Dnsmasq::Start(options);
    if (!dns.has_value() && dns.error().code() == Errc::kNotFound && !srt::testing::MustWork()) {
      GTEST_SKIP() << dns.error().message() << " (set SRT_MUST_WORK=1 to fail instead)";
    }
    ASSERT_TRUE(dns.has_value()) << dns.error().message();
    dns_ = std::move(dns).value();
    ResolverOptions ro;
    ro.servers = {dns_->endpoint()};
    ro.timeout = std::chrono::milliseconds(1000);
    auto resolver = CreateAresResolver(*loop_, ro);
    ASSERT_TRUE(resolver.has_value()) << resolver.error().message();
    resolver_ = std::move(resolver).value();
  }

  std::unique_ptr<EventLoop> loop_;
  std::unique_ptr<srt::testing::Dnsmasq> dns_;
  std::unique_ptr<Resolver> resolver_;
};

TEST_F(DnsmasqResolverTest, ResolvesWhatDnsmasqServes) {
  ResolveResult r = ResolveNow(*loop_, *resolver_, "test.example");
  ASSERT_TRUE(r.ok()) << r.error_text << "\n" << dns_->log();
  EXPECT_THAT(Texts(r), ElementsAre("127.0.0.2"));
  // --address covers subdomains.
  EXPECT_THAT(Texts(ResolveNow(*loop_, *resolver_, "deep.sub.test.example")),
              ElementsAre("127.0.0.2"));
  EXPECT_THAT(Texts(ResolveNow(*loop_, *resolver_, "v6.example")), ElementsAre("fd00::2"));
}

TEST_F(DnsmasqResolverTest, NxDomain) {
  ResolveResult r = ResolveNow(*loop_, *resolver_, "nope.example");
  EXPECT_EQ(r.error, ResolveError::kNotFound) << r.error_text;
  EXPECT_THAT(r.error_text, HasSubstr("'nope.example'"));
}

TEST_F(DnsmasqResolverTest, FixtureLeavesNothingBehind) {
  pid_t pid = dns_->pid();
  ASSERT_GT(pid, 0);
  EXPECT_EQ(::kill(pid, 0), 0);
  EXPECT_THAT(dns_->log(), HasSubstr("started"));
  resolver_.reset();
  dns_.reset();
  // Reaped, not a zombie: the pid is gone (it could be reused, but not this fast in practice).
  EXPECT_EQ(::kill(pid, 0), -1);
  EXPECT_EQ(errno, ESRCH);
}

// The signal tests skip on: a missing binary is kNotFound, nothing else is.
TEST(DnsmasqFixtureTest, MissingBinaryIsNotFound) {
  srt::testing::Dnsmasq::Options options;
  options.binary = "/nonexistent/dnsmasq";
  auto dns = srt::testing::Dnsmasq::Start(options);
  ASSERT_FALSE(dns.has_value());
  EXPECT_EQ(dns.error().code(), Errc::kNotFound);
  EXPECT_THAT(dns.error().message(), HasSubstr("dnsmasq-base"));
}

TEST(DnsmasqFixtureTest, StartupFailureCarriesDnsmasqsLog) {
  if (!srt::testing::Dnsmasq::Find() && !srt::testing::MustWork()) {
    GTEST_SKIP() << "dnsmasq is not installed (set SRT_MUST_WORK=1 to fail instead)";
  }
  srt::testing::Dnsmasq::Options options;
  options.args = {"--no-such-option"};
  auto dns = srt::testing::Dnsmasq::Start(options);
  ASSERT_FALSE(dns.has_value());
  EXPECT_EQ(dns.error().code(), Errc::kSystem);
  EXPECT_THAT(dns.error().message(), HasSubstr("dnsmasq exited during startup"));
  EXPECT_THAT(dns.error().message(), HasSubstr("bad command line options"));  // its own words
}

}  // namespace
}  // namespace srt::proxy::testing
