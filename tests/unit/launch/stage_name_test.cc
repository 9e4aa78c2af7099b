// SPDX-License-Identifier: Apache-2.0
// The words for srt-init's and srt-agent's stages (launch/stage_name.h): one table for a
// sandbox's set-up and a warm sandbox's commands.
#include "launch/stage_name.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <set>
#include <string>

#include "init_protocol/wire.h"

namespace srt::launch {
namespace {

// Each stage srt-init or srt-agent can report, from either side, has words of its own: neither
// a plain run's failure nor a warm sandbox command's refusal reads "failed set-up".
TEST(StageNameTest, EveryStageHasItsOwnWords) {
  std::set<std::string> seen;
  for (int32_t stage = wire::kStagePlan; stage <= wire::kStageShow; ++stage) {
    const std::string name = StageName(stage);
    EXPECT_NE(name, "set-up") << stage;
    EXPECT_TRUE(seen.insert(name).second) << stage << ": " << name;
  }
  EXPECT_STREQ(StageName(0), "set-up");
  EXPECT_STREQ(StageName(wire::kStageShow + 1), "set-up");
  // The words users see for a command's own stages.
  EXPECT_STREQ(StageName(wire::kStageCwd), "changing to the command's working directory");
  EXPECT_STREQ(StageName(wire::kStageTerminal), "making the command's terminal");
  EXPECT_STREQ(StageName(wire::kStageIsolate), "isolating the command from the others (Landlock)");
}

// One sentence for a failure reported by srt-init or srt-agent, from a sandbox's set-up or a warm
// sandbox's command: an EAGAIN also names the limit (hostile reviews 8 and 9).
TEST(StageNameTest, AFailedStageIsOneSentenceAndAProcessLimitIsNamed) {
  EXPECT_EQ(FailedStageText("srt-init", wire::kStageCwd, "/w", ENOENT),
            "srt-init failed changing to the command's working directory ('/w'): No such file or "
            "directory");
  EXPECT_EQ(FailedStageText("srt-init", wire::kStageCwd, "", EACCES),
            "srt-init failed changing to the command's working directory: Permission denied");
  const std::string limit = FailedStageText("srt-init", wire::kStageFork, "", EAGAIN);
  EXPECT_NE(limit.find(": Resource temporarily unavailable (no more processes may be started: "
                       "the caller's limit (ulimit -u)"),
            std::string::npos)
      << limit;
}

}  // namespace
}  // namespace srt::launch
