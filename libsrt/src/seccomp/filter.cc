// SPDX-License-Identifier: Apache-2.0
// seccomp/filter: serves the programs the build compiled (tables.h); no libseccomp here.
#include "seccomp/filter.h"

#include <linux/filter.h>

#include <cstddef>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "init_protocol/wire.h"
#include "seccomp/tables.h"

namespace srt::seccomp {
namespace {

// The kernel takes at most BPF_MAXINSNS (4096) instructions.
constexpr std::size_t kMaxInsns = 4096;
static_assert(sizeof(sock_filter) == 8, "a BPF instruction is 8 bytes");

Result<std::vector<std::byte>> Bytes(std::span<const sock_filter> program, const char* what) {
  if (program.empty() || program.size() > kMaxInsns) {
    return MakeError(Errc::kInternal, std::string("the built-in ") + what + " has " +
                                          std::to_string(program.size()) +
                                          " BPF instructions, not 1..4096");
  }
  std::vector<std::byte> bytes(program.size_bytes());
  std::memcpy(bytes.data(), program.data(), bytes.size());
  return bytes;
}

}  // namespace

Result<std::vector<std::byte>> BuildFilter(const FilterOptions& options) {
  return Bytes(tables::kDenyPrograms[FilterVariant(options)], "seccomp deny filter");
}

Result<std::vector<std::byte>> BuildGuardFilter() {
  return Bytes(tables::kGuardProgram, "seccomp guard filter");
}

std::vector<wire::GuardCall> GuardCalls() {
  return {tables::kGuardCalls.begin(), tables::kGuardCalls.end()};
}

std::vector<std::string> DescribeFilter(const FilterOptions& options) {
  const std::span<const char* const> lines = tables::kDescriptions[FilterVariant(options)];
  return {lines.begin(), lines.end()};
}

}  // namespace srt::seccomp
