// SPDX-License-Identifier: Apache-2.0
// Every file in policies/ loads without warnings, resolves on this host, and is documented.
#include <dirent.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "policy/policy.h"
#include "policy/real_fs_view.h"
#include "srt/settings.h"

namespace srt {
namespace {

std::vector<std::string> PolicyFiles() {
  std::vector<std::string> out;
  DIR* d = opendir(SRT_POLICIES_DIR);
  if (!d) return out;
  while (dirent* e = readdir(d)) {
    std::string n = e->d_name;
    if (n.size() > 5 && n.substr(n.size() - 5) == ".json") out.push_back(n);
  }
  closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

class PoliciesTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    char tmpl[] = "/var/tmp/srt-policies-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    base_ = tmpl;
    mkdir((base_ + "/home").c_str(), 0755);
    mkdir((base_ + "/home/.ssh").c_str(), 0700);
    mkdir((base_ + "/project").c_str(), 0755);
  }
  void TearDown() override { (void)!system(("rm -rf " + base_).c_str()); }
  std::string base_;
};

TEST(PoliciesDirTest, HasTheShippedPolicies) {
  std::vector<std::string> files = PolicyFiles();
  for (const char* required : {"default.json", "mcp-filesystem.json", "readonly-no-network.json"}) {
    EXPECT_NE(std::find(files.begin(), files.end(), required), files.end()) << required;
  }
}

TEST_P(PoliciesTest, LoadsWithoutWarningsAndResolves) {
  std::string path = std::string(SRT_POLICIES_DIR) + "/" + GetParam();
  Result<LoadedSettings> loaded = LoadSettingsFile(path);
  ASSERT_TRUE(loaded.has_value()) << loaded.error().message();
  EXPECT_TRUE(loaded->warnings.empty()) << loaded->warnings.front();
  policy::RealFsView fs;
  // srt-poller resolves its session policy in the session's workspace, which it binds at
  // /workspace (a directory the host does not have); the others are for a project directory.
  const std::string cwd = GetParam() == "poller-session.json" ? "/workspace" : base_ + "/project";
  Result<policy::Policy> p = policy::ResolvePolicy(loaded->settings, {base_ + "/home", cwd}, fs);
  ASSERT_TRUE(p.has_value()) << p.error().message();
  // No shipped policy leaves the home directory's ssh keys readable: the deepest mount at or
  // above them hides them.
  bool ssh_hidden = false;
  size_t deepest = 0;
  for (const policy::MountRule& m : p->mounts) {
    const std::string ssh = base_ + "/home/.ssh";
    const bool covers = ssh == m.path || ssh.rfind(m.path + "/", 0) == 0 || m.path == "/";
    if (!covers || m.path.size() < deepest) continue;
    deepest = m.path.size();
    ssh_hidden = m.view == policy::View::kHiddenDir;
  }
  EXPECT_TRUE(ssh_hidden) << GetParam() << " leaves ~/.ssh readable";
}

TEST_P(PoliciesTest, IsDocumentedInTheReadme) {
  std::ifstream in(std::string(SRT_POLICIES_DIR) + "/README.md");
  std::stringstream readme;
  readme << in.rdbuf();
  EXPECT_NE(readme.str().find("`" + GetParam() + "`"), std::string::npos)
      << GetParam() << " has no line in policies/README.md";
}

TEST(PoliciesSemanticsTest, DefaultWritesOnlyTheWorkingDirectoryAndReadonlyWritesNothing) {
  char tmpl[] = "/var/tmp/srt-policies-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  std::string base = tmpl;
  policy::RealFsView fs;
  Result<LoadedSettings> d = LoadSettingsFile(std::string(SRT_POLICIES_DIR) + "/default.json");
  ASSERT_TRUE(d.has_value());
  Result<policy::Policy> p = policy::ResolvePolicy(d->settings, {base, base}, fs);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->write_roots, std::vector<std::string>{base});
  Result<LoadedSettings> r =
      LoadSettingsFile(std::string(SRT_POLICIES_DIR) + "/readonly-no-network.json");
  ASSERT_TRUE(r.has_value());
  p = policy::ResolvePolicy(r->settings, {base, base}, fs);
  ASSERT_TRUE(p.has_value());
  EXPECT_TRUE(p->write_roots.empty());
  (void)!system(("rm -rf " + base).c_str());
}

INSTANTIATE_TEST_SUITE_P(Shipped, PoliciesTest, ::testing::ValuesIn(PolicyFiles()),
                         [](const ::testing::TestParamInfo<std::string>& param) {
                           std::string n = param.param.substr(0, param.param.size() - 5);
                           std::replace(n.begin(), n.end(), '-', '_');
                           return n;
                         });

}  // namespace
}  // namespace srt
