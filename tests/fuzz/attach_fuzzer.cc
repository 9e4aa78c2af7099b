// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: what srt --serve and srt --attach parse from each other
// (srt-cli/attach_protocol.h) and the exec plans srt-init decodes (init_protocol/exec_plan.h),
// on arbitrary bytes. The first byte picks the parser; the rest is its input.
// Properties checked (a violation traps): a frame parsed from either side re-encodes to the same
// bytes; exec plan pass 2 accepts what pass 1 accepted and agrees with it (counts, argv[argc]
// and envp[envc] null, every string inside the input and NUL-terminated there, argv[0] not
// empty, the working directory absolute, devices only the harmless few on 0-2, never both a
// device and a terminal on one descriptor); a decoded attach command re-encodes to a plan that
// decodes to the same command.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "attach_protocol.h"
#include "init_protocol/exec_plan.h"

namespace {

void Check(bool ok) {
  if (!ok) __builtin_trap();
}

bool InsideInput(const char* s, const uint8_t* data, size_t size) {
  auto at = reinterpret_cast<uintptr_t>(s);
  auto begin = reinterpret_cast<uintptr_t>(data);
  if (s == nullptr || at < begin || at >= begin + size) return false;
  return std::memchr(s, 0, begin + size - at) != nullptr;
}

void CheckFrame(const uint8_t* data, size_t size, bool from_client) {
  srt::Result<srt::cli::AttachFrame> f =
      srt::cli::ParseAttachFrame(std::span<const uint8_t>(data, size), from_client);
  if (!f) return;
  std::vector<uint8_t> again = srt::cli::EncodeAttachFrame(*f);
  Check(again.size() == size && std::memcmp(again.data(), data, size) == 0);
}

void CheckExecPlan(const uint8_t* data, size_t size) {
  srt::wire::ExecPlan plan;
  if (!srt::wire::DecodeExecPlan(data, size, plan)) return;
  const srt::wire::ExecPlan first = plan;
  Check(plan.argc >= 1 && plan.argc <= srt::wire::kMaxExecArgs &&
        plan.envc <= srt::wire::kMaxExecEnv);
  std::vector<const char*> argv(plan.argc + 1, "poison"), envp(plan.envc + 1, "poison");
  plan.argv = argv.data();
  plan.envp = envp.data();
  Check(srt::wire::DecodeExecPlan(data, size, plan));
  Check(plan.argc == first.argc && plan.envc == first.envc && plan.cwd == first.cwd &&
        plan.terminal == first.terminal && plan.reopen_count == first.reopen_count);
  Check(argv[plan.argc] == nullptr && envp[plan.envc] == nullptr);
  Check(argv[0][0] != 0);
  for (size_t i = 0; i < plan.argc; ++i) Check(InsideInput(argv[i], data, size));
  for (size_t i = 0; i < plan.envc; ++i) {
    Check(InsideInput(envp[i], data, size) && envp[i][0] != '=' && std::strchr(envp[i], '='));
  }
  Check(InsideInput(plan.cwd, data, size) && plan.cwd[0] == '/');
  Check(plan.terminal <= 7 && plan.reopen_count <= srt::wire::kMaxExecReopens);
  for (size_t i = 0; i < plan.reopen_count; ++i) {
    const auto& r = plan.reopens[i];
    Check(r.fd >= 0 && r.fd <= 2 && (plan.terminal & (1u << r.fd)) == 0);
    Check((static_cast<uint32_t>(r.flags) & ~srt::wire::kExecReopenFlags) == 0);
    Check(InsideInput(r.path, data, size) && srt::wire::IsExecReopenDevice(r.path));
  }
}

void CheckCommand(const uint8_t* data, size_t size) {
  srt::Result<srt::cli::AttachCommand> c =
      srt::cli::DecodeAttachCommand(std::span<const uint8_t>(data, size));
  if (!c) return;
  const std::string again = srt::cli::EncodeAttachCommand(*c);
  srt::Result<srt::cli::AttachCommand> back = srt::cli::DecodeAttachCommand(
      std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(again.data()), again.size()));
  Check(back && back->argv == c->argv && back->env == c->env && back->cwd == c->cwd);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t* rest = data + 1;
  const size_t n = size - 1;
  switch (data[0] % 4) {
    case 0:
      CheckFrame(rest, n, true);
      break;
    case 1:
      CheckFrame(rest, n, false);
      break;
    case 2:
      CheckExecPlan(rest, n);
      break;
    default:
      CheckCommand(rest, n);
      break;
  }
  return 0;
}
