// SPDX-License-Identifier: Apache-2.0
// A warm sandbox's exec plans (init_protocol/exec_plan.h) and its init plan's kTagServe: what
// libsrt writes, decoded by the code srt-init and srt --serve run.
#include "init_protocol/exec_plan.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "launch/plan_writer.h"
#include "plan.h"

namespace srt {
namespace {

const uint8_t* Bytes(const std::string& s) { return reinterpret_cast<const uint8_t*>(s.data()); }

struct Decoded {
  wire::ExecPlan plan;
  std::vector<const char*> argv, envp;
};

bool Decode(const std::string& bytes, Decoded& d) {
  if (!wire::DecodeExecPlan(Bytes(bytes), bytes.size(), d.plan)) return false;
  d.argv.resize(d.plan.argc + 1);
  d.envp.resize(d.plan.envc + 1);
  d.plan.argv = d.argv.data();
  d.plan.envp = d.envp.data();
  return wire::DecodeExecPlan(Bytes(bytes), bytes.size(), d.plan);
}

TEST(ExecPlanTest, RoundTrips) {
  launch::ExecPlanSpec spec{{"sh", "-c", ""}, {"A=1", "B="}, "/w/d", 0b101, {}};
  spec.reopens.push_back({1, 01, "/dev/null"});
  Decoded d;
  // The decoded plan points into these bytes (as srt-init's does into its buffer): they must
  // outlive every look at it.
  const std::string bytes = launch::EncodeExecPlan(spec);
  ASSERT_TRUE(Decode(bytes, d));
  ASSERT_EQ(d.plan.argc, 3u);
  EXPECT_STREQ(d.argv[0], "sh");
  EXPECT_STREQ(d.argv[2], "");
  EXPECT_EQ(d.argv[3], nullptr);
  ASSERT_EQ(d.plan.envc, 2u);
  EXPECT_STREQ(d.envp[1], "B=");
  EXPECT_EQ(d.envp[2], nullptr);
  EXPECT_STREQ(d.plan.cwd, "/w/d");
  EXPECT_EQ(d.plan.terminal, 0b101u);
  ASSERT_EQ(d.plan.reopen_count, 1u);
  EXPECT_EQ(d.plan.reopens[0].fd, 1);
}

TEST(ExecPlanTest, RefusesWhatSrtInitMustNotRun) {
  auto refused = [](launch::ExecPlanSpec spec) {
    Decoded d;
    return !Decode(launch::EncodeExecPlan(spec), d);
  };
  EXPECT_TRUE(refused({{}, {}, "/w", 0, {}})) << "no argv";
  EXPECT_TRUE(refused({{""}, {}, "/w", 0, {}})) << "an empty command name";
  EXPECT_TRUE(refused({{"true"}, {}, "", 0, {}})) << "no working directory";
  EXPECT_TRUE(refused({{"true"}, {}, "rel", 0, {}})) << "a relative one";
  EXPECT_TRUE(refused({{"true"}, {"NOEQUALS"}, "/w", 0, {}}));
  EXPECT_TRUE(refused({{"true"}, {"=x"}, "/w", 0, {}}));
  EXPECT_TRUE(refused({{"true"}, {}, "/w", 8, {}})) << "a terminal beyond 0-2";
  EXPECT_TRUE(refused({{"true"}, {}, "/w", 0, {{3, 0, "/dev/null"}}})) << "a device above 2";
  EXPECT_TRUE(refused({{"true"}, {}, "/w", 0, {{0, 0, "/etc/passwd"}}})) << "not a device";
  EXPECT_TRUE(refused({{"true"}, {}, "/w", 0, {{0, 0100, "/dev/null"}}})) << "O_CREAT";
  EXPECT_TRUE(refused({{"true"}, {}, "/w", 1, {{0, 0, "/dev/null"}}})) << "terminal and device";
  EXPECT_TRUE(refused({{"true"}, {}, "/w", 0, {{0, 0, "/dev/null"}, {0, 0, "/dev/zero"}}}));
}

TEST(ExecPlanTest, RefusesTruncatedAndForeignRecords) {
  std::string good = launch::EncodeExecPlan({{"true"}, {}, "/w", 0, {}});
  Decoded d;
  ASSERT_TRUE(Decode(good, d));
  for (size_t cut = 0; cut < good.size(); ++cut) {
    Decoded t;
    EXPECT_FALSE(Decode(good.substr(0, cut), t)) << cut;
  }
  // An init plan's record (kTagStderrFd) has no place here.
  std::string foreign = good;
  foreign += std::string("\x02\x00\x00\x00\x04\x00\x00\x00\x02\x00\x00\x00", 12);
  EXPECT_FALSE(Decode(foreign, d));
}

TEST(ExecPlanTest, AServingInitPlanHasNoCommand) {
  launch::InitPlanSpec spec{8, {}, {}};
  spec.serve = true;
  std::string bytes = launch::EncodeInitPlan(spec);
  init::InitPlan plan;
  ASSERT_TRUE(init::DecodeInitPlan(Bytes(bytes), bytes.size(), plan));
  EXPECT_TRUE(plan.serve);
  EXPECT_EQ(plan.argc, 0u);
  // Without kTagServe an empty argv is refused, and with it an argv is.
  launch::InitPlanSpec plain{8, {}, {}};
  bytes = launch::EncodeInitPlan(plain);
  EXPECT_FALSE(init::DecodeInitPlan(Bytes(bytes), bytes.size(), plan));
  launch::InitPlanSpec both{8, {}, {"true"}};
  both.serve = true;
  both.cwd = "/w";
  bytes = launch::EncodeInitPlan(both);
  EXPECT_FALSE(init::DecodeInitPlan(Bytes(bytes), bytes.size(), plan));
}

// A plain run's init plan and a warm sandbox's exec plan carry the command's working directory
// in the same record, read by one rule (wire::ReadCwdRecord): absolute, once.
TEST(ExecPlanTest, BothPlansReadTheWorkingDirectoryByOneRule) {
  auto record = [](const std::string& payload) {
    std::string r(8, '\0');
    r[0] = static_cast<char>(wire::kTagCwd);
    r[4] = static_cast<char>(payload.size());
    return r + payload;
  };
  // The rule itself.
  for (const auto& [payload, ok] : std::vector<std::pair<std::string, bool>>{
           {std::string("/w\0", 3), true},
           {std::string("/\0", 2), true},
           {std::string("w\0", 2), false},      // relative
           {std::string("\0", 1), false},       // empty
           {std::string("/w", 2), false},       // no NUL
           {std::string("/a\0b\0", 5), false},  // a NUL inside
       }) {
    const char* cwd = nullptr;
    const auto* p = reinterpret_cast<const uint8_t*>(payload.data());
    const auto len = static_cast<uint32_t>(payload.size());
    EXPECT_EQ(wire::ReadCwdRecord(p, len, cwd), ok) << payload;
    EXPECT_EQ(cwd == nullptr, !ok) << payload;
    // Never a second time.
    if (ok) {
      EXPECT_FALSE(wire::ReadCwdRecord(p, len, cwd)) << payload;
    }
  }
  // Both decoders apply it.
  launch::InitPlanSpec init_spec{8, {}, {"true"}};
  init_spec.cwd = "/w";
  const std::string init_bytes = launch::EncodeInitPlan(init_spec);
  const std::string exec_bytes = launch::EncodeExecPlan({{"true"}, {}, "/w", 0, {}});
  init::InitPlan plan;
  Decoded d;
  ASSERT_TRUE(init::DecodeInitPlan(Bytes(init_bytes), init_bytes.size(), plan));
  ASSERT_TRUE(Decode(exec_bytes, d));
  const std::string again = record(std::string("/v\0", 3));
  const std::string twice_init = init_bytes + again, twice_exec = exec_bytes + again;
  EXPECT_FALSE(init::DecodeInitPlan(Bytes(twice_init), twice_init.size(), plan));
  EXPECT_FALSE(Decode(twice_exec, d));
  init_spec.cwd = "w";
  const std::string relative_init = launch::EncodeInitPlan(init_spec);
  const std::string relative_exec = launch::EncodeExecPlan({{"true"}, {}, "w", 0, {}});
  EXPECT_FALSE(init::DecodeInitPlan(Bytes(relative_init), relative_init.size(), plan));
  EXPECT_FALSE(Decode(relative_exec, d));
}

}  // namespace
}  // namespace srt
