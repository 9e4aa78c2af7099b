// SPDX-License-Identifier: Apache-2.0
// The parameterised fixture shared by the integration suites: every test runs as root and as an
// unprivileged user (nobody), through the real srt binary.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "srt_runner.h"

namespace srt::it {

class SrtTest : public ::testing::TestWithParam<Identity> {
 protected:
  void SetUp() override {
    if (!SandboxingWorks()) {
      const char* must = std::getenv("SRT_MUST_WORK");
      if (must && std::string(must) == "1") FAIL() << "bwrap sandboxes do not work on this host";
      GTEST_SKIP() << "bwrap sandboxes do not work on this host (set SRT_MUST_WORK=1 to fail)";
    }
    run_ = std::make_unique<Runner>(GetParam());
  }

  Runner& run() { return *run_; }
  bool root() const { return GetParam() == Identity::kRoot; }

  // {probe, args...}
  static std::vector<std::string> Probe(std::vector<std::string> args) {
    args.insert(args.begin(), ProbeBinary());
    return args;
  }
  // srt -s SETTINGS srt-probe ARGS..., from `cwd` (default: the scratch root); returns the
  // probe's exit status, i.e. the errno of its operation.
  int Errno(const std::string& settings, std::vector<std::string> args,
            const std::string& cwd = "") {
    RunResult r = run().Srt(settings, Probe(std::move(args)), cwd);
    last_ = r;
    return r.exit_code;
  }
  RunResult last_;

 private:
  std::unique_ptr<Runner> run_;
};

inline std::string IdentityName(const ::testing::TestParamInfo<Identity>& info) {
  return info.param == Identity::kRoot ? "root" : "unprivileged";
}

#define SRT_INSTANTIATE(suite)                                                           \
  INSTANTIATE_TEST_SUITE_P(                                                              \
      AsRootAndUnprivileged, suite,                                                      \
      ::testing::Values(::srt::it::Identity::kRoot, ::srt::it::Identity::kUnprivileged), \
      ::srt::it::IdentityName)

}  // namespace srt::it
