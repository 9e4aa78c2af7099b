// SPDX-License-Identifier: Apache-2.0
// inject/injector: sentinel -> real per host, real -> sentinel back, across every chunk split,
// with bounded hold-back.
#include "inject/injector.h"

#include <gtest/gtest.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdint>

#include "inject/exchange.h"

namespace srt::proxy::inject {
namespace {

DomainPattern Pattern(std::string_view text) {
  Result<DomainPattern> p = ParseDomainPattern(text, PatternList::kAllow);
  EXPECT_TRUE(p.has_value());
  return *p;
}

Host H(std::string_view text) { return *CanonicalizeHost(text); }

std::vector<CredentialSecret> Secrets() {
  return {
      {"env A",
       "fake_value_0123456789abcdefghijklmnopqr",
       "real_value_A_AAAAAAAAAAAAAAAAAAAAAAAAAA",
       {Pattern("api.example.com")}},
      {"env B",
       "fake_value_zyxwvutsrqponmlkjihgfedcba99",
       "real_value_B_BBBBBBBBBBBBBBBBBBBBBBBBBB",
       {Pattern("*.other.com")}},
      {"env SHORT",
       "fake_value_00000000-0000-4000-8000-000000000000",
       "short",
       {Pattern("api.example.com")}},
  };
}

// Feeds `in` cut at `cut` and returns the output.
std::string FeedSplit(Rewriter& r, std::string_view in, size_t cut) {
  std::string out;
  r.Feed(in.substr(0, cut), out);
  r.Feed(in.substr(cut), out);
  r.Finish(out);
  return out;
}

TEST(InjectorTest, SentinelBecomesRealOnlyForItsHostsAtEverySplit) {
  const std::vector<CredentialSecret> secrets = Secrets();
  auto injector = Injector::Build(secrets);
  const std::string& sa = secrets[0].sentinel;
  const std::string& sb = secrets[1].sentinel;
  const std::string in = "token=" + sa + "&other=" + sb + "&x=" + sa;
  const std::string want =
      "token=" + Secrets()[0].real + "&other=" + sb + "&x=" + Secrets()[0].real;
  for (size_t cut = 0; cut <= in.size(); ++cut) {
    auto r = injector->ForRequest(H("api.example.com"), {.fixed_length = true});
    EXPECT_EQ(FeedSplit(*r, in, cut), want) << cut;
    std::vector<Use> uses = r->uses();
    ASSERT_EQ(uses.size(), 2u);
    EXPECT_EQ(uses[0].name, "env A");
    EXPECT_EQ(uses[0].replaced, 2u);
    EXPECT_EQ(uses[1].name, "env B");
    EXPECT_EQ(uses[1].kept, 1u);
  }
  // B's host: B injected, A kept.
  auto r = injector->ForRequest(H("x.other.com"));
  EXPECT_EQ(r->Rewrite(in), "token=" + sa + "&other=" + Secrets()[1].real + "&x=" + sa);
  // Neither host.
  EXPECT_EQ(injector->ForRequest(H("example.com"))->Rewrite(in), in);
}

TEST(InjectorTest, ByteByByteAndHoldBackIsBounded) {
  auto injector = Injector::Build(Secrets());
  const std::string in =
      "xx" + Secrets()[0].sentinel.substr(0, 20) + "yy" + Secrets()[0].sentinel + "zz";
  auto r = injector->ForRequest(H("api.example.com"));
  std::string out;
  for (char c : in) {
    r->Feed(std::string_view(&c, 1), out);
    EXPECT_LT(r->held(), injector->max_pattern_length());
  }
  r->Finish(out);
  EXPECT_EQ(out, "xx" + Secrets()[0].sentinel.substr(0, 20) + "yy" + Secrets()[0].real + "zz");
}

TEST(InjectorTest, LengthChangingSentinelsOnlyWhereTheLengthMayChange) {
  const std::vector<CredentialSecret> secrets = Secrets();
  auto injector = Injector::Build(secrets);
  const std::string& s = secrets[2].sentinel;
  EXPECT_EQ(injector->ForRequest(H("api.example.com"), {.fixed_length = true})->Rewrite(s), s);
  EXPECT_EQ(injector->ForRequest(H("api.example.com"))->Rewrite(s), "short");
}

TEST(InjectorTest, ResponsesGetSentinelsBack) {
  auto injector = Injector::Build(Secrets());
  const std::string in = "echo " + Secrets()[0].real + " and " + Secrets()[1].real;
  for (size_t cut = 0; cut <= in.size(); ++cut) {
    auto r = injector->ForResponse();
    EXPECT_EQ(FeedSplit(*r, in, cut),
              "echo " + Secrets()[0].sentinel + " and " + Secrets()[1].sentinel)
        << cut;
  }
}

// Chunk data only is rewritten, in place: a pattern split across chunks is found, the framing
// (which sits between its pieces) is held back with it and passed on unchanged.
TEST(InjectorTest, FramedRewriterRewritesPayloadAcrossChunks) {
  const std::vector<CredentialSecret> secrets = Secrets();
  auto injector = Injector::Build(secrets);
  const std::string& real = secrets[0].real;  // 39 bytes
  const std::string framed =
      "3\r\nab" + real.substr(0, 1) + "\r\n" + "26\r\n" + real.substr(1) + "\r\n0\r\n\r\n";
  // Payload spans, as ChunkedDecoder reports them.
  const std::vector<std::pair<size_t, size_t>> spans = {{3, 6}, {12, 12 + 38}};
  for (size_t cut = 0; cut <= framed.size(); ++cut) {
    FramedRewriter r(injector->ForResponse());
    std::string out;
    std::vector<std::pair<size_t, size_t>> first, second;
    for (const auto& [b, e] : spans) {
      if (b < cut) first.emplace_back(b, std::min(e, cut));
      if (e > cut) second.emplace_back(std::max(b, cut) - cut, e - cut);
    }
    r.Feed(std::string_view(framed).substr(0, cut), first, out);
    r.Feed(std::string_view(framed).substr(cut), second, out);
    r.Finish(out);
    EXPECT_EQ(out, "3\r\nab" + secrets[0].sentinel.substr(0, 1) + "\r\n26\r\n" +
                       secrets[0].sentinel.substr(1) + "\r\n0\r\n\r\n")
        << cut;
  }
}

// CPU time this thread spends feeding `stream` through a rewriter for `pattern` (the stream
// never matches it). Checks that the hold-back stays under the pattern's length.
std::chrono::nanoseconds FeedCpuTime(const std::string& pattern, const std::string& stream) {
  auto injector = Injector::Build(
      {{"env P", pattern, std::string(pattern.size(), 'x'), {Pattern("api.example.com")}}});
  auto r = injector->ForRequest(H("api.example.com"));
  std::string out;
  timespec start{}, end{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &start);
  for (size_t at = 0; at < stream.size(); at += 64 * 1024) {
    out.clear();
    r->Feed(std::string_view(stream).substr(at, 64 * 1024), out);
    EXPECT_LT(r->held(), pattern.size());
  }
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &end);
  return std::chrono::seconds(end.tv_sec - start.tv_sec) +
         std::chrono::nanoseconds(end.tv_nsec - start.tv_nsec);
}

// A self-overlapping pattern keeps the automaton deep on every byte of a hostile stream: the
// work per byte must not grow with the pattern's length. A stream of 'a's through a 64 KiB
// pattern (65,536 'a's then 'b': the state stays 65,536 deep) against the same stream through
// "ab" (1 deep): the same steps per byte, so the same CPU time give or take the caches
// (measured: 0.7-1.2 times). A rewriter that moves its held-back bytes on each byte (an erase
// at the front) pays ~100 times more for the deep one; one that re-walks the prefix, more. The two
// are timed side by side, in turns, and each side's best turn is kept, so the machine's load and a
// sanitizer's cost fall out of the ratio; no time is asserted.
TEST(InjectorTest, DeepPrefixesCostConstantWorkPerByte) {
  const std::string deep = std::string(64 * 1024, 'a') + "b";
  const std::string stream(512 * 1024, 'a');
  auto best_deep = std::chrono::nanoseconds::max();
  auto best_shallow = std::chrono::nanoseconds::max();
  for (int turn = 0; turn < 3; ++turn) {
    best_deep = std::min(best_deep, FeedCpuTime(deep, stream));
    best_shallow = std::min(best_shallow, FeedCpuTime("ab", stream));
  }
  EXPECT_LT(best_deep.count(), 10 * std::max<int64_t>(best_shallow.count(), 1))
      << "deep " << best_deep.count() << " ns, shallow " << best_shallow.count() << " ns";
}

// One exchange: the header may change length, the bodies may not; totals per credential.
TEST(InjectorTest, ExchangeRewritesHeadersBodiesAndResponsesAndCounts) {
  const std::vector<CredentialSecret> secrets = Secrets();
  auto injector = Injector::Build(secrets);
  Exchange x(*injector, H("api.example.com"));
  EXPECT_EQ(x.RequestHeaderValue("token " + secrets[2].sentinel), "token short");
  std::string up;
  x.RequestBody("a=" + secrets[0].sentinel.substr(0, 9), nullptr, false, up);
  x.RequestBody(secrets[0].sentinel.substr(9) + "&s=" + secrets[2].sentinel, nullptr, true, up);
  EXPECT_EQ(up, "a=" + secrets[0].real + "&s=" + secrets[2].sentinel);
  std::string down;
  x.ResponseHead("HTTP/1.1 200 OK\r\nX-Echo: short\r\n\r\n", down);
  EXPECT_EQ(down, "HTTP/1.1 200 OK\r\nX-Echo: " + secrets[2].sentinel + "\r\n\r\n");
  down.clear();
  const std::string chunked = "3\r\nab" + secrets[0].real.substr(0, 1) + "\r\n26\r\n" +
                              secrets[0].real.substr(1) + "\r\n0\r\n\r\n";
  const DataSpans spans = {{3, 6}, {12, 50}};
  x.ResponseBody(chunked, &spans, true, down);
  EXPECT_EQ(down, "3\r\nab" + secrets[0].sentinel.substr(0, 1) + "\r\n26\r\n" +
                      secrets[0].sentinel.substr(1) + "\r\n0\r\n\r\n");
  EXPECT_FALSE(x.overflowed());
  std::vector<Totals> t = x.totals();
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0].name, "env SHORT");  // met first (the header)
  EXPECT_EQ(t[0].injected, 1u);
  EXPECT_EQ(t[0].kept, 1u);  // in the body, whose length cannot change
  EXPECT_EQ(t[0].masked, 1u);
  EXPECT_EQ(t[1].name, "env A");
  EXPECT_EQ(t[1].injected, 1u);
  EXPECT_EQ(t[1].masked, 1u);
}

TEST(InjectorTest, HostMatching) {
  EXPECT_TRUE(HostMatches(H("a.b.com"), {Pattern("*.b.com")}));
  EXPECT_FALSE(HostMatches(H("b.com"), {Pattern("*.b.com")}));
  EXPECT_FALSE(HostMatches(H("xb.com"), {Pattern("*.b.com")}));
  EXPECT_TRUE(HostMatches(H("API.Example.COM."), {Pattern("api.example.com")}));
  EXPECT_TRUE(HostMatches(H("127.0.0.1"), {Pattern("127.0.0.1")}));
  EXPECT_TRUE(HostMatches(H("[::1]"), {Pattern("[::1]")}));
}

TEST(InjectorTest, EmptyInjectorPassesThrough) {
  auto injector = Injector::Build({});
  EXPECT_TRUE(injector->empty());
  EXPECT_EQ(injector->ForRequest(H("a.com"))->Rewrite("anything"), "anything");
}

}  // namespace
}  // namespace srt::proxy::inject
