// SPDX-License-Identifier: Apache-2.0
// launch/stage_name: the words for the stage srt-init or srt-agent failed in (wire::Stage, sent
// in kMsgFailed and kMsgExecRefused), as in "srt-init failed <stage>: <errno text>". One table
// for a sandbox's set-up and a warm sandbox's commands. Pure.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace srt::launch {

// "set-up" for a stage this srt does not know.
const char* StageName(int32_t stage);

// "<who> failed <stage>[ ('<detail>')]: <errno text>", and after an EAGAIN which limit was
// reached (StartErrnoText).
std::string FailedStageText(std::string_view who, int32_t stage, std::string_view detail, int err);

}  // namespace srt::launch
