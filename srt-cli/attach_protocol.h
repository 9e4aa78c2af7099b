// SPDX-License-Identifier: Apache-2.0
// srt-cli/attach_protocol: the frames between `srt --attach` and `srt --serve`. Pure.
//
// One frame per SOCK_SEQPACKET packet, at most kMaxAttachFrameBytes: u32 type, then a payload
// whose size each type fixes (little-endian, as the host's). The command itself travels as an
// exec plan (init_protocol/exec_plan.h: kTagArg, kTagEnv, kTagCwd) in a memfd passed with
// kAttachRun, together with the client's stdin, stdout and stderr (SCM_RIGHTS, exactly 4).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "srt/result.h"

namespace srt::cli {

inline constexpr size_t kMaxAttachFrameBytes = 4096;
inline constexpr uint32_t kAttachVersion = 1;

enum AttachType : uint32_t {
  // client -> server
  kAttachRun = 1,     // u32 version; + SCM_RIGHTS: exec plan memfd, stdin, stdout, stderr
  kAttachSignal = 2,  // i32 signal (1..64): deliver to the command (SIGWINCH: resize)
  // server -> client
  kAttachStarted = 101,  // the command runs
  kAttachExited = 102,   // i32 code, i32 signal, i32 exec errno, i32 relayed signal
  kAttachError = 103,    // text (1..4092 bytes): it could not run; say this
};

struct AttachFrame {
  uint32_t type = 0;
  int32_t values[4] = {};
  std::string text;  // kAttachError
};

// Parses one frame a peer sent: a client's (`from_client`) or a server's. Refuses (as
// kProtocol, saying why) an unknown type, a wrong size, a bad version or signal.
[[nodiscard]] Result<AttachFrame> ParseAttachFrame(std::span<const uint8_t> bytes,
                                                   bool from_client);

std::vector<uint8_t> EncodeAttachFrame(const AttachFrame& frame);

// The exec plan `srt --attach` sends, and the server's reading of it (argv, environment and
// working directory only; anything else is refused).
struct AttachCommand {
  std::vector<std::string> argv;
  std::vector<std::string> env;
  std::string cwd;
};
std::string EncodeAttachCommand(const AttachCommand& command);
[[nodiscard]] Result<AttachCommand> DecodeAttachCommand(std::span<const uint8_t> plan);

}  // namespace srt::cli
