// SPDX-License-Identifier: Apache-2.0
// Tests of the c-ares resolver against the loopback MockDnsServer.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "dns/resolver.h"
#include "loop/event_loop.h"
#include "mock_dns_server.h"
#include "resolve_waiter.h"

namespace srt::proxy::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::UnorderedElementsAre;
using namespace std::chrono_literals;
using Kind = MockDnsReply::Kind;

std::vector<int> OpenFds() {
  std::vector<int> fds;
  for (int fd = 0; fd < 4096; ++fd) {
    if (::fcntl(fd, F_GETFD) >= 0) {
      fds.push_back(fd);
    }
  }
  return fds;
}

// A loopback UDP port with nobody behind it (bound, then closed).
uint16_t DeadPort() {
  int s = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  EXPECT_EQ(::bind(s, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  EXPECT_EQ(::getsockname(s, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  ::close(s);
  return ntohs(addr.sin_port);
}

class AresResolverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto loop = EventLoop::Create();
    ASSERT_TRUE(loop.has_value()) << loop.error().message();
    loop_ = std::move(loop).value();
    auto dns = MockDnsServer::Start();
    ASSERT_TRUE(dns.has_value()) << dns.error().message();
    dns_ = std::move(dns).value();
  }

  ResolverOptions Options() {
    ResolverOptions o;
    o.servers = {dns_->endpoint()};
    o.timeout = 1000ms;
    o.tries = 1;
    return o;
  }

  std::unique_ptr<Resolver> Make(const ResolverOptions& o) {
    auto r = CreateAresResolver(*loop_, o);
    EXPECT_TRUE(r.has_value()) << r.error().message();
    return r.has_value() ? std::move(r).value() : nullptr;
  }
  std::unique_ptr<Resolver> Make() { return Make(Options()); }

  ResolveResult Resolve(Resolver& r, const std::string& name,
                        std::chrono::milliseconds limit = 10s) {
    return ResolveNow(*loop_, r, name, limit);
  }

  std::unique_ptr<EventLoop> loop_;
  std::unique_ptr<MockDnsServer> dns_;
};

TEST_F(AresResolverTest, AOnly) {
  dns_->Set("a.test", MockDnsReply::Addresses({"192.0.2.1", "192.0.2.2"}));
  auto r = Make();
  ResolveResult res = Resolve(*r, "a.test");
  ASSERT_TRUE(res.ok()) << res.error_text;
  EXPECT_THAT(Texts(res), UnorderedElementsAre("192.0.2.1", "192.0.2.2"));
  EXPECT_TRUE(res.error_text.empty());
  EXPECT_EQ(dns_->queries("a.test"), 2u);  // A and AAAA, in parallel
}

TEST_F(AresResolverTest, AaaaOnly) {
  dns_->Set("six.test", MockDnsReply::Addresses({}, {"2001:db8::6"}));
  auto r = Make();
  ResolveResult res = Resolve(*r, "six.test");
  ASSERT_TRUE(res.ok()) << res.error_text;
  EXPECT_THAT(Texts(res), ElementsAre("2001:db8::6"));
}

TEST_F(AresResolverTest, BothFamiliesDeduplicated) {
  dns_->Set("both.test", MockDnsReply::Addresses({"192.0.2.1", "192.0.2.1", "192.0.2.3"},
                                                 {"2001:db8::1", "2001:db8::1"}));
  auto r = Make();
  ResolveResult res = Resolve(*r, "both.test");
  ASSERT_TRUE(res.ok()) << res.error_text;
  EXPECT_THAT(Texts(res), UnorderedElementsAre("192.0.2.1", "192.0.2.3", "2001:db8::1"));
}

TEST_F(AresResolverTest, NamesMatchCaseInsensitivelyAndWithTrailingDot) {
  dns_->Set("a.test", MockDnsReply::Addresses({"192.0.2.1"}));
  auto r = Make();
  EXPECT_THAT(Texts(Resolve(*r, "A.Test.")), ElementsAre("192.0.2.1"));
}

TEST_F(AresResolverTest, NxDomain) {
  auto r = Make();
  ResolveResult res = Resolve(*r, "nx.test");
  EXPECT_EQ(res.error, ResolveError::kNotFound);
  EXPECT_TRUE(res.addresses.empty());
  EXPECT_THAT(res.error_text, HasSubstr("resolve 'nx.test': "));
}

TEST_F(AresResolverTest, NoDataIsNotFound) {
  dns_->Set("empty.test", MockDnsReply::Addresses({}, {}));
  auto r = Make();
  EXPECT_EQ(Resolve(*r, "empty.test").error, ResolveError::kNotFound);
}

TEST_F(AresResolverTest, ServFail) {
  dns_->Set("broken.test", MockDnsReply::Of(Kind::kServFail));
  auto r = Make();
  ResolveResult res = Resolve(*r, "broken.test");
  EXPECT_EQ(res.error, ResolveError::kServerFailure) << res.error_text;
  EXPECT_THAT(res.error_text, HasSubstr("'broken.test'"));
}

TEST_F(AresResolverTest, Refused) {
  dns_->Set("no.test", MockDnsReply::Of(Kind::kRefused));
  auto r = Make();
  ResolveResult res = Resolve(*r, "no.test");
  EXPECT_EQ(res.error, ResolveError::kServerFailure) << res.error_text;
  EXPECT_THAT(res.error_text, HasSubstr("no DNS server gave a usable answer"));
}

// c-ares tries the next server after a SERVFAIL.
TEST_F(AresResolverTest, ServFailFallsBackToTheNextServer) {
  auto second = MockDnsServer::Start();
  ASSERT_TRUE(second.has_value());
  dns_->Set("a.test", MockDnsReply::Of(Kind::kServFail));
  (*second)->Set("a.test", MockDnsReply::Addresses({"192.0.2.1"}));
  ResolverOptions o = Options();
  o.servers = {dns_->endpoint(), (*second)->endpoint()};
  auto r = Make(o);
  ResolveResult res = Resolve(*r, "a.test");
  ASSERT_TRUE(res.ok()) << res.error_text;
  EXPECT_THAT(Texts(res), ElementsAre("192.0.2.1"));
  EXPECT_GE(dns_->queries("a.test"), 1u);
}

TEST_F(AresResolverTest, NobodyListeningFailsWellBeforeTheTimeout) {
  ResolverOptions o = Options();
  o.servers = {Endpoint{*ParseIpv4("127.0.0.1"), DeadPort()}};
  o.timeout = 5000ms;
  o.tries = 2;
  auto r = Make(o);
  auto start = std::chrono::steady_clock::now();
  ResolveResult res = Resolve(*r, "a.test");
  EXPECT_EQ(res.error, ResolveError::kServerFailure) << res.error_text;
  EXPECT_LT(std::chrono::steady_clock::now() - start, 4000ms);
}

TEST_F(AresResolverTest, FallsBackToTheNextServer) {
  dns_->Set("a.test", MockDnsReply::Addresses({"192.0.2.1"}));
  ResolverOptions o = Options();
  o.servers = {Endpoint{*ParseIpv4("127.0.0.1"), DeadPort()}, dns_->endpoint()};
  auto r = Make(o);
  ResolveResult res = Resolve(*r, "a.test");
  ASSERT_TRUE(res.ok()) << res.error_text;
  EXPECT_THAT(Texts(res), ElementsAre("192.0.2.1"));
}

TEST_F(AresResolverTest, TimeoutWhenTheServerDrops) {
  dns_->Set("black.hole", MockDnsReply::Of(Kind::kDrop));
  ResolverOptions o = Options();
  o.timeout = 200ms;
  o.tries = 1;
  auto r = Make(o);
  auto start = std::chrono::steady_clock::now();
  ResolveResult res = Resolve(*r, "black.hole");
  auto took = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(res.error, ResolveError::kTimeout) << res.error_text;
  EXPECT_GE(took, 200ms);
  EXPECT_LT(took, 1000ms);
  EXPECT_EQ(dns_->queries("black.hole"), 2u);  // A and AAAA, once each
}

// timeout * (2^tries - 1) with one server: 200 ms, then 400 ms.
TEST_F(AresResolverTest, TimeoutWithRetriesFollowsTheDocumentedBound) {
  dns_->Set("black.hole", MockDnsReply::Of(Kind::kDrop));
  ResolverOptions o = Options();
  o.timeout = 200ms;
  o.tries = 2;
  auto r = Make(o);
  auto start = std::chrono::steady_clock::now();
  ResolveResult res = Resolve(*r, "black.hole");
  auto took = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(res.error, ResolveError::kTimeout);
  EXPECT_GE(took, 600ms);
  EXPECT_LT(took, 1500ms);
  EXPECT_EQ(dns_->queries("black.hole"), 4u);
}

TEST_F(AresResolverTest, SlowAnswerWithinTheTimeout) {
  MockDnsReply slow = MockDnsReply::Addresses({"192.0.2.9"});
  slow.delay = 150ms;
  dns_->Set("slow.test", slow);
  auto r = Make();
  ResolveResult res = Resolve(*r, "slow.test");
  ASSERT_TRUE(res.ok()) << res.error_text;
  EXPECT_THAT(Texts(res), ElementsAre("192.0.2.9"));
}

TEST_F(AresResolverTest, TruncatedUdpAnswerIsRetriedOverTcp) {
  MockDnsReply tc = MockDnsReply::Addresses({"192.0.2.1"}, {"2001:db8::1"});
  tc.kind = Kind::kTruncate;
  dns_->Set("tc.test", tc);
  auto r = Make();
  ResolveResult res = Resolve(*r, "tc.test");
  ASSERT_TRUE(res.ok()) << res.error_text;
  EXPECT_THAT(Texts(res), UnorderedElementsAre("192.0.2.1", "2001:db8::1"));
  EXPECT_EQ(dns_->tcp_queries(), 2u);
}

std::vector<std::string> ManyV4(int n) {
  std::vector<std::string> out;
  out.reserve(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    out.push_back("10.0." + std::to_string(i / 250) + "." + std::to_string(i % 250 + 1));
  }
  return out;
}

TEST_F(AresResolverTest, AnswersAreCapped) {
  dns_->Set("many.test", MockDnsReply::Addresses(ManyV4(20)));
  ResolverOptions o = Options();
  o.max_answers = 5;
  auto r = Make(o);
  ResolveResult res = Resolve(*r, "many.test");
  ASSERT_TRUE(res.ok()) << res.error_text;
  EXPECT_EQ(res.addresses.size(), 5u);
}

// 300 A records do not fit in 512 bytes: TC over UDP, the whole set over TCP, then the default
// cap (kMaxDnsAnswers) applies.
TEST_F(AresResolverTest, HugeAnswerGoesOverTcpAndIsCappedByDefault) {
  dns_->Set("huge.test", MockDnsReply::Addresses(ManyV4(300)));
  auto r = Make();
  ResolveResult res = Resolve(*r, "huge.test");
  ASSERT_TRUE(res.ok()) << res.error_text;
  EXPECT_EQ(res.addresses.size(), kMaxDnsAnswers);
  EXPECT_GE(dns_->tcp_queries(), 1u);
}

TEST_F(AresResolverTest, CallbackNeverRunsInsideResolve) {
  dns_->Set("a.test", MockDnsReply::Addresses({"192.0.2.1"}));
  auto r = Make();
  for (std::string name : {"a.test", "192.0.2.5", "localhost", "", "[::1]"}) {
    bool inside = true;
    bool called = false;
    r->Resolve(name, [&](const ResolveResult&) {
      EXPECT_FALSE(inside) << name;
      called = true;
    });
    inside = false;
    EXPECT_FALSE(called) << name;
    EXPECT_TRUE(RunUntil(*loop_, [&] { return called; })) << name;
  }
}

TEST_F(AresResolverTest, IpLiteralsAndLocalhostNeedNoDns) {
  auto r = Make();
  EXPECT_THAT(Texts(Resolve(*r, "192.0.2.7")), ElementsAre("192.0.2.7"));
  EXPECT_THAT(Texts(Resolve(*r, "2001:db8::7")), ElementsAre("2001:db8::7"));
  EXPECT_THAT(Texts(Resolve(*r, "[2001:db8::8]")), ElementsAre("2001:db8::8"));
  EXPECT_THAT(Texts(Resolve(*r, "LocalHost.")), ElementsAre("127.0.0.1", "::1"));
  EXPECT_EQ(dns_->total_queries(), 0u);
}

TEST_F(AresResolverTest, BadNames) {
  auto r = Make();
  EXPECT_EQ(Resolve(*r, "").error, ResolveError::kBadName);
  ResolveResult nul = Resolve(*r, std::string("evil.test\0.example.com", 22));
  EXPECT_EQ(nul.error, ResolveError::kBadName);
  EXPECT_THAT(nul.error_text, HasSubstr("'evil.test'"));
  EXPECT_EQ(Resolve(*r, std::string(254, 'a')).error, ResolveError::kBadName);
  EXPECT_EQ(Resolve(*r, std::string(64, 'a') + ".test").error, ResolveError::kBadName);
  EXPECT_EQ(dns_->total_queries(), 0u);
  // 253 characters in labels of 63 is a legal name: it reaches the server.
  std::string longest = std::string(63, 'a') + "." + std::string(63, 'b') + "." +
                        std::string(63, 'c') + "." + std::string(61, 'd');
  ASSERT_EQ(longest.size(), 253u);
  EXPECT_EQ(Resolve(*r, longest).error, ResolveError::kNotFound);
  EXPECT_EQ(Resolve(*r, longest + ".").error, ResolveError::kNotFound);
}

TEST_F(AresResolverTest, CancelInFlight) {
  MockDnsReply slow = MockDnsReply::Addresses({"192.0.2.1"});
  slow.delay = 200ms;
  dns_->Set("slow.test", slow);
  dns_->Set("a.test", MockDnsReply::Addresses({"192.0.2.2"}));
  auto r = Make();
  auto token = std::make_shared<int>(0);
  bool called = false;
  Resolver::QueryId id =
      r->Resolve("slow.test", [&called, token](const ResolveResult&) { called = true; });
  EXPECT_NE(id, 0u);
  ASSERT_TRUE(dns_->WaitForQueries(2, 2s));  // the queries are on the wire
  r->Cancel(id);
  EXPECT_EQ(token.use_count(), 1);  // the callback is gone already
  r->Cancel(id);                    // twice: ignored
  r->Cancel(12345);                 // unknown: ignored
  RunFor(*loop_, 400ms);            // the late answer arrives and is dropped
  EXPECT_FALSE(called);
  // The channel is fine afterwards.
  EXPECT_THAT(Texts(Resolve(*r, "a.test")), ElementsAre("192.0.2.2"));
}

TEST_F(AresResolverTest, CancelFromAnotherCallbackOfTheSameBatch) {
  auto r = Make();
  bool second_called = false;
  Resolver::QueryId second = 0;
  // Literals finish inside Resolve() and are delivered together.
  r->Resolve("192.0.2.1", [&](const ResolveResult&) { r->Cancel(second); });
  second = r->Resolve("192.0.2.2", [&](const ResolveResult&) { second_called = true; });
  RunFor(*loop_, 20ms);
  EXPECT_FALSE(second_called);
}

TEST_F(AresResolverTest, ResolveFromInsideACallback) {
  dns_->Set("a.test", MockDnsReply::Addresses({"192.0.2.1"}));
  dns_->Set("b.test", MockDnsReply::Addresses({"192.0.2.2"}));
  auto r = Make();
  std::vector<std::string> got;
  r->Resolve("a.test", [&](const ResolveResult& res) {
    got.push_back(Texts(res).at(0));
    r->Resolve("b.test", [&](const ResolveResult& res2) { got.push_back(Texts(res2).at(0)); });
  });
  EXPECT_TRUE(RunUntil(*loop_, [&] { return got.size() == 2; }));
  EXPECT_THAT(got, ElementsAre("192.0.2.1", "192.0.2.2"));
}

TEST_F(AresResolverTest, DestructionWithQueriesInFlight) {
  MockDnsReply slow = MockDnsReply::Addresses({"192.0.2.1"});
  slow.delay = 200ms;
  dns_->SetDefault(slow);
  auto r = Make();
  auto token = std::make_shared<int>(0);
  int called = 0;
  for (int i = 0; i < 10; ++i) {
    r->Resolve("n" + std::to_string(i) + ".test",
               [&called, token](const ResolveResult&) { ++called; });
  }
  r->Resolve("192.0.2.1",
             [&called, token](const ResolveResult&) { ++called; });  // finished, undelivered
  ASSERT_TRUE(dns_->WaitForQueries(20, 2s));
  EXPECT_GT(loop_->handler_count(), 0u);
  r.reset();
  EXPECT_EQ(token.use_count(), 1);
  // Every socket left the loop and every timer was cancelled.
  EXPECT_EQ(loop_->handler_count(), 0u);
  EXPECT_EQ(loop_->timer_count(), 0u);
  RunFor(*loop_, 300ms);
  EXPECT_EQ(called, 0);
}

TEST_F(AresResolverTest, DestructionFromInsideACallback) {
  std::unique_ptr<Resolver> r = Make();
  int called = 0;
  r->Resolve("192.0.2.1", [&](const ResolveResult&) {
    ++called;
    r.reset();
  });
  r->Resolve("192.0.2.2", [&](const ResolveResult&) { ++called; });
  RunFor(*loop_, 20ms);
  EXPECT_EQ(called, 1);
  EXPECT_EQ(r, nullptr);
}

// All 500 are in flight at once: the server holds every answer for at least 300 ms, and they are
// issued within a few milliseconds. Issuing and answering are both paced (25 lookups per
// millisecond, ten answers per millisecond) because loopback delivers a burst faster than anyone
// reads it: a socket's default receive buffer holds roughly 250 small datagrams, the kernel drops
// the rest, and c-ares would only retry them after its timeout. Real traffic is not one instant.
TEST_F(AresResolverTest, FiveHundredConcurrentLookups) {
  constexpr int kN = 500;
  std::vector<std::string> want = ManyV4(kN);
  for (int i = 0; i < kN; ++i) {
    MockDnsReply reply = MockDnsReply::Addresses({want[static_cast<size_t>(i)]});
    reply.delay = 300ms + std::chrono::milliseconds(i / 5);
    dns_->Set("h" + std::to_string(i) + ".test", reply);
  }
  ResolverOptions o = Options();
  o.timeout = 3000ms;
  o.tries = 2;
  auto r = Make(o);
  std::vector<std::string> got(kN);
  int answered = 0;
  int issued = 0;
  int answered_when_all_issued = -1;
  std::function<void()> issue = [&] {
    for (int n = 0; n < 25 && issued < kN; ++n, ++issued) {
      r->Resolve("h" + std::to_string(issued) + ".test", [&, i = issued](const ResolveResult& res) {
        ++answered;
        got[static_cast<size_t>(i)] = res.ok() ? Texts(res).at(0) : res.error_text;
      });
    }
    if (issued < kN) {
      loop_->AddTimer(1ms, issue);
    } else {
      answered_when_all_issued = answered;
    }
  };
  loop_->AddTimer(0ms, issue);
  ASSERT_TRUE(RunUntil(
      *loop_, [&] { return answered == kN; }, 20s))
      << answered;
  EXPECT_EQ(answered_when_all_issued, 0);     // all 500 were in flight together
  EXPECT_EQ(dns_->total_queries(), 2u * kN);  // and no retries were needed
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(got[i], want[i]) << i;
  }
  EXPECT_EQ(loop_->timer_count(), 0u);  // no c-ares timer once nothing is in flight
}

TEST_F(AresResolverTest, TooManyInFlightFailFastWithOverloaded) {
  MockDnsReply slow = MockDnsReply::Addresses({"192.0.2.1"});
  slow.delay = 100ms;
  dns_->SetDefault(slow);
  ResolverOptions o = Options();
  o.max_inflight = 3;
  auto r = Make(o);
  std::vector<ResolveError> errors;
  for (int i = 0; i < 5; ++i) {
    r->Resolve("n" + std::to_string(i) + ".test",
               [&](const ResolveResult& res) { errors.push_back(res.error); });
  }
  ASSERT_TRUE(RunUntil(*loop_, [&] { return errors.size() == 5; }));
  // The two overloaded ones come back first, without waiting for the server.
  EXPECT_THAT(errors, ElementsAre(ResolveError::kOverloaded, ResolveError::kOverloaded,
                                  ResolveError::kOk, ResolveError::kOk, ResolveError::kOk));
  // Cancelled lookups still count until c-ares lets go of them (documented in resolver.h).
  for (int i = 0; i < 3; ++i) {
    r->Cancel(r->Resolve("c" + std::to_string(i) + ".test", [](const ResolveResult&) {}));
  }
  EXPECT_EQ(Resolve(*r, "n1.test").error, ResolveError::kOverloaded);
  RunFor(*loop_, 300ms);  // the cancelled lookups' answers arrive and are dropped
  EXPECT_TRUE(Resolve(*r, "n1.test").ok());
}

TEST_F(AresResolverTest, SocketsAreCloexecAndNonBlockingFromBirth) {
  MockDnsReply slow = MockDnsReply::Addresses({"192.0.2.1"});
  slow.delay = 100ms;
  dns_->Set("slow.test", slow);
  auto r = Make();
  std::vector<int> before = OpenFds();
  bool done = false;
  r->Resolve("slow.test", [&](const ResolveResult&) { done = true; });
  int opened = 0;
  for (int fd : OpenFds()) {
    if (std::find(before.begin(), before.end(), fd) != before.end()) {
      continue;
    }
    ++opened;
    EXPECT_TRUE(::fcntl(fd, F_GETFD) & FD_CLOEXEC) << fd;
    EXPECT_TRUE(::fcntl(fd, F_GETFL) & O_NONBLOCK) << fd;
  }
  EXPECT_GE(opened, 1);
  EXPECT_TRUE(RunUntil(*loop_, [&] { return done; }));
}

TEST_F(AresResolverTest, OptionsAreValidated) {
  // Servers come parsed (base/address.h ParseEndpoint); both families are accepted.
  for (const char* s : {"127.0.0.1", "127.0.0.1:5353", "::1", "[::1]", "[::1]:5353"}) {
    ResolverOptions o;
    o.servers = {*ParseEndpoint(s, 53)};
    EXPECT_TRUE(CreateAresResolver(*loop_, o).has_value()) << s;
  }
  ResolverOptions zero_timeout;
  zero_timeout.timeout = 0ms;
  EXPECT_FALSE(CreateAresResolver(*loop_, zero_timeout).has_value());
  ResolverOptions zero_tries;
  zero_tries.tries = 0;
  EXPECT_FALSE(CreateAresResolver(*loop_, zero_tries).has_value());
  ResolverOptions zero_answers;
  zero_answers.max_answers = 0;
  EXPECT_FALSE(CreateAresResolver(*loop_, zero_answers).has_value());
}

// The system configuration loads; localhost and literals work without touching the network.
TEST_F(AresResolverTest, SystemConfiguration) {
  auto r = CreateAresResolver(*loop_, ResolverOptions{});
  ASSERT_TRUE(r.has_value()) << r.error().message();
  EXPECT_THAT(Texts(Resolve(**r, "localhost")), ElementsAre("127.0.0.1", "::1"));
  EXPECT_THAT(Texts(Resolve(**r, "198.51.100.1")), ElementsAre("198.51.100.1"));
}

TEST(ResolveErrorTest, Names) {
  EXPECT_EQ(ResolveErrorName(ResolveError::kOk), "ok");
  EXPECT_EQ(ResolveErrorName(ResolveError::kNotFound), "not-found");
  EXPECT_EQ(ResolveErrorName(ResolveError::kTimeout), "timeout");
  EXPECT_EQ(ResolveErrorName(ResolveError::kOverloaded), "overloaded");
}

}  // namespace
}  // namespace srt::proxy::testing
