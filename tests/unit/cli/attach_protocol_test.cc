// SPDX-License-Identifier: Apache-2.0
// The frames between srt --attach and srt --serve (srt-cli/attach_protocol.h).
#include "attach_protocol.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace srt::cli {
namespace {

std::vector<uint8_t> Raw(std::initializer_list<uint32_t> words) {
  std::vector<uint8_t> out;
  for (uint32_t w : words) {
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>(w >> (8 * i)));
  }
  return out;
}

TEST(AttachProtocolTest, FramesRoundTrip) {
  Result<AttachFrame> run = ParseAttachFrame(EncodeAttachFrame({kAttachRun, {1}, {}}), true);
  ASSERT_TRUE(run) << run.error().message();
  EXPECT_EQ(run->type, kAttachRun);
  Result<AttachFrame> sig = ParseAttachFrame(EncodeAttachFrame({kAttachSignal, {2}, {}}), true);
  ASSERT_TRUE(sig);
  EXPECT_EQ(sig->values[0], 2);
  Result<AttachFrame> exited =
      ParseAttachFrame(EncodeAttachFrame({kAttachExited, {130, 2, 0, 2}, {}}), false);
  ASSERT_TRUE(exited);
  EXPECT_EQ(exited->values[0], 130);
  Result<AttachFrame> error =
      ParseAttachFrame(EncodeAttachFrame({kAttachError, {}, "no such thing"}), false);
  ASSERT_TRUE(error);
  EXPECT_EQ(error->text, "no such thing");
}

TEST(AttachProtocolTest, RefusesWhatItDoesNotExpect) {
  EXPECT_FALSE(ParseAttachFrame({}, true));
  EXPECT_FALSE(ParseAttachFrame(Raw({kAttachRun}), true)) << "no version";
  EXPECT_FALSE(ParseAttachFrame(Raw({kAttachRun, 2}), true)) << "another version";
  EXPECT_FALSE(ParseAttachFrame(Raw({kAttachRun, 1, 0}), true)) << "trailing bytes";
  EXPECT_FALSE(ParseAttachFrame(Raw({kAttachSignal, 0}), true));
  EXPECT_FALSE(ParseAttachFrame(Raw({kAttachSignal, 65}), true));
  EXPECT_FALSE(ParseAttachFrame(Raw({kAttachExited, 0, 0, 0, 0}), true)) << "a server's frame";
  EXPECT_FALSE(ParseAttachFrame(Raw({kAttachRun, 1}), false)) << "a client's frame";
  EXPECT_FALSE(ParseAttachFrame(Raw({kAttachExited, 256, 0, 0, 0}), false));
  EXPECT_FALSE(ParseAttachFrame(Raw({kAttachExited, 0, 0, 0}), false));
  EXPECT_FALSE(ParseAttachFrame(Raw({kAttachError}), false)) << "an empty error";
  std::vector<uint8_t> big(kMaxAttachFrameBytes + 1, 'x');
  big[0] = kAttachError;
  big[1] = big[2] = big[3] = 0;
  EXPECT_FALSE(ParseAttachFrame(big, false));
  Result<AttachFrame> unknown = ParseAttachFrame(Raw({77}), true);
  ASSERT_FALSE(unknown);
  EXPECT_NE(unknown.error().message().find("unknown type 77"), std::string::npos);
}

TEST(AttachProtocolTest, CommandsRoundTripAndNothingElseIsTaken) {
  AttachCommand c{{"make", "-j2"}, {"PATH=/bin", "EMPTY="}, "/work/x"};
  std::string bytes = EncodeAttachCommand(c);
  Result<AttachCommand> back =
      DecodeAttachCommand(std::span(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
  ASSERT_TRUE(back) << back.error().message();
  EXPECT_EQ(back->argv, c.argv);
  EXPECT_EQ(back->env, c.env);
  EXPECT_EQ(back->cwd, c.cwd);
  // A client names no terminal or device: those are srt's to decide.
  bytes += std::string("\x06\x00\x00\x00\x04\x00\x00\x00\x01\x00\x00\x00", 12);
  EXPECT_FALSE(
      DecodeAttachCommand(std::span(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size())));
}

}  // namespace
}  // namespace srt::cli
