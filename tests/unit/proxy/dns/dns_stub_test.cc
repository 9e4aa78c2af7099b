// SPDX-License-Identifier: Apache-2.0
// Component tests of srt's DNS stub: real UDP and TCP sockets on 127.0.0.1 (port 0), the
// EventLoop run on the test's thread, FakeResolver behind it.
#include <arpa/inet.h>
#include <arpa/nameser.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netdb.h>
#include <netinet/in.h>
#include <resolv.h>
#include <sys/socket.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "dns/answers.h"
#include "dns/resolver.h"
#include "dns/stub.h"
#include "dns_wire_util.h"
#include "fake_resolver.h"
#include "loop/event_loop.h"
#include "proxy_limits.h"
#include "resolve_waiter.h"

namespace srt::proxy {
namespace {

using std::chrono::milliseconds;
using testing::DecodeResponse;
using testing::Framed;
using testing::MakeQuery;
using testing::QuerySpec;
using testing::Response;
using testing::RunFor;
using testing::RunUntil;

constexpr int kNoError = 0;
constexpr int kFormErr = 1;
constexpr int kServFail = 2;
constexpr int kNxDomain = 3;

sockaddr_in Loopback(uint16_t port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return a;
}

uint16_t LocalPort(int fd) {
  sockaddr_in a{};
  socklen_t len = sizeof a;
  EXPECT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len), 0);
  return ntohs(a.sin_port);
}

UniqueFd BoundSocket(int type) {
  UniqueFd fd(socket(AF_INET, type | SOCK_CLOEXEC, 0));
  EXPECT_TRUE(fd) << strerror(errno);
  sockaddr_in a = Loopback(0);
  EXPECT_EQ(bind(fd.get(), reinterpret_cast<sockaddr*>(&a), sizeof a), 0) << strerror(errno);
  return fd;
}

// A client connected to 127.0.0.1:port, non-blocking once connected.
UniqueFd Client(int type, uint16_t port) {
  UniqueFd fd(socket(AF_INET, type | SOCK_CLOEXEC, 0));
  EXPECT_TRUE(fd) << strerror(errno);
  sockaddr_in a = Loopback(port);
  // TCP: the listener's backlog completes the handshake without the stub running.
  EXPECT_EQ(connect(fd.get(), reinterpret_cast<sockaddr*>(&a), sizeof a), 0) << strerror(errno);
  EXPECT_EQ(fcntl(fd.get(), F_SETFL, fcntl(fd.get(), F_GETFL) | O_NONBLOCK), 0);
  return fd;
}

void SendAll(int fd, const std::vector<uint8_t>& bytes) {
  size_t sent = 0;
  while (sent < bytes.size()) {
    ssize_t n = send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    ASSERT_GT(n, 0) << strerror(errno);
    sent += static_cast<size_t>(n);
  }
}

class DnsStubTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto loop = EventLoop::Create();
    ASSERT_TRUE(loop.has_value()) << loop.error().message();
    loop_ = std::move(loop).value();
    resolver_ = std::make_unique<FakeResolver>(*loop_);
    resolver_->SetAddresses("allowed.test", {"192.0.2.1", "2001:db8::1"});
    resolver_->SetAddresses("other.test", {"192.0.2.2"});
  }

  void TearDown() override {
    stub_.reset();
    resolver_.reset();
  }

  // Starts the stub on a UDP socket and a TCP listener. The policy refuses the names in
  // refused_ with their reason.
  void Start(DnsStub::Options options = {}, size_t capacity = DnsAnswers::kDefaultCapacity) {
    table_ = std::make_unique<DnsAnswers>(capacity);
    options.refusal_reason = [this](std::string_view name) -> std::string {
      ++policy_calls_;
      auto it = refused_.find(std::string(name));
      return it == refused_.end() ? "" : it->second;
    };
    options.on_denied = [this](std::string_view name, std::string_view reason) {
      denied_.emplace_back(std::string(name), std::string(reason));
    };
    stub_ = std::make_unique<DnsStub>(*loop_, *resolver_, *table_, std::move(options));

    UniqueFd udp = BoundSocket(SOCK_DGRAM);
    udp_port_ = LocalPort(udp.get());
    auto added = stub_->AddUdpSocket(std::move(udp));
    ASSERT_TRUE(added.has_value()) << added.error().message();

    UniqueFd tcp = BoundSocket(SOCK_STREAM);
    ASSERT_EQ(listen(tcp.get(), 16), 0);
    tcp_port_ = LocalPort(tcp.get());
    added = stub_->AddTcpListener(std::move(tcp));
    ASSERT_TRUE(added.has_value()) << added.error().message();
  }

  UniqueFd UdpClient() { return Client(SOCK_DGRAM, udp_port_); }
  UniqueFd TcpClient() { return Client(SOCK_STREAM, tcp_port_); }

  // Runs the loop until `fd` (a connected UDP client) receives a datagram.
  std::optional<Response> ReceiveUdp(int fd, milliseconds limit = milliseconds(5000)) {
    std::vector<uint8_t> buffer(65536);
    ssize_t n = -1;
    RunUntil(
        *loop_,
        [&] {
          if (n < 0) {  // RunUntil asks once more after the loop stopped
            n = recv(fd, buffer.data(), buffer.size(), MSG_DONTWAIT);
          }
          return n >= 0;
        },
        limit);
    if (n < 0) {
      return std::nullopt;
    }
    return DecodeResponse(std::span<const uint8_t>(buffer.data(), static_cast<size_t>(n)));
  }

  // One query over UDP from a fresh client.
  std::optional<Response> AskUdp(const std::vector<uint8_t>& query) {
    UniqueFd client = UdpClient();
    SendAll(client.get(), query);
    return ReceiveUdp(client.get());
  }
  std::optional<Response> AskUdp(std::string_view name, uint16_t qtype = dns::kTypeA) {
    return AskUdp(MakeQuery(0x4242, name, qtype));
  }

  // Runs the loop until `count` whole frames arrived on `fd` (a TCP client) or it closed.
  std::vector<Response> ReceiveTcp(int fd, size_t count, milliseconds limit = milliseconds(5000)) {
    std::vector<uint8_t> in;
    std::vector<Response> out;
    bool closed = false;
    RunUntil(
        *loop_,
        [&] {
          if (closed || out.size() >= count) {
            return true;  // RunUntil asks once more after the loop stopped
          }
          uint8_t chunk[4096];
          ssize_t n = recv(fd, chunk, sizeof chunk, MSG_DONTWAIT);
          if (n == 0 || (n < 0 && errno != EAGAIN)) {
            closed = true;
          } else if (n > 0) {
            in.insert(in.end(), chunk, chunk + n);
          }
          while (in.size() >= 2) {
            const size_t length = size_t{in[0]} << 8 | in[1];
            if (in.size() < 2 + length) {
              break;
            }
            auto response = DecodeResponse(std::span<const uint8_t>(in.data() + 2, length));
            EXPECT_TRUE(response.has_value()) << "undecodable response";
            if (response) {
              out.push_back(*response);
            }
            in.erase(in.begin(), in.begin() + static_cast<ptrdiff_t>(2 + length));
          }
          return closed || out.size() >= count;
        },
        limit);
    EXPECT_TRUE(in.empty()) << in.size() << " bytes of a partial frame";
    return out;
  }

  // Runs the loop until the stub closed `fd` (a TCP client): read() says EOF or reset.
  bool WaitClosed(int fd, milliseconds limit = milliseconds(5000)) {
    return RunUntil(
        *loop_,
        [&] {
          uint8_t byte;
          const ssize_t n = recv(fd, &byte, 1, MSG_DONTWAIT);
          return n == 0 || (n < 0 && errno != EAGAIN);  // after EOF or a reset, it stays so
        },
        limit);
  }

  // fds the stub has registered: the UDP socket, the listener, and one per TCP connection.
  size_t TcpConnections() const { return loop_->handler_count() - 2; }

  std::unique_ptr<EventLoop> loop_;
  std::unique_ptr<FakeResolver> resolver_;
  std::unique_ptr<DnsAnswers> table_;
  std::unique_ptr<DnsStub> stub_;
  uint16_t udp_port_ = 0;
  uint16_t tcp_port_ = 0;
  std::map<std::string, std::string> refused_;
  std::vector<std::pair<std::string, std::string>> denied_;
  size_t policy_calls_ = 0;
};

// --- Policy and answers ------------------------------------------------------------------------

TEST_F(DnsStubTest, AllowedNameGetsSyntheticAddress) {
  Start({.ttl = 30});
  auto r = AskUdp("allowed.test");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->id, 0x4242);
  EXPECT_TRUE(r->is_response());
  EXPECT_EQ(r->rcode(), kNoError);
  EXPECT_EQ(r->answers, std::vector<std::string>{"198.18.0.1"});
  EXPECT_EQ(r->ttls, std::vector<uint32_t>{30});
  EXPECT_EQ(resolver_->calls("allowed.test"), 1u);
  EXPECT_EQ(table_->NamesFor(*ParseIpAddress("198.18.0.1")),
            std::vector<std::string>{"allowed.test"});
  EXPECT_EQ(stub_->stats().queries, 1u);
  EXPECT_EQ(stub_->stats().answered, 1u);
}

// Clients that refuse private destinations (SSRF guards) must see an allowed name's real,
// public address; capture maps it back to the name.
TEST_F(DnsStubTest, AllowedNameGetsTheRealAddressesTheProxyMayShow) {
  resolver_->SetAddresses("cdn.test", {"93.184.216.34", "10.1.2.3", "2001:db8::1",
                                       "::ffff:93.184.216.35", "93.184.216.34"});
  resolver_->SetAddresses("shared.test", {"93.184.216.34"});
  std::vector<std::string> asked;
  Start({.may_show = [&](const IpAddress& a) {
    asked.push_back(FormatIpAddress(a));
    return FormatIpAddress(a) != "10.1.2.3";
  }});
  auto r = AskUdp("cdn.test");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->rcode(), kNoError);
  // In the resolver's order, unmapped, without duplicates; IPv6 is never shown (AAAA is NODATA).
  EXPECT_EQ(r->answers, (std::vector<std::string>{"93.184.216.34", "93.184.216.35"}));
  EXPECT_EQ(asked, (std::vector<std::string>{"93.184.216.34", "10.1.2.3", "93.184.216.35"}));
  auto shared = AskUdp("shared.test");
  ASSERT_TRUE(shared);
  EXPECT_EQ(shared->answers, std::vector<std::string>{"93.184.216.34"});
  EXPECT_EQ(table_->NamesFor(*ParseIpAddress("93.184.216.34")),
            (std::vector<std::string>{"cdn.test", "shared.test"}));
  EXPECT_EQ(table_->NamesFor(*ParseIpAddress("10.1.2.3")), std::vector<std::string>{});
  auto aaaa = AskUdp("cdn.test", dns::kTypeAaaa);
  ASSERT_TRUE(aaaa);
  EXPECT_EQ(aaaa->rcode(), kNoError);
  EXPECT_TRUE(aaaa->answers.empty());
  EXPECT_EQ(stub_->stats().answered, 2u);
}

TEST_F(DnsStubTest, ANameWithNothingToShowGetsASyntheticAddress) {
  resolver_->SetAddresses("loopback.test", {"127.0.0.1"});
  Start({.may_show = [](const IpAddress&) { return false; }});
  auto r = AskUdp("loopback.test");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->answers, std::vector<std::string>{"198.18.0.1"});
  EXPECT_EQ(table_->NamesFor(*ParseIpAddress("198.18.0.1")),
            std::vector<std::string>{"loopback.test"});
}

TEST_F(DnsStubTest, AtMostEightRealAddressesAreShown) {
  std::vector<std::string> many;
  for (int i = 1; i <= 20; ++i) many.push_back("93.184.216." + std::to_string(i));
  resolver_->SetAddresses("many.test", many);
  Start({.may_show = [](const IpAddress&) { return true; }});
  auto r = AskUdp("many.test");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->answers.size(), DnsStub::kMaxShownAddresses);
  EXPECT_EQ(r->answers.back(), "93.184.216.8");
  EXPECT_EQ(table_->NamesFor(*ParseIpAddress("93.184.216.9")), std::vector<std::string>{});
}

TEST_F(DnsStubTest, SameNameSameAddressNextNameNextAddress) {
  Start();
  auto first = AskUdp("allowed.test");
  auto again = AskUdp("allowed.test");
  auto second = AskUdp("other.test");
  ASSERT_TRUE(first && again && second);
  EXPECT_EQ(first->answers, std::vector<std::string>{"198.18.0.1"});
  EXPECT_EQ(again->answers, std::vector<std::string>{"198.18.0.1"});
  EXPECT_EQ(second->answers, std::vector<std::string>{"198.18.0.2"});
}

TEST_F(DnsStubTest, QuestionCaseIsEchoedAndNameCanonicalised) {
  Start();
  auto r = AskUdp("AlLoWeD.TeSt");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->answers, std::vector<std::string>{"198.18.0.1"});
  EXPECT_EQ(table_->NamesFor(*ParseIpAddress("198.18.0.1")),
            std::vector<std::string>{"allowed.test"});
}

TEST_F(DnsStubTest, AaaaForAllowedNameIsNoData) {
  Start();
  auto r = AskUdp("allowed.test", dns::kTypeAaaa);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->rcode(), kNoError);
  EXPECT_EQ(r->ancount, 0);
  EXPECT_EQ(resolver_->calls("allowed.test"), 1u);  // resolved for real all the same
  EXPECT_EQ(table_->size(), 0u);                    // but no address spent on it
  EXPECT_EQ(stub_->stats().answered, 0u);
}

TEST_F(DnsStubTest, OtherTypesAndClassesAreNoData) {
  Start();
  QuerySpec mx;
  mx.name = "allowed.test";
  mx.qtype = 15;  // MX
  auto r = AskUdp(MakeQuery(mx));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->rcode(), kNoError);
  EXPECT_EQ(r->ancount, 0);

  QuerySpec chaos;
  chaos.name = "allowed.test";
  chaos.qclass = 3;  // CH
  r = AskUdp(MakeQuery(chaos));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->rcode(), kNoError);
  EXPECT_EQ(r->ancount, 0);
  EXPECT_EQ(table_->size(), 0u);
}

TEST_F(DnsStubTest, RefusedNameIsNxDomainWithoutResolving) {
  refused_["denied.test"] = "domain not in allowedDomains";
  Start();
  auto r = AskUdp("denied.test");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->rcode(), kNxDomain);
  EXPECT_EQ(r->ancount, 0);
  EXPECT_EQ(resolver_->calls(), 0u);
  ASSERT_EQ(denied_.size(), 1u);
  EXPECT_EQ(denied_[0].first, "denied.test");
  EXPECT_EQ(denied_[0].second, "domain not in allowedDomains");
  EXPECT_EQ(stub_->stats().refused, 1u);
  EXPECT_EQ(table_->size(), 0u);

  // Every type, not only A.
  r = AskUdp("denied.test", dns::kTypeAaaa);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->rcode(), kNxDomain);
  EXPECT_EQ(denied_.size(), 2u);
  EXPECT_EQ(resolver_->calls(), 0u);
}

TEST_F(DnsStubTest, WithoutPolicyEverythingIsRefused) {
  table_ = std::make_unique<DnsAnswers>();
  stub_ = std::make_unique<DnsStub>(*loop_, *resolver_, *table_, DnsStub::Options{});
  UniqueFd udp = BoundSocket(SOCK_DGRAM);
  udp_port_ = LocalPort(udp.get());
  ASSERT_TRUE(stub_->AddUdpSocket(std::move(udp)).has_value());
  auto r = AskUdp("allowed.test");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->rcode(), kNxDomain);
  EXPECT_EQ(resolver_->calls(), 0u);
}

TEST_F(DnsStubTest, PolicyChangeAppliesToTheNextQuery) {
  Start();
  auto r = AskUdp("allowed.test");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->answers, std::vector<std::string>{"198.18.0.1"});

  refused_["allowed.test"] = "denied by deniedDomains";
  r = AskUdp("allowed.test");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->rcode(), kNxDomain);
  ASSERT_EQ(denied_.size(), 1u);
  EXPECT_EQ(denied_[0].second, "denied by deniedDomains");

  refused_.clear();
  r = AskUdp("allowed.test");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->answers, std::vector<std::string>{"198.18.0.1"});
  EXPECT_EQ(policy_calls_, 3u);
}

TEST_F(DnsStubTest, NameTheResolverDoesNotFindIsNxDomain) {
  Start();
  auto r = AskUdp("missing.test");  // FakeResolver's default: kNotFound
  ASSERT_TRUE(r);
  EXPECT_EQ(r->rcode(), kNxDomain);
  EXPECT_EQ(resolver_->calls("missing.test"), 1u);
  EXPECT_EQ(stub_->stats().failed, 1u);
  EXPECT_EQ(table_->size(), 0u);
}

TEST_F(DnsStubTest, ResolverFailuresAreServFail) {
  Start();
  for (ResolveError error :
       {ResolveError::kTimeout, ResolveError::kServerFailure, ResolveError::kOverloaded,
        ResolveError::kBadName, ResolveError::kInternal}) {
    SCOPED_TRACE(std::string(ResolveErrorName(error)));
    resolver_->Set("flaky.test", ResolveResult{{}, error, ""});
    auto r = AskUdp("flaky.test");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->rcode(), kServFail);
    EXPECT_EQ(r->ancount, 0);
  }
  EXPECT_EQ(stub_->stats().failed, 5u);
  EXPECT_EQ(table_->size(), 0u);
}

TEST_F(DnsStubTest, FullTableIsServFail) {
  Start({}, /*capacity=*/1);
  auto r = AskUdp("allowed.test");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->answers, std::vector<std::string>{"198.18.0.1"});
  r = AskUdp("other.test");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->rcode(), kServFail);
  EXPECT_EQ(r->ancount, 0);
  // The name that has an address keeps it.
  r = AskUdp("allowed.test");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->answers, std::vector<std::string>{"198.18.0.1"});
}

TEST_F(DnsStubTest, EdnsQueryGetsOptBack) {
  Start();
  QuerySpec spec;
  spec.name = "allowed.test";
  spec.edns = true;
  auto r = AskUdp(MakeQuery(spec));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->arcount, 1);
  EXPECT_EQ(r->answers, std::vector<std::string>{"198.18.0.1"});
}

// --- Coalescing and limits -----------------------------------------------------------------------

TEST_F(DnsStubTest, ConcurrentQueriesForOneNameShareOneResolution) {
  resolver_->SetAddresses("slow.test", {"192.0.2.9"}, milliseconds(100));
  Start();
  UniqueFd client = UdpClient();
  for (uint16_t id = 1; id <= 3; ++id) {
    SendAll(client.get(), MakeQuery(id, "slow.test"));
  }
  QuerySpec aaaa;
  aaaa.id = 4;
  aaaa.name = "slow.test";
  aaaa.qtype = dns::kTypeAaaa;
  SendAll(client.get(), MakeQuery(aaaa));

  std::vector<Response> got;
  for (int i = 0; i < 4; ++i) {
    auto r = ReceiveUdp(client.get());
    ASSERT_TRUE(r) << i;
    got.push_back(*r);
  }
  EXPECT_EQ(resolver_->calls("slow.test"), 1u);
  std::vector<uint16_t> ids;
  for (const Response& r : got) {
    ids.push_back(r.id);
    EXPECT_EQ(r.rcode(), kNoError);
    if (r.id != 4) {
      EXPECT_EQ(r.answers, std::vector<std::string>{"198.18.0.1"});
    } else {
      EXPECT_EQ(r.ancount, 0);
    }
  }
  EXPECT_EQ(ids, (std::vector<uint16_t>{1, 2, 3, 4}));  // answered in arrival order

  // The lookup is over: the next query resolves again.
  ASSERT_TRUE(AskUdp("slow.test"));
  EXPECT_EQ(resolver_->calls("slow.test"), 2u);
}

TEST_F(DnsStubTest, MaxInflightExceededIsServFailAtOnce) {
  resolver_->SetAddresses("slow1.test", {"192.0.2.1"}, milliseconds(300));
  resolver_->SetAddresses("slow2.test", {"192.0.2.2"}, milliseconds(300));
  Start({.max_inflight = 2});
  UniqueFd client = UdpClient();
  SendAll(client.get(), MakeQuery(1, "slow1.test"));
  SendAll(client.get(), MakeQuery(2, "slow2.test"));
  SendAll(client.get(), MakeQuery(3, "allowed.test"));

  const auto start = std::chrono::steady_clock::now();
  auto r = ReceiveUdp(client.get());
  ASSERT_TRUE(r);
  EXPECT_EQ(r->id, 3);
  EXPECT_EQ(r->rcode(), kServFail);
  EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(250));
  EXPECT_EQ(resolver_->calls("allowed.test"), 0u);

  for (uint16_t id : std::vector<uint16_t>{1, 2}) {
    r = ReceiveUdp(client.get());
    ASSERT_TRUE(r);
    EXPECT_EQ(r->id, id);
    EXPECT_EQ(r->rcode(), kNoError);
    EXPECT_EQ(r->ancount, 1);
  }
  // Room again.
  r = AskUdp("allowed.test");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->rcode(), kNoError);
}

TEST_F(DnsStubTest, CoalescedWaitersCountAgainstMaxInflight) {
  resolver_->SetAddresses("slow.test", {"192.0.2.1"}, milliseconds(200));
  Start({.max_inflight = 2});
  UniqueFd client = UdpClient();
  for (uint16_t id = 1; id <= 3; ++id) {
    SendAll(client.get(), MakeQuery(id, "slow.test"));
  }
  auto r = ReceiveUdp(client.get());
  ASSERT_TRUE(r);
  EXPECT_EQ(r->id, 3);
  EXPECT_EQ(r->rcode(), kServFail);
  for (uint16_t id : std::vector<uint16_t>{1, 2}) {
    r = ReceiveUdp(client.get());
    ASSERT_TRUE(r);
    EXPECT_EQ(r->id, id);
  }
  EXPECT_EQ(resolver_->calls("slow.test"), 1u);
}

// --- Malformed input (the decisions are dns/message.h's) -----------------------------------------

TEST_F(DnsStubTest, MalformedQueryIsFormErr) {
  Start();
  QuerySpec spec;
  spec.id = 0x7777;
  spec.name = "allowed.test";
  spec.qdcount = 2;  // but only one question follows
  auto r = AskUdp(MakeQuery(spec));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->id, 0x7777);
  EXPECT_EQ(r->rcode(), kFormErr);
  EXPECT_EQ(resolver_->calls(), 0u);
  EXPECT_EQ(policy_calls_, 0u);
}

TEST_F(DnsStubTest, ShortDatagramsAndResponsesAreDropped) {
  Start();
  UniqueFd client = UdpClient();
  SendAll(client.get(), {0x12, 0x34, 0x01});  // shorter than a header
  QuerySpec response;
  response.name = "allowed.test";
  response.flags = 0x8100;  // QR: a response must never be answered (no reflection loops)
  SendAll(client.get(), MakeQuery(response));
  EXPECT_FALSE(ReceiveUdp(client.get(), milliseconds(100)));
  EXPECT_EQ(stub_->stats().queries, 0u);
  // The socket still works.
  SendAll(client.get(), MakeQuery(9, "allowed.test"));
  auto r = ReceiveUdp(client.get());
  ASSERT_TRUE(r);
  EXPECT_EQ(r->id, 9);
}

TEST_F(DnsStubTest, IpLiteralQuestionIsRefusedByTheParser) {
  Start();
  auto r = AskUdp("192.0.2.1");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->rcode(), 5);  // REFUSED
  EXPECT_EQ(policy_calls_, 0u);
  EXPECT_EQ(resolver_->calls(), 0u);
}

// --- TCP (RFC 7766) ------------------------------------------------------------------------------

TEST_F(DnsStubTest, TcpQuery) {
  Start();
  UniqueFd client = TcpClient();
  SendAll(client.get(), Framed(MakeQuery(0x0101, "allowed.test")));
  auto got = ReceiveTcp(client.get(), 1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].id, 0x0101);
  EXPECT_EQ(got[0].answers, std::vector<std::string>{"198.18.0.1"});
  EXPECT_EQ(TcpConnections(), 1u);  // kept open for more queries
}

TEST_F(DnsStubTest, TcpPipelinedQueriesAreAnsweredInOrder) {
  refused_["denied.test"] = "no";
  resolver_->SetAddresses("slow.test", {"192.0.2.1"}, milliseconds(50));
  Start();
  UniqueFd client = TcpClient();
  std::vector<uint8_t> both = Framed(MakeQuery(1, "slow.test"));
  std::vector<uint8_t> second = Framed(MakeQuery(2, "denied.test"));
  std::vector<uint8_t> third = Framed(MakeQuery(3, "other.test"));
  both.insert(both.end(), second.begin(), second.end());
  both.insert(both.end(), third.begin(), third.end());
  SendAll(client.get(), both);
  auto got = ReceiveTcp(client.get(), 3);
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0].id, 1);
  EXPECT_EQ(got[0].answers, std::vector<std::string>{"198.18.0.1"});
  EXPECT_EQ(got[1].id, 2);
  EXPECT_EQ(got[1].rcode(), kNxDomain);
  EXPECT_EQ(got[2].id, 3);
  EXPECT_EQ(got[2].answers, std::vector<std::string>{"198.18.0.2"});
}

TEST_F(DnsStubTest, TcpQuerySplitAcrossWrites) {
  Start();
  UniqueFd client = TcpClient();
  const std::vector<uint8_t> frame = Framed(MakeQuery(0x0202, "allowed.test"));
  // One byte of the length, then the rest of the length and part of the header, then the rest.
  const std::vector<size_t> cuts = {1, 7, frame.size()};
  size_t from = 0;
  for (size_t cut : cuts) {
    SendAll(client.get(), std::vector<uint8_t>(frame.begin() + static_cast<ptrdiff_t>(from),
                                               frame.begin() + static_cast<ptrdiff_t>(cut)));
    from = cut;
    if (cut != frame.size()) {
      RunFor(*loop_, milliseconds(20));
    }
  }
  auto got = ReceiveTcp(client.get(), 1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].id, 0x0202);
  EXPECT_EQ(got[0].answers, std::vector<std::string>{"198.18.0.1"});
}

TEST_F(DnsStubTest, TcpClientHalfCloseStillGetsItsAnswers) {
  resolver_->SetAddresses("slow.test", {"192.0.2.1"}, milliseconds(30));
  Start();
  UniqueFd client = TcpClient();
  std::vector<uint8_t> bytes = Framed(MakeQuery(1, "slow.test"));
  std::vector<uint8_t> second = Framed(MakeQuery(2, "allowed.test"));
  bytes.insert(bytes.end(), second.begin(), second.end());
  SendAll(client.get(), bytes);
  ASSERT_EQ(shutdown(client.get(), SHUT_WR), 0);
  auto got = ReceiveTcp(client.get(), 3);  // 3: wait for the close after the two answers
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].id, 1);
  EXPECT_EQ(got[1].id, 2);
  EXPECT_TRUE(WaitClosed(client.get()));
  EXPECT_TRUE(RunUntil(*loop_, [&] { return TcpConnections() == 0; }));
}

TEST_F(DnsStubTest, TcpZeroLengthFrameClosesTheConnection) {
  Start();
  UniqueFd client = TcpClient();
  SendAll(client.get(), {0, 0});
  EXPECT_TRUE(WaitClosed(client.get()));
}

TEST_F(DnsStubTest, TcpMalformedQueryIsFormErrAndTheConnectionStays) {
  Start();
  UniqueFd client = TcpClient();
  QuerySpec bad;
  bad.id = 5;
  bad.qdcount = 0;  // a question follows that the header does not announce: trailing bytes
  SendAll(client.get(), Framed(MakeQuery(bad)));
  SendAll(client.get(), Framed(MakeQuery(6, "allowed.test")));
  auto got = ReceiveTcp(client.get(), 2);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].id, 5);
  EXPECT_EQ(got[0].rcode(), kFormErr);
  EXPECT_EQ(got[1].id, 6);
  EXPECT_EQ(got[1].rcode(), kNoError);
}

TEST_F(DnsStubTest, TcpLargestFrameIsBufferedWhole) {
  Start();
  UniqueFd client = TcpClient();
  // A query padded to the largest message a frame can carry: read in pieces up to the buffer's
  // limit, then FORMERR for the bytes after the question.
  std::vector<uint8_t> message = MakeQuery(0x0303, "allowed.test");
  message.resize(kDnsTcpMessageBytes, 0);
  std::vector<uint8_t> bytes = Framed(message);
  const std::vector<uint8_t> next = Framed(MakeQuery(0x0304, "allowed.test"));
  bytes.insert(bytes.end(), next.begin(), next.end());
  // The client writes from a thread: the stub runs on this one and the socket buffers may not
  // take 64 KiB at once.
  std::thread writer([&] {
    int fd = client.get();
    (void)fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    size_t sent = 0;
    while (sent < bytes.size()) {
      const ssize_t n = send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) {
        break;
      }
      sent += static_cast<size_t>(n);
    }
  });
  auto got = ReceiveTcp(client.get(), 2);
  writer.join();
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].id, 0x0303);
  EXPECT_EQ(got[0].rcode(), kFormErr);
  EXPECT_EQ(got[1].id, 0x0304);
  EXPECT_EQ(got[1].answers, std::vector<std::string>{"198.18.0.1"});
}

TEST_F(DnsStubTest, TcpConnectionLimit) {
  Start({.max_tcp_connections = 1});
  UniqueFd first = TcpClient();
  SendAll(first.get(), Framed(MakeQuery(1, "allowed.test")));
  ASSERT_EQ(ReceiveTcp(first.get(), 1).size(), 1u);  // accepted and served

  UniqueFd second = TcpClient();
  EXPECT_TRUE(WaitClosed(second.get()));
  EXPECT_EQ(TcpConnections(), 1u);

  // The first still works; once it is gone there is room again.
  SendAll(first.get(), Framed(MakeQuery(2, "allowed.test")));
  auto got = ReceiveTcp(first.get(), 1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].id, 2);
  first.reset();
  EXPECT_TRUE(RunUntil(*loop_, [&] { return TcpConnections() == 0; }));
  UniqueFd third = TcpClient();
  SendAll(third.get(), Framed(MakeQuery(3, "allowed.test")));
  ASSERT_EQ(ReceiveTcp(third.get(), 1).size(), 1u);
}

TEST_F(DnsStubTest, TcpIdleConnectionTimesOut) {
  Start({.tcp_query_timeout = milliseconds(100)});
  UniqueFd idle = TcpClient();
  UniqueFd partial = TcpClient();
  const std::vector<uint8_t> frame = Framed(MakeQuery(1, "allowed.test"));
  SendAll(partial.get(), std::vector<uint8_t>(frame.begin(), frame.begin() + 5));
  const auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(WaitClosed(idle.get()));
  EXPECT_TRUE(WaitClosed(partial.get()));
  EXPECT_GE(std::chrono::steady_clock::now() - start, milliseconds(90));
  EXPECT_EQ(TcpConnections(), 0u);
}

TEST_F(DnsStubTest, TcpTimeoutRestartsForEveryQuery) {
  Start({.tcp_query_timeout = milliseconds(150)});
  UniqueFd client = TcpClient();
  for (uint16_t id = 1; id <= 3; ++id) {
    RunFor(*loop_, milliseconds(100));  // less than the timeout each time, more in total
    SendAll(client.get(), Framed(MakeQuery(id, "allowed.test")));
    auto got = ReceiveTcp(client.get(), 1);
    ASSERT_EQ(got.size(), 1u) << id;
    EXPECT_EQ(got[0].id, id);
  }
}

TEST_F(DnsStubTest, TcpTimeoutWhileResolvingCancelsTheLookup) {
  resolver_->SetAddresses("slow.test", {"192.0.2.1"}, milliseconds(2000));
  Start({.tcp_query_timeout = milliseconds(100)});
  UniqueFd client = TcpClient();
  SendAll(client.get(), Framed(MakeQuery(1, "slow.test")));
  EXPECT_TRUE(WaitClosed(client.get()));
  EXPECT_EQ(resolver_->pending(), 0u);
  EXPECT_EQ(resolver_->cancels(), 1u);
}

TEST_F(DnsStubTest, TcpClientResetWhileResolvingCancelsTheLookup) {
  resolver_->SetAddresses("slow.test", {"192.0.2.1"}, milliseconds(2000));
  Start();
  UniqueFd client = TcpClient();
  SendAll(client.get(), Framed(MakeQuery(1, "slow.test")));
  ASSERT_TRUE(RunUntil(*loop_, [&] { return resolver_->pending() == 1; }));
  const linger reset{1, 0};
  ASSERT_EQ(setsockopt(client.get(), SOL_SOCKET, SO_LINGER, &reset, sizeof reset), 0);
  client.reset();  // RST
  EXPECT_TRUE(RunUntil(*loop_, [&] { return TcpConnections() == 0; }));
  EXPECT_EQ(resolver_->pending(), 0u);
  EXPECT_EQ(resolver_->cancels(), 1u);
}

TEST_F(DnsStubTest, TcpClientGoneWhileSharedLookupPendsKeepsTheOthers) {
  resolver_->SetAddresses("slow.test", {"192.0.2.1"}, milliseconds(200));
  Start();
  UniqueFd udp = UdpClient();
  SendAll(udp.get(), MakeQuery(7, "slow.test"));
  UniqueFd tcp = TcpClient();
  SendAll(tcp.get(), Framed(MakeQuery(8, "slow.test")));
  ASSERT_TRUE(RunUntil(*loop_, [&] { return stub_->stats().queries == 2; }));
  const linger reset{1, 0};
  ASSERT_EQ(setsockopt(tcp.get(), SOL_SOCKET, SO_LINGER, &reset, sizeof reset), 0);
  tcp.reset();
  auto r = ReceiveUdp(udp.get());
  ASSERT_TRUE(r);
  EXPECT_EQ(r->id, 7);
  EXPECT_EQ(r->answers, std::vector<std::string>{"198.18.0.1"});
  EXPECT_EQ(resolver_->calls(), 1u);
  EXPECT_EQ(resolver_->cancels(), 0u);
}

// --- Lifetime ------------------------------------------------------------------------------------

TEST_F(DnsStubTest, DestroyingTheStubWithLookupsPendingIsSafe) {
  resolver_->SetAddresses("slow.test", {"192.0.2.1"}, milliseconds(200));
  resolver_->SetAddresses("slow2.test", {"192.0.2.2"}, milliseconds(200));
  Start();
  UniqueFd udp = UdpClient();
  SendAll(udp.get(), MakeQuery(1, "slow.test"));
  UniqueFd tcp = TcpClient();
  SendAll(tcp.get(), Framed(MakeQuery(2, "slow2.test")));
  ASSERT_TRUE(RunUntil(*loop_, [&] { return resolver_->pending() == 2; }));

  stub_.reset();
  EXPECT_EQ(resolver_->pending(), 0u);
  EXPECT_EQ(resolver_->cancels(), 2u);
  EXPECT_EQ(loop_->handler_count(), 0u);  // every fd unregistered
  EXPECT_EQ(loop_->timer_count(), 0u);    // the TCP deadline and the resolver's timers
  RunFor(*loop_, milliseconds(300));      // nothing may call into the dead stub
  EXPECT_TRUE(WaitClosed(tcp.get()));
}

TEST_F(DnsStubTest, AddRejectsWrongSockets) {
  Start();
  UniqueFd stream = BoundSocket(SOCK_STREAM);
  auto r = stub_->AddUdpSocket(std::move(stream));
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), Errc::kInvalidArgument);
  EXPECT_NE(r.error().message().find("SOCK_DGRAM"), std::string::npos) << r.error().message();

  UniqueFd not_listening = BoundSocket(SOCK_STREAM);
  r = stub_->AddTcpListener(std::move(not_listening));
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().message().find("not listening"), std::string::npos) << r.error().message();
}

// --- glibc's stub resolver against ours ----------------------------------------------------------

// res_nquery() in another thread (it blocks), aimed at the stub through a private res_state; the
// loop runs on the test's thread meanwhile.
struct GlibcAnswer {
  int length = -1;
  int h_errno_value = 0;
  std::vector<std::string> addresses;
  int rcode = -1;
};

GlibcAnswer GlibcQuery(EventLoop& loop, uint16_t port, const char* name, int type) {
  GlibcAnswer out;
  std::atomic<bool> done{false};
  std::thread worker([&] {
    struct __res_state state {};
    if (res_ninit(&state) != 0) {
      done = true;
      return;
    }
    state.nscount = 1;
    state.nsaddr_list[0] = Loopback(port);
    state.retrans = 2;
    state.retry = 1;
    state.options &= ~static_cast<unsigned long>(RES_DNSRCH | RES_DEFNAMES);
    unsigned char answer[NS_PACKETSZ];
    out.length = res_nquery(&state, name, ns_c_in, type, answer, static_cast<int>(sizeof answer));
    out.h_errno_value = state.res_h_errno;
    if (out.length > 0) {
      ns_msg msg;
      if (ns_initparse(answer, out.length, &msg) == 0) {
        out.rcode = ns_msg_getflag(msg, ns_f_rcode);
        for (int i = 0; i < ns_msg_count(msg, ns_s_an); ++i) {
          ns_rr rr;
          if (ns_parserr(&msg, ns_s_an, i, &rr) == 0 && ns_rr_type(rr) == ns_t_a &&
              ns_rr_rdlen(rr) == 4) {
            char text[INET_ADDRSTRLEN];
            inet_ntop(AF_INET, ns_rr_rdata(rr), text, sizeof text);
            out.addresses.emplace_back(text);
          }
        }
      }
    }
    res_nclose(&state);
    done = true;
  });
  RunUntil(loop, [&] { return done.load(); });
  worker.join();
  return out;
}

TEST_F(DnsStubTest, GlibcAcceptsOurAnswers) {
  refused_["denied.test"] = "no";
  Start();
  GlibcAnswer a = GlibcQuery(*loop_, udp_port_, "allowed.test", ns_t_a);
  ASSERT_GT(a.length, 0) << "h_errno " << a.h_errno_value;
  EXPECT_EQ(a.rcode, ns_r_noerror);
  EXPECT_EQ(a.addresses, std::vector<std::string>{"198.18.0.1"});

  GlibcAnswer nodata = GlibcQuery(*loop_, udp_port_, "allowed.test", ns_t_aaaa);
  EXPECT_EQ(nodata.length, -1);
  EXPECT_EQ(nodata.h_errno_value, NO_DATA);

  GlibcAnswer refused = GlibcQuery(*loop_, udp_port_, "denied.test", ns_t_a);
  EXPECT_EQ(refused.length, -1);
  EXPECT_EQ(refused.h_errno_value, HOST_NOT_FOUND);
}

}  // namespace
}  // namespace srt::proxy
