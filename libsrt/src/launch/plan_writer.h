// launch/plan_writer: encodes the plans srt hands to srt-init (format in init_wire.h). Pure.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "policy/policy.h"

namespace srt::launch {

struct InitPlanSpec {
  int stderr_fd = -1;
  std::vector<int> keep_fds;
  std::vector<std::string> argv;
};

std::string EncodeInitPlan(const InitPlanSpec& spec);
// `tmpdir`: the private TMPDIR srt-agent creates and mounts ("" = none).
std::string EncodeAgentPlan(bool hide_pid, std::string_view tmpdir,
                            const std::vector<policy::Protection>& protections);

}  // namespace srt::launch
