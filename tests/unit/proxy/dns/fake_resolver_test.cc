// SPDX-License-Identifier: Apache-2.0
// Tests of FakeResolver, the resolver that session tests script.
#include "fake_resolver.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <memory>

#include "dns/resolver.h"
#include "loop/event_loop.h"
#include "resolve_waiter.h"

namespace srt::proxy::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using namespace std::chrono_literals;

class FakeResolverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto loop = EventLoop::Create();
    ASSERT_TRUE(loop.has_value());
    loop_ = std::move(loop).value();
    fake_ = std::make_unique<FakeResolver>(*loop_);
  }
  std::unique_ptr<EventLoop> loop_;
  std::unique_ptr<FakeResolver> fake_;
};

TEST_F(FakeResolverTest, AnswersFromTheTableCaseInsensitively) {
  fake_->SetAddresses("a.test", {"192.0.2.1", "2001:db8::1"});
  ResolveResult r = ResolveNow(*loop_, *fake_, "A.TEST.");
  ASSERT_TRUE(r.ok());
  EXPECT_THAT(Texts(r), ElementsAre("192.0.2.1", "2001:db8::1"));
  EXPECT_EQ(fake_->calls(), 1u);
  EXPECT_EQ(fake_->calls("a.test"), 1u);
  EXPECT_EQ(fake_->pending(), 0u);
}

TEST_F(FakeResolverTest, UnknownNamesGetTheDefault) {
  ResolveResult r = ResolveNow(*loop_, *fake_, "nx.test");
  EXPECT_EQ(r.error, ResolveError::kNotFound);
  EXPECT_THAT(r.error_text, HasSubstr("'nx.test'"));
  ResolveResult timeout;
  timeout.error = ResolveError::kTimeout;
  fake_->SetDefault(timeout);
  EXPECT_EQ(ResolveNow(*loop_, *fake_, "other.test").error, ResolveError::kTimeout);
}

TEST_F(FakeResolverTest, NeverCallsBackInsideResolveAndHonoursTheDelay) {
  fake_->SetAddresses("slow.test", {"192.0.2.1"}, 50ms);
  bool inside = true;
  bool called = false;
  auto start = std::chrono::steady_clock::now();
  fake_->Resolve("slow.test", [&](const ResolveResult&) {
    EXPECT_FALSE(inside);
    called = true;
  });
  inside = false;
  EXPECT_EQ(fake_->pending(), 1u);
  EXPECT_TRUE(RunUntil(*loop_, [&] { return called; }));
  EXPECT_GE(std::chrono::steady_clock::now() - start, 50ms);
}

TEST_F(FakeResolverTest, CancelDropsTheCallback) {
  fake_->SetAddresses("a.test", {"192.0.2.1"}, 10ms);
  auto token = std::make_shared<int>(0);
  bool called = false;
  auto id = fake_->Resolve("a.test", [&called, token](const ResolveResult&) { called = true; });
  fake_->Cancel(id);
  EXPECT_EQ(token.use_count(), 1);
  EXPECT_EQ(fake_->cancels(), 1u);
  EXPECT_EQ(fake_->pending(), 0u);
  RunFor(*loop_, 30ms);
  EXPECT_FALSE(called);
  EXPECT_EQ(loop_->timer_count(), 0u);
}

TEST_F(FakeResolverTest, DestructionDropsPendingCallbacks) {
  fake_->SetAddresses("a.test", {"192.0.2.1"}, 10ms);
  bool called = false;
  fake_->Resolve("a.test", [&](const ResolveResult&) { called = true; });
  fake_.reset();
  EXPECT_EQ(loop_->timer_count(), 0u);
  RunFor(*loop_, 30ms);
  EXPECT_FALSE(called);
}

}  // namespace
}  // namespace srt::proxy::testing
