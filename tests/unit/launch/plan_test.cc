// SPDX-License-Identifier: Apache-2.0
// The plans libsrt writes, decoded by the same code srt-init runs (srt-cli/init/plan.h).
#include "plan.h"

#include <gtest/gtest.h>

#include <cstring>

#include "launch/plan_writer.h"

namespace srt {
namespace {

const uint8_t* Bytes(const std::string& s) { return reinterpret_cast<const uint8_t*>(s.data()); }

TEST(PlanTest, InitPlanRoundTrips) {
  launch::InitPlanSpec spec{8, {3, 5}, {"bash", "-c", "", "echo hi"}};
  spec.cwd = "/w";
  std::string bytes = launch::EncodeInitPlan(spec);
  init::InitPlan plan;
  ASSERT_TRUE(init::DecodeInitPlan(Bytes(bytes), bytes.size(), plan));
  ASSERT_EQ(plan.argc, 4u);
  std::vector<const char*> argv(plan.argc + 1);
  plan.argv = argv.data();
  ASSERT_TRUE(init::DecodeInitPlan(Bytes(bytes), bytes.size(), plan));
  EXPECT_EQ(plan.stderr_fd, 8);
  ASSERT_EQ(plan.keep_count, 2u);
  EXPECT_EQ(plan.keep_fds[0], 3);
  EXPECT_EQ(plan.keep_fds[1], 5);
  EXPECT_STREQ(argv[0], "bash");
  EXPECT_STREQ(argv[2], "");
  EXPECT_STREQ(argv[3], "echo hi");
  EXPECT_EQ(argv[4], nullptr);
  EXPECT_STREQ(plan.cwd, "/w");
}

// A plain run's command enters its working directory itself (init_role.cc RunCommand), so its
// plan must name one, absolute and once; a warm sandbox's commands bring their own.
TEST(PlanTest, InitPlanNeedsTheCommandsWorkingDirectory) {
  init::InitPlan plan;
  launch::InitPlanSpec spec{8, {}, {"true"}};
  std::string bytes = launch::EncodeInitPlan(spec);
  EXPECT_FALSE(init::DecodeInitPlan(Bytes(bytes), bytes.size(), plan));
  spec.cwd = "w";
  bytes = launch::EncodeInitPlan(spec);
  EXPECT_FALSE(init::DecodeInitPlan(Bytes(bytes), bytes.size(), plan));
  spec.cwd = "/w";
  bytes = launch::EncodeInitPlan(spec);
  ASSERT_TRUE(init::DecodeInitPlan(Bytes(bytes), bytes.size(), plan));
  bytes += std::string("\x0a\x00\x00\x00\x03\x00\x00\x00/x\x00", 11);  // kTagCwd again
  EXPECT_FALSE(init::DecodeInitPlan(Bytes(bytes), bytes.size(), plan));
  launch::InitPlanSpec serve{8, {}, {}};
  serve.serve = true;
  serve.cwd = "/w";
  bytes = launch::EncodeInitPlan(serve);
  EXPECT_FALSE(init::DecodeInitPlan(Bytes(bytes), bytes.size(), plan));
}

TEST(PlanTest, InitPlanCarriesTheCommandsOpenFileLimit) {
  launch::InitPlanSpec spec{8, {}, {"true"}, std::make_pair(1024ull, ~0ull)};
  spec.cwd = "/w";
  std::string bytes = launch::EncodeInitPlan(spec);
  init::InitPlan plan;
  ASSERT_TRUE(init::DecodeInitPlan(Bytes(bytes), bytes.size(), plan));
  std::vector<const char*> argv(plan.argc + 1);
  plan.argv = argv.data();
  // srt-init decodes twice (count, then fill): the record must pass both times.
  ASSERT_TRUE(init::DecodeInitPlan(Bytes(bytes), bytes.size(), plan));
  EXPECT_TRUE(plan.set_nofile);
  EXPECT_EQ(plan.nofile[0], 1024u);
  EXPECT_EQ(plan.nofile[1], ~0ull);

  launch::InitPlanSpec inverted{8, {}, {"true"}, std::make_pair(10ull, 5ull)};
  inverted.cwd = "/w";
  bytes = launch::EncodeInitPlan(inverted);
  EXPECT_FALSE(init::DecodeInitPlan(Bytes(bytes), bytes.size(), plan));
}

TEST(PlanTest, InitPlanNamesTheStandardDescriptorsOnTheSandboxsTerminal) {
  launch::InitPlanSpec spec{8, {}, {"sh"}, std::nullopt, 0b101};
  spec.cwd = "/w";
  std::string bytes = launch::EncodeInitPlan(spec);
  init::InitPlan plan;
  ASSERT_TRUE(init::DecodeInitPlan(Bytes(bytes), bytes.size(), plan));
  EXPECT_EQ(plan.terminal, 0b101u);
  for (uint32_t bad : {8u, 0xffffffffu}) {
    spec.terminal = bad;
    bytes = launch::EncodeInitPlan(spec);
    EXPECT_FALSE(init::DecodeInitPlan(Bytes(bytes), bytes.size(), plan)) << bad;
  }
  spec.terminal = 0;
  bytes = launch::EncodeInitPlan(spec);
  ASSERT_TRUE(init::DecodeInitPlan(Bytes(bytes), bytes.size(), plan));
  EXPECT_EQ(plan.terminal, 0u);
}

TEST(PlanTest, AgentPlanCarriesTheNetworkSockets) {
  wire::NetSocket tcp{wire::kNetTcpListen, 10, 3128, {}};
  tcp.address[15] = 1;
  wire::NetSocket route{wire::kNetRoute, 0, 0, {}};
  std::string bytes = launch::EncodeAgentPlan(wire::kProcAsIs, {}, {}, {tcp, route});
  init::AgentPlan plan;
  ASSERT_TRUE(init::DecodeAgentPlan(Bytes(bytes), bytes.size(), plan));
  ASSERT_EQ(plan.socket_count, 2u);
  EXPECT_EQ(plan.sockets[0].kind, wire::kNetTcpListen);
  EXPECT_EQ(plan.sockets[0].family, 10u);
  EXPECT_EQ(plan.sockets[0].port, 3128u);
  EXPECT_EQ(plan.sockets[0].address[15], 1);
  EXPECT_EQ(plan.sockets[1].kind, wire::kNetRoute);
}

TEST(PlanTest, AgentPlanRoundTrips) {
  std::vector<policy::Protection> ps = {{policy::ProtectKind::kPin, "/w/.git", true, ""},
                                        {policy::ProtectKind::kProtect, "/w/.git/hooks", true, ""},
                                        {policy::ProtectKind::kProtect, "/w/.bashrc", false, ""}};
  std::string bytes = launch::EncodeAgentPlan(wire::kProcPrivate, {"/tmp/srt-x"}, ps);
  init::AgentPlan plan;
  ASSERT_TRUE(init::DecodeAgentPlan(Bytes(bytes), bytes.size(), plan));
  ASSERT_EQ(plan.op_count, 3u);
  std::vector<init::AgentOp> ops(plan.op_count);
  plan.ops = ops.data();
  ASSERT_TRUE(init::DecodeAgentPlan(Bytes(bytes), bytes.size(), plan));
  EXPECT_EQ(plan.proc, wire::kProcPrivate);
  EXPECT_STREQ(plan.tmpdir, "/tmp/srt-x");
  EXPECT_EQ(ops[0].kind, init::OpKind::kPin);
  EXPECT_STREQ(ops[0].path, "/w/.git");
  EXPECT_EQ(ops[2].kind, init::OpKind::kProtect);
  EXPECT_STREQ(ops[2].path, "/w/.bashrc");
}

TEST(PlanTest, AgentPlanCarriesTheWriteGuard) {
  launch::GuardPlan guard;
  guard.calls = {{0xc000003e, 257, wire::kGuardOpenat}, {0x40000003, 39, wire::kGuardMkdir}};
  guard.roots = {"/w", "/workspace"};
  guard.private_roots = {"/tmp/srt-1"};
  guard.flags = wire::kGuardAllowGitConfig;
  std::string bytes = launch::EncodeAgentPlan(wire::kProcHidePid, {}, {}, {}, guard);
  init::AgentPlan plan;
  ASSERT_TRUE(init::DecodeAgentPlan(Bytes(bytes), bytes.size(), plan));
  ASSERT_EQ(plan.guard_call_count, 2u);
  EXPECT_EQ(plan.guard_calls[0].arch, 0xc000003eu);
  EXPECT_EQ(plan.guard_calls[0].nr, 257u);
  EXPECT_EQ(plan.guard_calls[1].op, wire::kGuardMkdir);
  ASSERT_EQ(plan.guard_root_count, 2u);
  EXPECT_STREQ(plan.guard_roots[1], "/workspace");
  ASSERT_EQ(plan.guard_private_count, 1u);
  EXPECT_STREQ(plan.guard_private[0], "/tmp/srt-1");
  EXPECT_EQ(plan.guard_flags, wire::kGuardAllowGitConfig);
  // An unknown operation or flag, or a relative root, is a malformed plan.
  for (auto bad : {launch::GuardPlan{{{1, 2, wire::kGuardOpMax + 1}}, {}, {}, 0},
                   launch::GuardPlan{{}, {"w"}, {}, 0}, launch::GuardPlan{{}, {}, {}, 8}}) {
    std::string b = launch::EncodeAgentPlan(wire::kProcHidePid, {}, {}, {}, bad);
    init::AgentPlan p;
    EXPECT_FALSE(init::DecodeAgentPlan(Bytes(b), b.size(), p));
  }
}

// A warm sandbox's agent plan says how many ptys the commands' devpts instance holds.
TEST(PlanTest, AgentPlanCarriesTheCommandsPtys) {
  std::string bytes =
      launch::EncodeAgentPlan(wire::kProcHidePid, {}, {}, {}, {}, {}, {}, {}, wire::kMaxPtys);
  init::AgentPlan plan;
  ASSERT_TRUE(init::DecodeAgentPlan(Bytes(bytes), bytes.size(), plan));
  EXPECT_EQ(plan.ptys, wire::kMaxPtys);
  bytes = launch::EncodeAgentPlan(wire::kProcHidePid, {}, {});
  ASSERT_TRUE(init::DecodeAgentPlan(Bytes(bytes), bytes.size(), plan));
  EXPECT_EQ(plan.ptys, 0u);
  // None (0) or more than kMaxPtys: a malformed plan.
  for (uint32_t bad : {0u, wire::kMaxPtys + 1}) {
    std::string b = launch::EncodeAgentPlan(wire::kProcHidePid, {}, {}, {}, {}, {}, {}, {}, bad);
    if (bad == 0) {  // the writer leaves it out: the last record, its value made 0 here
      b = launch::EncodeAgentPlan(wire::kProcHidePid, {}, {}, {}, {}, {}, {}, {}, 1);
      b[b.size() - 4] = 0;
    }
    init::AgentPlan p;
    EXPECT_FALSE(init::DecodeAgentPlan(Bytes(b), b.size(), p)) << bad;
  }
}

// The host entries srt-agent shows in bwrap's place (wire::kTagShow) and the synthetic
// directories it then seals (kTagSeal) come first, in order, before its other mounts; at most
// kMaxShows; never the root, never relative, never after another op.
TEST(PlanTest, AgentPlanShowsHostEntriesBeforeAnythingElse) {
  std::vector<policy::Protection> ps = {
      {policy::ProtectKind::kProtect, "/etc/x/.bashrc", true, ""}};
  std::string bytes = launch::EncodeAgentPlan(wire::kProcAsIs, {}, ps, {}, {}, {"/etc/x/secret"},
                                              {}, {}, 0, {"/etc/x", "/opt/a"}, {"/opt"});
  init::AgentPlan plan;
  ASSERT_TRUE(init::DecodeAgentPlan(Bytes(bytes), bytes.size(), plan));
  ASSERT_EQ(plan.op_count, 5u);
  EXPECT_EQ(plan.show_count, 2u);
  std::vector<init::AgentOp> ops(plan.op_count);
  plan.ops = ops.data();
  ASSERT_TRUE(init::DecodeAgentPlan(Bytes(bytes), bytes.size(), plan));
  EXPECT_EQ(ops[0].kind, init::OpKind::kShow);
  EXPECT_STREQ(ops[0].path, "/etc/x");
  EXPECT_EQ(ops[1].kind, init::OpKind::kShow);
  EXPECT_STREQ(ops[1].path, "/opt/a");
  EXPECT_EQ(ops[2].kind, init::OpKind::kSeal);
  EXPECT_STREQ(ops[2].path, "/opt");
  EXPECT_EQ(ops[3].kind, init::OpKind::kCover);
  EXPECT_EQ(ops[4].kind, init::OpKind::kProtect);
  // kMaxShows of them, not one more.
  std::vector<std::string> many(wire::kMaxShows, "/etc/e");
  bytes = launch::EncodeAgentPlan(wire::kProcAsIs, {}, {}, {}, {}, {}, {}, {}, 0, many);
  init::AgentPlan most;  // counted only (no ops array)
  EXPECT_TRUE(init::DecodeAgentPlan(Bytes(bytes), bytes.size(), most));
  EXPECT_EQ(most.show_count, wire::kMaxShows);
  many.push_back("/etc/e");
  bytes = launch::EncodeAgentPlan(wire::kProcAsIs, {}, {}, {}, {}, {}, {}, {}, 0, many);
  init::AgentPlan too_many;
  EXPECT_FALSE(init::DecodeAgentPlan(Bytes(bytes), bytes.size(), too_many));
  for (const char* bad : {"/", "etc/x", ""}) {
    bytes = launch::EncodeAgentPlan(wire::kProcAsIs, {}, {}, {}, {}, {}, {}, {}, 0, {bad});
    init::AgentPlan p;
    EXPECT_FALSE(init::DecodeAgentPlan(Bytes(bytes), bytes.size(), p)) << bad;
    bytes = launch::EncodeAgentPlan(wire::kProcAsIs, {}, {}, {}, {}, {}, {}, {}, 0, {}, {bad});
    EXPECT_FALSE(init::DecodeAgentPlan(Bytes(bytes), bytes.size(), p)) << bad;
  }
  // After another op: the agent would mount it too late.
  bytes = launch::EncodeAgentPlan(wire::kProcAsIs, {}, {}, {}, {}, {"/etc/x/secret"});
  bytes += launch::EncodeAgentPlan(wire::kProcAsIs, {}, {}, {}, {}, {}, {}, {}, 0, {"/etc/x"})
               .substr(launch::EncodeAgentPlan(wire::kProcAsIs, {}, {}).size());
  init::AgentPlan late;
  EXPECT_FALSE(init::DecodeAgentPlan(Bytes(bytes), bytes.size(), late));
}

// A protection inside a bind carries its host path (where srt-agent looks whether it exists).
TEST(PlanTest, AgentPlanCarriesHostPathsOfProtectionsInsideBinds) {
  std::vector<policy::Protection> ps = {
      {policy::ProtectKind::kPin, "/workspace/sub", true, ""},
      {policy::ProtectKind::kProtect, "/workspace/.bashrc", false, "", "/srv/s1/.bashrc"},
      {policy::ProtectKind::kProtect, "/w/.bashrc", false, ""}};
  std::string bytes = launch::EncodeAgentPlan(wire::kProcAsIs, {}, ps);
  init::AgentPlan plan;
  ASSERT_TRUE(init::DecodeAgentPlan(Bytes(bytes), bytes.size(), plan));
  ASSERT_EQ(plan.op_count, 3u);
  std::vector<init::AgentOp> ops(plan.op_count);
  plan.ops = ops.data();
  ASSERT_TRUE(init::DecodeAgentPlan(Bytes(bytes), bytes.size(), plan));
  EXPECT_STREQ(ops[0].host_path, "/workspace/sub");
  EXPECT_STREQ(ops[1].path, "/workspace/.bashrc");
  EXPECT_STREQ(ops[1].host_path, "/srv/s1/.bashrc");
  EXPECT_STREQ(ops[2].host_path, "/w/.bashrc");
}

// Denied files go to srt-agent as covers, ahead of the protections (which then see them as they
// saw bwrap's binds).
TEST(PlanTest, AgentPlanCoversDeniedFilesBeforeItsProtections) {
  std::vector<policy::Protection> ps = {{policy::ProtectKind::kProtect, "/w/.bashrc", true, ""}};
  std::string bytes =
      launch::EncodeAgentPlan(wire::kProcAsIs, {}, ps, {}, {}, {"/w/.env", "/home/u/.netrc"});
  init::AgentPlan plan;
  ASSERT_TRUE(init::DecodeAgentPlan(Bytes(bytes), bytes.size(), plan));
  ASSERT_EQ(plan.op_count, 3u);
  std::vector<init::AgentOp> ops(plan.op_count);
  plan.ops = ops.data();
  ASSERT_TRUE(init::DecodeAgentPlan(Bytes(bytes), bytes.size(), plan));
  EXPECT_EQ(ops[0].kind, init::OpKind::kCover);
  EXPECT_STREQ(ops[0].path, "/w/.env");
  EXPECT_EQ(ops[1].kind, init::OpKind::kCover);
  EXPECT_STREQ(ops[1].path, "/home/u/.netrc");
  EXPECT_EQ(ops[2].kind, init::OpKind::kProtect);
  // Masked files, for the agent to watch.
  const std::string masked =
      launch::EncodeAgentPlan(wire::kProcAsIs, {}, {}, {}, {}, {}, {"/home/u/.netrc"});
  init::AgentPlan with_mask;
  ASSERT_TRUE(init::DecodeAgentPlan(Bytes(masked), masked.size(), with_mask));
  ASSERT_EQ(with_mask.op_count, 1u);
  std::vector<init::AgentOp> mask_ops(1);
  with_mask.ops = mask_ops.data();
  ASSERT_TRUE(init::DecodeAgentPlan(Bytes(masked), masked.size(), with_mask));
  EXPECT_EQ(mask_ops[0].kind, init::OpKind::kMask);
  EXPECT_STREQ(mask_ops[0].path, "/home/u/.netrc");
  // A relative cover is malformed.
  const std::string relative = launch::EncodeAgentPlan(wire::kProcAsIs, {}, {}, {}, {}, {"w/.env"});
  init::AgentPlan bad;
  EXPECT_FALSE(init::DecodeAgentPlan(Bytes(relative), relative.size(), bad));
}

// A denied or masked file named through symlinks: its name follows it (wire::kTagSpelled), as one
// more op of the same kind and file, for the agent's watcher to follow again.
TEST(PlanTest, AgentPlanSpellsFilesNamedThroughSymlinks) {
  const std::vector<policy::SymlinkedFile> symlinked = {
      {"/run/sa/..v1/token", "/run/sa/token"},
      {"/run/sa/..v1/token", "/run/sa/..data/token"},
      {"/home/u/..v1/netrc", "/home/u/.netrc"}};
  std::string bytes =
      launch::EncodeAgentPlan(wire::kProcAsIs, {}, {}, {}, {}, {"/run/sa/..v1/token", "/w/.env"},
                              {"/home/u/..v1/netrc"}, symlinked);
  init::AgentPlan plan;
  ASSERT_TRUE(init::DecodeAgentPlan(Bytes(bytes), bytes.size(), plan));
  ASSERT_EQ(plan.op_count, 6u);
  std::vector<init::AgentOp> ops(plan.op_count,
                                 init::AgentOp{init::OpKind::kPin, nullptr, nullptr});
  plan.ops = ops.data();
  ASSERT_TRUE(init::DecodeAgentPlan(Bytes(bytes), bytes.size(), plan));
  const struct {
    init::OpKind kind;
    const char* path;
    const char* spelled;
  } want[] = {{init::OpKind::kCover, "/run/sa/..v1/token", nullptr},
              {init::OpKind::kCover, "/run/sa/..v1/token", "/run/sa/token"},
              {init::OpKind::kCover, "/run/sa/..v1/token", "/run/sa/..data/token"},
              {init::OpKind::kCover, "/w/.env", nullptr},
              {init::OpKind::kMask, "/home/u/..v1/netrc", nullptr},
              {init::OpKind::kMask, "/home/u/..v1/netrc", "/home/u/.netrc"}};
  for (size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(ops[i].kind, want[i].kind) << i;
    EXPECT_STREQ(ops[i].path, want[i].path) << i;
    if (want[i].spelled == nullptr) {
      EXPECT_EQ(ops[i].spelled, nullptr) << i;
    } else {
      EXPECT_STREQ(ops[i].spelled, want[i].spelled) << i;
    }
  }
  // Only after a cover or a mask, and absolute.
  std::string after_protect = launch::EncodeAgentPlan(
      wire::kProcAsIs, {}, {{policy::ProtectKind::kProtect, "/run/sa/..v1/token", true, ""}}, {},
      {}, {}, {}, symlinked);
  EXPECT_EQ(after_protect.find("/run/sa/token"), std::string::npos);
  const std::string record = bytes.substr(bytes.find("/run/sa/token") - 8, 8 + 14);
  after_protect += record;
  init::AgentPlan bad;
  EXPECT_FALSE(init::DecodeAgentPlan(Bytes(after_protect), after_protect.size(), bad));
  std::string first = launch::EncodeAgentPlan(wire::kProcAsIs, {}, {});
  first += record;
  EXPECT_FALSE(init::DecodeAgentPlan(Bytes(first), first.size(), bad));
  const std::string relative = launch::EncodeAgentPlan(wire::kProcAsIs, {}, {}, {}, {}, {"/a"}, {},
                                                       {{"/a", "run/sa/token"}});
  EXPECT_FALSE(init::DecodeAgentPlan(Bytes(relative), relative.size(), bad));
}

// A host path must follow a protection directly, once.
TEST(PlanTest, AgentPlanHostPathAfterAPinIsRejected) {
  std::string bytes = launch::EncodeAgentPlan(
      wire::kProcAsIs, {}, {{policy::ProtectKind::kProtect, "/a", true, "", "/h/a"}});
  // Turn the protect record (tag 23) into a pin (tag 22): the host path then follows a pin.
  size_t at = bytes.find("/a");
  ASSERT_NE(at, std::string::npos);
  bytes[at - 8] = static_cast<char>(wire::kTagPin);
  init::AgentPlan plan;
  EXPECT_FALSE(init::DecodeAgentPlan(Bytes(bytes), bytes.size(), plan));
}

TEST(PlanTest, AgentPlanCarriesATmpdirInItsKeptParent) {
  std::string bytes = launch::EncodeAgentPlan(wire::kProcAsIs, {"/tmp/srt-1000/ab12", true}, {});
  init::AgentPlan plan;
  ASSERT_TRUE(init::DecodeAgentPlan(Bytes(bytes), bytes.size(), plan));
  EXPECT_STREQ(plan.tmpdir, "/tmp/srt-1000/ab12");
  EXPECT_TRUE(plan.tmpdir_in_kept_parent);
  bytes = launch::EncodeAgentPlan(wire::kProcAsIs, {"/tmp/srt-x"}, {});
  init::AgentPlan own;
  ASSERT_TRUE(init::DecodeAgentPlan(Bytes(bytes), bytes.size(), own));
  EXPECT_FALSE(own.tmpdir_in_kept_parent);
  // The parent must lie below the root and the TMPDIR be a plain name in it: the agent mounts on
  // the parent, and "/" or a ".." would be somewhere else.
  for (const char* bad : {"/ab12", "/tmp/", "/tmp/srt-1000/..", "/tmp/srt-1000/.", "tmp/a/b"}) {
    SCOPED_TRACE(bad);
    bytes = launch::EncodeAgentPlan(wire::kProcAsIs, {bad, true}, {});
    init::AgentPlan p;
    EXPECT_FALSE(init::DecodeAgentPlan(Bytes(bytes), bytes.size(), p));
  }
  // One TMPDIR, of either kind.
  bytes = launch::EncodeAgentPlan(wire::kProcAsIs, {"/tmp/a"}, {});
  std::string second = launch::EncodeAgentPlan(wire::kProcAsIs, {"/tmp/k/b", true}, {});
  bytes += second.substr(second.find("/tmp/k/b") - 8);
  init::AgentPlan both;
  EXPECT_FALSE(init::DecodeAgentPlan(Bytes(bytes), bytes.size(), both));
}

TEST(PlanTest, AgentPlanWithTwoTmpdirsIsRejected) {
  std::string bytes = launch::EncodeAgentPlan(wire::kProcAsIs, {"/tmp/a"}, {});
  std::string second = launch::EncodeAgentPlan(wire::kProcAsIs, {"/tmp/b"}, {});
  bytes += second.substr(bytes.find("/tmp/a") - 8 - (second.size() - bytes.size()));
  init::AgentPlan plan;
  EXPECT_FALSE(init::DecodeAgentPlan(Bytes(bytes), bytes.size(), plan));
}

TEST(PlanTest, DecoderRejectsEveryTruncation) {
  std::string bytes = launch::EncodeInitPlan({8, {3}, {"true"}});
  for (size_t n = 0; n < bytes.size(); ++n) {
    init::InitPlan plan;
    EXPECT_FALSE(init::DecodeInitPlan(Bytes(bytes), n, plan)) << "accepted " << n << " bytes";
  }
}

TEST(PlanTest, DecoderRejectsMalformedRecords) {
  std::string good = launch::EncodeInitPlan({8, {}, {"true"}});
  init::InitPlan plan;
  std::string bad_magic = good;
  bad_magic[0] = 'X';
  EXPECT_FALSE(init::DecodeInitPlan(Bytes(bad_magic), bad_magic.size(), plan));
  // An argument with an embedded NUL.
  std::string embedded = good;
  size_t at = embedded.rfind("true");
  embedded[at + 1] = '\0';
  EXPECT_FALSE(init::DecodeInitPlan(Bytes(embedded), embedded.size(), plan));
  // An unknown tag.
  std::string unknown = good;
  unknown[8] = 99;
  EXPECT_FALSE(init::DecodeInitPlan(Bytes(unknown), unknown.size(), plan));
  // A length that runs past the end.
  std::string longer = good;
  longer[12] = 100;  // the first record's length
  EXPECT_FALSE(init::DecodeInitPlan(Bytes(longer), longer.size(), plan));
  // No command.
  std::string no_args = launch::EncodeInitPlan({8, {}, {}});
  EXPECT_FALSE(init::DecodeInitPlan(Bytes(no_args), no_args.size(), plan));
  // Agent paths must be absolute.
  std::string rel =
      launch::EncodeAgentPlan(wire::kProcAsIs, {}, {{policy::ProtectKind::kPin, "rel", true, ""}});
  init::AgentPlan agent;
  EXPECT_FALSE(init::DecodeAgentPlan(Bytes(rel), rel.size(), agent));
}

TEST(PlanTest, TooManyKeepFdsIsRejected) {
  launch::InitPlanSpec spec{8, {}, {"true"}};
  for (int i = 0; i <= static_cast<int>(init::kMaxKeepFds); ++i) spec.keep_fds.push_back(100 + i);
  std::string bytes = launch::EncodeInitPlan(spec);
  init::InitPlan plan;
  EXPECT_FALSE(init::DecodeInitPlan(Bytes(bytes), bytes.size(), plan));
}

}  // namespace
}  // namespace srt
