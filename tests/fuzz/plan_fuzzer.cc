// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: srt-init's plan decoders (srt-cli/init/plan.h) on arbitrary bytes, driven
// as srt-init drives them: pass 1 validates and counts into a plan, pass 2 fills arrays sized
// from pass 1, reusing the same plan. Both decoders see every input.
// Properties checked (a violation traps): pass 2 accepts what pass 1 accepted and agrees with
// it; argc >= 1 (0 exactly for a warm sandbox's, kTagServe), argv[argc] is null, and every argv
// string and agent path starts inside the input and is NUL-terminated inside it, in record order;
// agent paths are absolute; counts stay within kMaxArgs/kMaxOps/kMaxKeepFds; a reopened device is
// one of the harmless few, with no flag that creates or truncates; an accepted plan re-encoded by
// launch/plan_writer decodes to the same plan.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "launch/plan_writer.h"
#include "plan.h"

namespace {

using srt::init::AgentOp;
using srt::init::AgentPlan;
using srt::init::InitPlan;
using srt::init::OpKind;

void Check(bool ok) {
  if (!ok) __builtin_trap();
}

const uint8_t* Bytes(const std::string& s) { return reinterpret_cast<const uint8_t*>(s.data()); }

// `s` starts inside [data, data + size) and its NUL is inside too.
bool InsideInput(const char* s, const uint8_t* data, size_t size) {
  auto at = reinterpret_cast<uintptr_t>(s);
  auto begin = reinterpret_cast<uintptr_t>(data);
  if (s == nullptr || at < begin || at >= begin + size) return false;
  return std::memchr(s, 0, begin + size - at) != nullptr;
}

// Decodes the way init_role.cc does; returns false if pass 1 rejects the input.
bool DecodeInitTwoPass(const uint8_t* data, size_t size, InitPlan& plan,
                       std::vector<const char*>& argv) {
  if (!srt::init::DecodeInitPlan(data, size, plan)) return false;
  const InitPlan first = plan;
  Check((plan.argc >= 1) != plan.serve && plan.argc <= srt::init::kMaxArgs);
  Check(plan.stderr_fd >= 0 && plan.keep_count <= srt::init::kMaxKeepFds);
  // A plain run names its command's working directory, absolute; a warm sandbox none.
  Check(plan.serve ? plan.cwd == nullptr : plan.cwd != nullptr && plan.cwd[0] == '/');
  argv.assign(plan.argc + 1, reinterpret_cast<const char*>(&first));  // poison: not in the input
  plan.argv = argv.data();
  Check(srt::init::DecodeInitPlan(data, size, plan));
  Check(plan.argc == first.argc && plan.stderr_fd == first.stderr_fd &&
        plan.keep_count == first.keep_count);
  for (size_t i = 0; i < plan.keep_count; ++i) {
    Check(plan.keep_fds[i] == first.keep_fds[i] && plan.keep_fds[i] >= 0);
  }
  Check(argv[plan.argc] == nullptr);
  return true;
}

void CheckInitPlan(const uint8_t* data, size_t size) {
  InitPlan plan;
  std::vector<const char*> argv;
  if (!DecodeInitTwoPass(data, size, plan, argv)) return;
  for (size_t i = 0; i < plan.argc; ++i) {
    Check(InsideInput(argv[i], data, size));
    Check(i == 0 || argv[i - 1] + std::strlen(argv[i - 1]) < argv[i]);
  }
  // A fresh plan for pass 2 gives the same result as the reused one.
  InitPlan fresh;
  std::vector<const char*> fresh_argv(plan.argc + 1);
  fresh.argv = fresh_argv.data();
  Check(srt::init::DecodeInitPlan(data, size, fresh) && fresh.argc == plan.argc);
  Check(fresh_argv == argv);

  srt::launch::InitPlanSpec spec;
  spec.stderr_fd = plan.stderr_fd;
  spec.keep_fds.assign(plan.keep_fds, plan.keep_fds + plan.keep_count);
  spec.argv.assign(argv.begin(), argv.end() - 1);
  spec.terminal = plan.terminal;
  spec.serve = plan.serve;
  if (plan.cwd) {
    Check(InsideInput(plan.cwd, data, size));
    spec.cwd = plan.cwd;
  }
  Check(plan.terminal <= 7 && plan.reopen_count <= srt::init::kMaxKeepFds + 3);
  for (size_t i = 0; i < plan.reopen_count; ++i) {
    const InitPlan::Reopen& r = plan.reopens[i];
    Check(r.fd >= 0 && (static_cast<uint32_t>(r.flags) & ~srt::init::kReopenFlags) == 0);
    Check(InsideInput(r.path, data, size) && srt::init::IsReopenableDevice(r.path));
    spec.reopens.push_back({r.fd, r.flags, r.path});
  }
  const std::string again = srt::launch::EncodeInitPlan(spec);
  InitPlan round;
  std::vector<const char*> round_argv;
  Check(DecodeInitTwoPass(Bytes(again), again.size(), round, round_argv));
  Check(round.argc == plan.argc && round.stderr_fd == plan.stderr_fd &&
        round.keep_count == plan.keep_count);
  Check(std::memcmp(round.keep_fds, plan.keep_fds, plan.keep_count * sizeof(int)) == 0);
  Check(round.terminal == plan.terminal && round.reopen_count == plan.reopen_count &&
        round.serve == plan.serve);
  Check((round.cwd == nullptr) == (plan.cwd == nullptr) &&
        (plan.cwd == nullptr || std::strcmp(round.cwd, plan.cwd) == 0));
  for (size_t i = 0; i < plan.reopen_count; ++i) {
    Check(round.reopens[i].fd == plan.reopens[i].fd &&
          round.reopens[i].flags == plan.reopens[i].flags &&
          std::strcmp(round.reopens[i].path, plan.reopens[i].path) == 0);
  }
  for (size_t i = 0; i < plan.argc; ++i) Check(std::strcmp(round_argv[i], argv[i]) == 0);
}

// Decodes the way agent_role.cc does; returns false if pass 1 rejects the input.
bool DecodeAgentTwoPass(const uint8_t* data, size_t size, AgentPlan& plan,
                        std::vector<AgentOp>& ops) {
  if (!srt::init::DecodeAgentPlan(data, size, plan)) return false;
  const AgentPlan first = plan;
  Check(plan.op_count <= srt::init::kMaxOps);
  ops.assign(plan.op_count ? plan.op_count : 1, AgentOp{static_cast<OpKind>(0xff), nullptr});
  plan.ops = ops.data();
  Check(srt::init::DecodeAgentPlan(data, size, plan));
  Check(plan.op_count == first.op_count && plan.proc == first.proc);
  ops.resize(plan.op_count);
  return true;
}

void CheckAgentPlan(const uint8_t* data, size_t size) {
  AgentPlan plan;
  std::vector<AgentOp> ops;
  if (!DecodeAgentTwoPass(data, size, plan, ops)) return;
  std::vector<srt::policy::Protection> protections;
  std::vector<std::string> covers, masks;
  std::vector<srt::policy::SymlinkedFile> symlinked;
  std::vector<std::string> shows, seals;
  std::set<std::pair<std::string, std::string>> spelled;
  bool other_op = false;  // seen one that is not a show or a seal
  for (size_t i = 0; i < ops.size(); ++i) {
    Check(ops[i].kind == OpKind::kPin || ops[i].kind == OpKind::kProtect ||
          ops[i].kind == OpKind::kCover || ops[i].kind == OpKind::kMask ||
          ops[i].kind == OpKind::kShow || ops[i].kind == OpKind::kSeal);
    Check(InsideInput(ops[i].path, data, size) && ops[i].path[0] == '/');
    if (ops[i].kind == OpKind::kShow || ops[i].kind == OpKind::kSeal) {
      // Before every other op, never the root itself, at most kMaxShows shows.
      Check(!other_op && ops[i].spelled == nullptr && ops[i].path[1] != 0);
      (ops[i].kind == OpKind::kShow ? shows : seals).emplace_back(ops[i].path);
    } else {
      other_op = true;
    }
    if (ops[i].spelled != nullptr) {
      // The file of the cover or mask just before, by another name.
      Check(i > 0 && ops[i - 1].path == ops[i].path && ops[i - 1].kind == ops[i].kind);
      Check(InsideInput(ops[i].spelled, data, size) && ops[i].spelled[0] == '/');
      Check(ops[i].path + std::strlen(ops[i].path) < ops[i].spelled);
      spelled.emplace(ops[i].path, ops[i].spelled);
      symlinked.push_back({ops[i].path, ops[i].spelled});
      continue;
    }
    const char* previous = i == 0                          ? nullptr
                           : ops[i - 1].spelled != nullptr ? ops[i - 1].spelled
                                                           : ops[i - 1].path;
    Check(i == 0 || previous + std::strlen(previous) < ops[i].path);
    if (ops[i].kind == OpKind::kShow || ops[i].kind == OpKind::kSeal) continue;
    if (ops[i].kind == OpKind::kCover) {
      covers.emplace_back(ops[i].path);
      continue;
    }
    if (ops[i].kind == OpKind::kMask) {
      masks.emplace_back(ops[i].path);
      continue;
    }
    protections.push_back({ops[i].kind == OpKind::kPin ? srt::policy::ProtectKind::kPin
                                                       : srt::policy::ProtectKind::kProtect,
                           ops[i].path, true, ""});
  }
  // The encoder writes covers and masks apart from the rest: compare each group in its order.
  const std::string again = srt::launch::EncodeAgentPlan(
      plan.proc, {plan.tmpdir ? plan.tmpdir : "", plan.tmpdir_in_kept_parent}, protections, {}, {},
      covers, masks, symlinked, plan.ptys, shows, seals);
  Check(plan.ptys <= srt::wire::kMaxPtys);
  Check(plan.show_count == shows.size() && shows.size() <= srt::wire::kMaxShows);
  AgentPlan round;
  std::vector<AgentOp> round_ops;
  Check(DecodeAgentTwoPass(Bytes(again), again.size(), round, round_ops));
  Check(round.proc == plan.proc);
  Check(round.tmpdir_in_kept_parent == plan.tmpdir_in_kept_parent);
  Check(round.ptys == plan.ptys);
  // Spellings: the encoder writes each after every cover or mask of its file (a plan from
  // elsewhere may name a file twice, or as a cover and a mask, and spell it once), so compare
  // them as a set of (file, name).
  std::set<std::pair<std::string, std::string>> round_spelled;
  for (const AgentOp& op : round_ops) {
    if (op.spelled != nullptr) round_spelled.emplace(op.path, op.spelled);
  }
  Check(round_spelled == spelled);
  // Group 0: pins and protections; 1: covers; 2: masks (each without its spellings); 3: shows;
  // 4: seals.
  auto group = [](OpKind k) {
    return k == OpKind::kCover  ? 1
           : k == OpKind::kMask ? 2
           : k == OpKind::kShow ? 3
           : k == OpKind::kSeal ? 4
                                : 0;
  };
  auto by_group = [&](const std::vector<AgentOp>& v, int g) {
    std::vector<std::pair<OpKind, std::string>> out;
    for (const AgentOp& op : v) {
      if (group(op.kind) == g && op.spelled == nullptr) out.emplace_back(op.kind, op.path);
    }
    return out;
  };
  for (int g = 0; g < 5; ++g) Check(by_group(round_ops, g) == by_group(ops, g));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  CheckInitPlan(data, size);
  CheckAgentPlan(data, size);
  return 0;
}
