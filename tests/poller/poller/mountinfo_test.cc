// SPDX-License-Identifier: Apache-2.0
// MountPointsBelow: which of the host's mounts are a killed srt-poller's workspaces. Pure.
#include "poller/mountinfo.h"

#include "gtest/gtest.h"

namespace srt::poller {
namespace {

TEST(MountPointsBelow, OnlyDirectChildrenOfTheSessionsDirectoryUnescaped) {
  const std::string mountinfo =
      "22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw\n"
      "90 22 7:0 / /var/lib/srt-poller/sessions/sesn_a rw,nosuid,nodev shared:50 - ext4 "
      "/dev/loop0 rw\n"
      "91 22 7:1 / /var/lib/srt-poller/sessions/sesn_a/deeper rw - ext4 /dev/loop1 rw\n"
      "92 22 7:2 / /var/lib/srt-poller/sessions-other/sesn_b rw - ext4 /dev/loop2 rw\n"
      "93 22 7:3 / /var/lib/srt-poller/sessions rw - ext4 /dev/loop3 rw\n"
      "94 22 0:5 / /var/lib/srt\\040poller/sessions/sesn_c rw - ext4 /dev/loop4 rw\n"
      "95 22 7:5 / /var/lib/srt-poller/sessions/sesn_d\\134x rw - ext4 /dev/loop5 rw\n"
      "garbage\n"
      "\n";
  EXPECT_EQ(MountPointsBelow(mountinfo, "/var/lib/srt-poller/sessions"),
            (std::vector<std::string>{"/var/lib/srt-poller/sessions/sesn_a",
                                      "/var/lib/srt-poller/sessions/sesn_d\\x"}));
  EXPECT_EQ(MountPointsBelow(mountinfo, "/var/lib/srt poller/sessions"),
            (std::vector<std::string>{"/var/lib/srt poller/sessions/sesn_c"}));
  EXPECT_TRUE(MountPointsBelow("", "/x").empty());
  EXPECT_TRUE(MountPointsBelow("1 2 3 4", "/x").empty());
}

}  // namespace
}  // namespace srt::poller
