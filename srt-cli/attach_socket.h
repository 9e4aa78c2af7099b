// SPDX-License-Identifier: Apache-2.0
// srt-cli/attach_socket: sending and receiving attach frames (attach_protocol.h) on the
// SOCK_SEQPACKET socket between `srt --attach` and `srt --serve`, and the peer's uid. Shared by
// the serving srt and the attaching client (srt --attach, srt-attach), which links nothing
// else of srt's.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <vector>

#include "attach_protocol.h"
#include "base/unique_fd.h"
#include "srt/result.h"

namespace srt::cli {

// One frame, with up to 4 descriptors (SCM_RIGHTS).
[[nodiscard]] Result<void> SendFrame(int sock, const AttachFrame& frame,
                                     const std::vector<int>& fds = {});

// One frame and the descriptors that came with it (CLOEXEC); `eof` (no bytes) when the peer
// has gone. A frame longer than kMaxAttachFrameBytes or with more than 4 descriptors is refused
// (those it carried are closed).
struct ReceivedFrame {
  std::vector<uint8_t> bytes;
  std::vector<UniqueFd> fds;
  bool eof = false;
};
[[nodiscard]] Result<ReceivedFrame> ReceiveFrame(int sock);

// The uid the peer of a connected Unix socket ran as when it connected (SO_PEERCRED).
[[nodiscard]] Result<uid_t> PeerUid(int sock);

}  // namespace srt::cli
