// SPDX-License-Identifier: Apache-2.0
// The built-in seccomp programs (seccomp/filter.h, served from the table the build generated)
// are exactly what the compiler (seccomp/compile.h) makes for this host now: every combination
// of FilterOptions, its description, the guard's program and its calls. A table left stale by
// a build that did not run the generator again, or a mix-up of the options' places in it,
// fails here.
#include <gtest/gtest.h>

#include <cstddef>
#include <set>
#include <string>
#include <vector>

#include "init_protocol/wire.h"
#include "seccomp/compile.h"
#include "seccomp/filter.h"

namespace srt::seccomp {
namespace {

// Every combination, spelled out field by field (not through FilterOptionsOf, which the table
// itself uses).
std::vector<FilterOptions> AllOptions() {
  std::vector<FilterOptions> all;
  for (const bool unix_sockets : {false, true}) {
    for (const bool namespaces : {false, true}) {
      for (const bool xattr : {false, true}) {
        all.push_back(FilterOptions{.allow_unix_sockets = unix_sockets,
                                    .allow_namespaces = namespaces,
                                    .deny_xattr_writes = xattr});
      }
    }
  }
  return all;
}

std::string Name(const FilterOptions& o) {
  return std::string("unix ") + (o.allow_unix_sockets ? "1" : "0") + " ns " +
         (o.allow_namespaces ? "1" : "0") + " xattr " + (o.deny_xattr_writes ? "1" : "0");
}

TEST(SeccompTablesTest, EveryDenyProgramIsTheCompilersForThisHost) {
  std::set<std::vector<std::byte>> distinct;
  for (const FilterOptions& options : AllOptions()) {
    SCOPED_TRACE(Name(options));
    Result<std::vector<std::byte>> built = BuildFilter(options);
    ASSERT_TRUE(built.has_value()) << built.error().message();
    Result<std::vector<std::byte>> compiled = CompileFilter(options, HostArch::kNative);
    ASSERT_TRUE(compiled.has_value()) << compiled.error().message();
    EXPECT_EQ(*built, *compiled);
    distinct.insert(*built);
  }
  // Each option changes the program, so the comparison above tells every place apart.
  EXPECT_EQ(distinct.size(), kFilterVariants);
}

TEST(SeccompTablesTest, EveryDescriptionIsTheCompilersForThisHost) {
  for (const FilterOptions& options : AllOptions()) {
    SCOPED_TRACE(Name(options));
    EXPECT_EQ(DescribeFilter(options), CompileDescription(options, HostArch::kNative));
  }
}

TEST(SeccompTablesTest, GuardProgramIsTheCompilersForThisHost) {
  Result<std::vector<std::byte>> built = BuildGuardFilter();
  ASSERT_TRUE(built.has_value()) << built.error().message();
  Result<std::vector<std::byte>> compiled = CompileGuardFilter(HostArch::kNative);
  ASSERT_TRUE(compiled.has_value()) << compiled.error().message();
  EXPECT_EQ(*built, *compiled);
}

TEST(SeccompTablesTest, GuardCallsAreTheCompilersForThisHost) {
  const std::vector<wire::GuardCall> built = GuardCalls();
  const std::vector<wire::GuardCall> compiled = CompileGuardCalls(HostArch::kNative);
  ASSERT_EQ(built.size(), compiled.size());
  EXPECT_FALSE(built.empty());
  EXPECT_LE(built.size(), wire::kMaxGuardCalls);
  for (std::size_t i = 0; i < built.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(built[i].arch, compiled[i].arch);
    EXPECT_EQ(built[i].nr, compiled[i].nr);
    EXPECT_EQ(built[i].op, compiled[i].op);
  }
}

}  // namespace
}  // namespace srt::seccomp
