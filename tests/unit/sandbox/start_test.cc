// SPDX-License-Identifier: Apache-2.0
// Sandbox::Start's refusals that come before it looks at the host.
#include <gtest/gtest.h>

#include <csignal>
#include <string>

#include "srt/sandbox.h"

namespace srt {
namespace {

// Sets SIGCHLD's disposition for the test's lifetime and restores the old one.
class ChldDisposition {
 public:
  ChldDisposition(void (*handler)(int), int flags) {
    struct sigaction sa {};
    sa.sa_handler = handler;
    sa.sa_flags = flags;
    sigaction(SIGCHLD, &sa, &old_);
  }
  ~ChldDisposition() { sigaction(SIGCHLD, &old_, nullptr); }
  ChldDisposition(const ChldDisposition&) = delete;
  ChldDisposition& operator=(const ChldDisposition&) = delete;

 private:
  struct sigaction old_ {};
};

void NoteChild(int /*sig*/) {}

std::string StartError() {
  SandboxOptions o;
  o.argv = {"true"};
  Result<Sandbox> sb = Sandbox::Start(std::move(o));
  return sb ? std::string("started") : sb.error().message();
}

constexpr char kRefusal[] =
    "SIGCHLD is ignored (SIG_IGN or SA_NOCLDWAIT) in this process: srt must reap the processes "
    "it starts; give SIGCHLD its default disposition first";

// The kernel would reap bwrap before srt: its exit status lost, its pid free for another
// process while srt still signals it and writes it to a cgroup.
TEST(SandboxStartTest, AnIgnoredSigchldIsRefused) {
  ChldDisposition ignored(SIG_IGN, 0);
  EXPECT_EQ(StartError(), kRefusal);
}

TEST(SandboxStartTest, ANoChildWaitHandlerIsRefused) {
  ChldDisposition no_wait(NoteChild, SA_NOCLDWAIT);
  EXPECT_EQ(StartError(), kRefusal);
}

}  // namespace
}  // namespace srt
