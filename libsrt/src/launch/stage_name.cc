// SPDX-License-Identifier: Apache-2.0
#include "launch/stage_name.h"

#include "base/strings.h"
#include "base/system_text.h"
#include "init_protocol/wire.h"

namespace srt::launch {

const char* StageName(int32_t stage) {
  switch (stage) {
    case wire::kStagePlan:
      return "reading its plan";
    case wire::kStageFds:
      return "setting up the command's descriptors";
    case wire::kStageSignals:
      return "setting up signals";
    case wire::kStagePidfd:
      return "pidfd_open";
    case wire::kStageFork:
      return "starting the command";
    case wire::kStageNoNewPrivs:
      return "setting no_new_privs";
    case wire::kStageSeccomp:
      return "loading the seccomp filter";
    case wire::kStageJoinNamespaces:
      return "joining the sandbox's namespaces";
    case wire::kStageHidePid:
      return "hiding srt-init from the sandbox's /proc";
    case wire::kStagePin:
      return "pinning a directory";
    case wire::kStageProtect:
      return "protecting a path";
    case wire::kStageGuard:
      return "setting up the write guard";
    case wire::kStageTmpdir:
      return "making the private TMPDIR";
    case wire::kStageKeptTmpdir:
      return "checking the directory every sandbox's TMPDIR is kept in, which must be a "
             "directory of the caller's with mode 0700, reached without a symlink";
    case wire::kStageNetwork:
      return "making the proxy's sockets in the sandbox";
    case wire::kStageNofile:
      return "restoring the open-file limit";
    case wire::kStageTerminal:
      return "making the command's terminal";
    case wire::kStageCover:
      return "covering a denied file";
    case wire::kStageProcCover:
      return "making the host-wide settings in the sandbox's /proc read-only";
    case wire::kStageShow:
      return "showing a host entry in the sandbox";
    case wire::kStageCwd:
      return "changing to the command's working directory";
    case wire::kStageIsolate:
      return "isolating the command from the others (Landlock)";
    default:
      return "set-up";
  }
}

std::string FailedStageText(std::string_view who, int32_t stage, std::string_view detail, int err) {
  std::string text = std::string(who) + " failed " + StageName(stage);
  if (!detail.empty()) text += " (" + strings::Quote(detail) + ")";
  return text + ": " + StartErrnoText(err);
}

}  // namespace srt::launch
