// SPDX-License-Identifier: Apache-2.0
// srt-toolbox inside a real srt sandbox (bwrap + srt's seccomp filter): the PTY from bwrap's
// /dev works, the shell persists, timeouts and cancels kill and restart it, and the file tools
// stay in their root.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <thread>

#include "srt_fixture.h"
#include "toolbox_test_support.h"

namespace srt::it {
namespace {

using poller::toolbox::testing::LineClient;
using poller::toolbox::testing::Request;
using poller::toolbox::testing::Text;
using std::chrono::milliseconds;

using ToolboxInSandboxTest = SrtTest;

TEST_P(ToolboxInSandboxTest, ToolsWorkUnderTheSandbox) {
  run().MakeDir("ws/sub");
  std::string ws = run().Path("ws");
  // The protocol runs over two FIFOs in the scratch tree; O_RDWR opens never block, and keep a
  // writer on each side so neither end sees EOF before we mean it.
  std::string in_path = run().Path("in.fifo"), out_path = run().Path("out.fifo");
  ASSERT_EQ(mkfifo(in_path.c_str(), 0666), 0);
  ASSERT_EQ(mkfifo(out_path.c_str(), 0666), 0);
  chmod(in_path.c_str(), 0666);
  chmod(out_path.c_str(), 0666);
  int to = open(in_path.c_str(), O_RDWR | O_CLOEXEC);
  int from = open(out_path.c_str(), O_RDWR | O_CLOEXEC);
  ASSERT_GE(to, 0);
  ASSERT_GE(from, 0);

  std::string cmd = std::string("exec ") + SRT_TOOLBOX_BINARY + " --root " + ws + " <" + in_path +
                    " >" + out_path;
  pid_t srt = run().Start(R"({"filesystem": {"allowWrite": ["."]}})", {"/bin/sh", "-c", cmd});
  LineClient client(to, from);
  EXPECT_EQ(client.ReadLine(), R"({"ready":true,"version":1})");

  client.SendJson(Request(1, "bash",
                          {{"command",
                            "readlink /proc/self/fd/1; test -t 1 && echo on-a-tty; "
                            "grep '^Seccomp:' /proc/self/status"}}));
  nlohmann::json r = client.ReadJson();
  EXPECT_EQ(r["is_error"], false) << r;
  EXPECT_EQ(Text(r).rfind("/dev/pts/", 0), 0u) << r;
  EXPECT_NE(Text(r).find("on-a-tty\n"), std::string::npos) << r;
  // The shell (and so the PTY) really runs under srt's seccomp filter (mode 2).
  EXPECT_NE(Text(r).find("Seccomp:\t2\n"), std::string::npos) << r;

  client.SendJson(Request(2, "bash", {{"command", "cd sub && export KEPT=yes"}}));
  EXPECT_EQ(client.ReadJson()["is_error"], false);
  client.SendJson(Request(3, "bash", {{"command", "pwd; echo $KEPT; (exit 5)"}}));
  r = client.ReadJson();
  EXPECT_EQ(Text(r), ws + "/sub\nyes\n\n\nexit code: 5");
  EXPECT_EQ(r["is_error"], true);

  client.SendJson(Request(4, "write", {{"file_path", "sub/f.txt"}, {"content", "inside"}}));
  EXPECT_EQ(Text(client.ReadJson()), "wrote 6 bytes to sub/f.txt");
  EXPECT_EQ(run().ReadFile("ws/sub/f.txt"), "inside");
  client.SendJson(Request(5, "read", {{"file_path", "/etc/hostname"}}));
  EXPECT_EQ(Text(client.ReadJson()), "read: path \"/etc/hostname\" escapes workdir");

  client.SendJson(Request(6, "bash", {{"command", "echo before; sleep 30"}, {"timeout_ms", 300}}));
  EXPECT_EQ(Text(client.ReadJson()), "before\n\n[timed out]\nsession restarted after timeout");
  client.SendJson(Request(7, "bash", {{"command", "echo [$KEPT] $(pwd)"}}));
  EXPECT_EQ(Text(client.ReadJson()), "[] " + ws + "\n\n");

  client.SendJson(Request(8, "bash", {{"command", "sleep 30"}}));
  std::this_thread::sleep_for(milliseconds(300));
  client.SendJson(nlohmann::json{{"cancel", 8}});
  EXPECT_EQ(Text(client.ReadJson()), "tool cancelled");
  client.SendJson(Request(9, "bash", {{"command", "echo alive"}}));
  EXPECT_EQ(Text(client.ReadJson()), "alive\n\n");

  close(to);  // EOF: the toolbox kills its shell and exits 0
  RunResult done = run().Finish(srt, std::chrono::seconds(20));
  EXPECT_EQ(done.exit_code, 0) << done.err;
  close(from);
}

SRT_INSTANTIATE(ToolboxInSandboxTest);

}  // namespace
}  // namespace srt::it
