// SPDX-License-Identifier: Apache-2.0
// cgroup planning from /proc/self/cgroup and mountinfo text: placement, files, errors.
#include "cgroup/plan.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>

namespace srt::cgroup {

void PrintTo(const FileWrite& w, std::ostream* os) {
  *os << "{" << w.path << " = " << w.value << (w.if_exists ? ", if it exists" : "") << "}";
}

void PrintTo(const Delegation& d, std::ostream* os) {
  *os << "{parent " << d.parent << ", supervisor " << d.supervisor << ", procs "
      << d.supervisor_procs << ", writes";
  for (const FileWrite& w : d.writes) *os << " " << w.path << " = " << w.value;
  *os << "}";
}

namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// This build host: v1 controllers, each in its own hierarchy, plus a cgroup2 mount without
// controllers; the memory cgroup is a sub-cgroup.
constexpr const char* kHybridCgroup =
    "9:name=systemd:/\n8:pids:/\n7:blkio:/\n4:memory:/process_api/abc\n1:cpu:/\n2:cpuacct:/\n0::/"
    "\n";
constexpr const char* kHybridMountinfo =
    "22 1 0:20 / / rw,relatime - ext4 /dev/root rw\n"
    "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
    "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
    "33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct\n"
    "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
    "39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids\n"
    "40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd\n"
    "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";

HostCgroups Host(std::string cgroup, std::string mountinfo,
                 std::map<std::string, std::string> files) {
  HostCgroups h;
  h.proc_self_cgroup = std::move(cgroup);
  h.mountinfo = std::move(mountinfo);
  h.read_file = [files](const std::string& p) -> std::optional<std::string> {
    auto it = files.find(p);
    if (it == files.end()) return std::nullopt;
    return it->second;
  };
  return h;
}

TEST(CgroupPlanTest, ParsesProcCgroup) {
  auto e = ParseProcCgroup("2:cpu,cpuacct:/a b\n0::/user.slice\n");
  ASSERT_TRUE(e.has_value()) << e.error().message();
  EXPECT_THAT(*e, ElementsAre(ProcCgroupEntry{2, {"cpu", "cpuacct"}, "/a b"},
                              ProcCgroupEntry{0, {}, "/user.slice"}));
  EXPECT_FALSE(ParseProcCgroup("garbage\n").has_value());
  EXPECT_FALSE(ParseProcCgroup("x:cpu:/\n").has_value());
}

TEST(CgroupPlanTest, ParsesMountinfoCgroupMountsOnly) {
  auto m = ParseMountinfo(std::string(kHybridMountinfo) +
                          "50 31 0:40 /docker/x /sys/fs/cgroup/cpu\\040set rw - cgroup cgroup "
                          "rw,cpu,cpuacct,clone_children\n");
  ASSERT_TRUE(m.has_value()) << m.error().message();
  ASSERT_EQ(m->size(), 7u);
  EXPECT_EQ((*m)[0], (CgroupMount{false, "/sys/fs/cgroup/cpu", "/", {"cpu"}}));
  EXPECT_EQ((*m)[4], (CgroupMount{false, "/sys/fs/cgroup/systemd", "/", {}}));
  EXPECT_EQ((*m)[5], (CgroupMount{true, "/sys/fs/cgroup/unified", "/", {}}));
  EXPECT_EQ((*m)[6],
            (CgroupMount{false, "/sys/fs/cgroup/cpu set", "/docker/x", {"cpu", "cpuacct"}}));
  EXPECT_FALSE(ParseMountinfo("1 2 3\n").has_value());
}

TEST(CgroupPlanTest, NoLimitsNoCgroups) {
  auto p = PlanCgroups(Host(kHybridCgroup, kHybridMountinfo, {}), {}, "s-1");
  ASSERT_TRUE(p.has_value());
  EXPECT_TRUE(p->mkdirs.empty());
  EXPECT_TRUE(p->leaves.empty());
}

TEST(CgroupPlanTest, HybridHostUsesV1HierarchiesUnderTheOwnCgroup) {
  auto p = PlanCgroups(Host(kHybridCgroup, kHybridMountinfo,
                            {{"/sys/fs/cgroup/unified/cgroup.controllers", "hugetlb\n"}}),
                       {256u << 20, 500, 32}, "s-1");
  ASSERT_TRUE(p.has_value()) << p.error().message();
  const std::string mem = "/sys/fs/cgroup/memory/process_api/abc/srt/s-1";
  const std::string cpu = "/sys/fs/cgroup/cpu/srt/s-1";
  const std::string pids = "/sys/fs/cgroup/pids/srt/s-1";
  EXPECT_THAT(p->mkdirs, ElementsAre("/sys/fs/cgroup/cpu/srt", cpu,
                                     "/sys/fs/cgroup/memory/process_api/abc/srt", mem,
                                     "/sys/fs/cgroup/pids/srt", pids));
  EXPECT_THAT(p->writes,
              ElementsAre(FileWrite{cpu + "/cpu.cfs_period_us", "100000"},
                          FileWrite{cpu + "/cpu.cfs_quota_us", "50000"},
                          FileWrite{mem + "/memory.limit_in_bytes", "268435456"},
                          FileWrite{mem + "/memory.memsw.limit_in_bytes", "268435456", true},
                          FileWrite{pids + "/pids.max", "32"}));
  // v1: joined through "tasks", whose write skips the global lock "cgroup.procs" takes.
  EXPECT_THAT(p->procs_files, ElementsAre(cpu + "/tasks", mem + "/tasks", pids + "/tasks"));
  EXPECT_THAT(p->leaves, ElementsAre(cpu, mem, pids));
  EXPECT_THAT(p->oom_events, ElementsAre(mem + "/memory.oom_control"));
}

// An inner cgroup below the leaf, in each hierarchy of one of its controllers (not cpu's), with
// its own limits; the sandbox's processes stay in the leaf (v1 lets a parent hold them).
TEST(CgroupPlanTest, V1InnerCgroupSitsBelowTheLeafWithItsOwnLimits) {
  auto p = PlanCgroups(Host(kHybridCgroup, kHybridMountinfo, {}),
                       {256u << 20, 500, 32, 192u << 20, 24}, "s-1");
  ASSERT_TRUE(p.has_value()) << p.error().message();
  const std::string mem = "/sys/fs/cgroup/memory/process_api/abc/srt/s-1";
  const std::string cpu = "/sys/fs/cgroup/cpu/srt/s-1";
  const std::string pids = "/sys/fs/cgroup/pids/srt/s-1";
  EXPECT_THAT(
      p->mkdirs,
      ElementsAre("/sys/fs/cgroup/cpu/srt", cpu, "/sys/fs/cgroup/memory/process_api/abc/srt", mem,
                  mem + "/inner", "/sys/fs/cgroup/pids/srt", pids, pids + "/inner"));
  EXPECT_THAT(
      p->writes,
      ElementsAre(FileWrite{cpu + "/cpu.cfs_period_us", "100000"},
                  FileWrite{cpu + "/cpu.cfs_quota_us", "50000"},
                  FileWrite{mem + "/memory.limit_in_bytes", "268435456"},
                  FileWrite{mem + "/memory.memsw.limit_in_bytes", "268435456", true},
                  FileWrite{mem + "/inner/memory.limit_in_bytes", "201326592"},
                  FileWrite{mem + "/inner/memory.memsw.limit_in_bytes", "201326592", true},
                  FileWrite{pids + "/pids.max", "32"}, FileWrite{pids + "/inner/pids.max", "24"}));
  // v1: joined through "tasks", whose write skips the global lock "cgroup.procs" takes.
  EXPECT_THAT(p->procs_files, ElementsAre(cpu + "/tasks", mem + "/tasks", pids + "/tasks"));
  EXPECT_THAT(p->inner_procs_files,
              ElementsAre(mem + "/inner/cgroup.procs", pids + "/inner/cgroup.procs"));
  // Removed last first: the inner cgroups before their leaves.
  EXPECT_THAT(p->leaves, ElementsAre(cpu, mem, mem + "/inner", pids, pids + "/inner"));
  // A v1 memory.oom_control counts its own cgroup's kills only.
  EXPECT_THAT(p->oom_events,
              ElementsAre(mem + "/memory.oom_control", mem + "/inner/memory.oom_control"));
}

TEST(CgroupPlanTest, AnInnerLimitMustBeBelowTheSandboxs) {
  const HostCgroups host = Host(kHybridCgroup, kHybridMountinfo, {});
  auto same = PlanCgroups(host, {64u << 20, 0, 0, 64u << 20, 0}, "x");
  ASSERT_FALSE(same.has_value());
  EXPECT_EQ(same.error().message(),
            "limits.inner_memory_bytes 67108864 must be below limits.memory_bytes 67108864 (0 "
            "sets no memory limit)");
  auto unlimited = PlanCgroups(host, {0, 0, 0, 0, 8}, "x");
  ASSERT_FALSE(unlimited.has_value());
  EXPECT_EQ(unlimited.error().message(),
            "limits.inner_pids 8 must be below limits.pids 0 (0 sets none)");
  // Only the limits it has: a memory-only inner cgroup leaves the pids hierarchy alone.
  auto memory_only = PlanCgroups(host, {64u << 20, 0, 32, 32u << 20, 0}, "x");
  ASSERT_TRUE(memory_only.has_value()) << memory_only.error().message();
  EXPECT_THAT(memory_only->inner_procs_files,
              ElementsAre("/sys/fs/cgroup/memory/process_api/abc/srt/x/inner/cgroup.procs"));
}

constexpr const char* kV2Mountinfo =
    "22 1 0:20 / / rw,relatime - ext4 /dev/root rw\n"
    "30 22 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n";

TEST(CgroupPlanTest, PureV2AtTheRootEnablesControllersForSrt) {
  auto p = PlanCgroups(Host("0::/\n", kV2Mountinfo,
                            {{"/sys/fs/cgroup/cgroup.controllers", "cpuset cpu io memory pids\n"},
                             {"/sys/fs/cgroup/cgroup.subtree_control", "memory\n"}}),
                       {1 << 20, 1000, 0}, "x");
  ASSERT_TRUE(p.has_value()) << p.error().message();
  const std::string leaf = "/sys/fs/cgroup/srt/x";
  EXPECT_THAT(p->mkdirs, ElementsAre("/sys/fs/cgroup/srt", leaf));
  EXPECT_THAT(p->writes,
              ElementsAre(FileWrite{"/sys/fs/cgroup/cgroup.subtree_control", "+cpu"},
                          FileWrite{"/sys/fs/cgroup/srt/cgroup.subtree_control", "+memory"},
                          FileWrite{"/sys/fs/cgroup/srt/cgroup.subtree_control", "+cpu"},
                          FileWrite{leaf + "/memory.max", "1048576"},
                          FileWrite{leaf + "/memory.swap.max", "0", true},
                          FileWrite{leaf + "/cpu.max", "100000 100000"}));
  EXPECT_THAT(p->procs_files, ElementsAre(leaf + "/cgroup.procs"));
  EXPECT_THAT(p->oom_events, ElementsAre(leaf + "/memory.events"));
}

// --- A subtree systemd delegated (Delegate=yes) -------------------------------------------------

constexpr const char* kUnit = "/sys/fs/cgroup/system.slice/srt-poller.service";

HostCgroups DelegatedHost(std::string own, std::map<std::string, std::string> files,
                          std::string mark = "trusted.delegate") {
  files.emplace("/sys/fs/cgroup/cgroup.controllers", "cpuset cpu io memory pids\n");
  HostCgroups h = Host("0::" + own + "\n", kV2Mountinfo, std::move(files));
  h.read_xattr = [mark](const std::string& path,
                        const std::string& name) -> std::optional<std::string> {
    if (path == kUnit && name == mark) return "1";
    return std::nullopt;
  };
  return h;
}

TEST(CgroupPlanTest, ADelegatedUnitMovesItsProcessToALeafAndHandsTheControllersOn) {
  const std::string unit = kUnit;
  for (const char* mark : {"trusted.delegate", "user.delegate"}) {
    auto d = PlanDelegation(DelegatedHost("/system.slice/srt-poller.service",
                                          {{unit + "/cgroup.controllers", "cpu io memory pids\n"},
                                           {unit + "/cgroup.subtree_control", "\n"}},
                                          mark),
                            {1 << 30, 2000, 512});
    ASSERT_TRUE(d.has_value()) << d.error().message();
    ASSERT_TRUE(d->has_value()) << mark;
    EXPECT_EQ(**d, (Delegation{unit,
                               unit + "/supervisor",
                               unit + "/supervisor/cgroup.procs",
                               {FileWrite{unit + "/cgroup.subtree_control", "+memory"},
                                FileWrite{unit + "/cgroup.subtree_control", "+cpu"},
                                FileWrite{unit + "/cgroup.subtree_control", "+pids"}}}));
  }
}

TEST(CgroupPlanTest, ASecondDelegationFindsItTakenAlready) {
  const std::string unit = kUnit;
  auto d = PlanDelegation(DelegatedHost("/system.slice/srt-poller.service/supervisor",
                                        {{unit + "/cgroup.controllers", "cpu memory pids\n"},
                                         {unit + "/cgroup.subtree_control", "cpu memory pids\n"}}),
                          {1 << 30, 2000, 512});
  ASSERT_TRUE(d.has_value()) << d.error().message();
  ASSERT_TRUE(d->has_value());
  EXPECT_EQ(**d, Delegation{unit});
}

TEST(CgroupPlanTest, NoDelegationWithoutTheMarkTheControllersOrV2) {
  const std::string unit = kUnit;
  const std::map<std::string, std::string> offered = {
      {unit + "/cgroup.controllers", "cpu memory pids\n"}};
  auto check = [](const HostCgroups& host, const char* why) {
    auto d = PlanDelegation(host, {1 << 30, 2000, 512});
    ASSERT_TRUE(d.has_value()) << d.error().message();
    EXPECT_FALSE(d->has_value()) << why;
  };
  check(DelegatedHost("/system.slice/srt-poller.service", offered, "user.other"), "no mark");
  check(DelegatedHost("/system.slice/srt-poller.service",
                      {{unit + "/cgroup.controllers", "cpu memory\n"}}),
        "pids not offered");
  check(DelegatedHost("/", offered), "the root");
  check(Host(kHybridCgroup, kHybridMountinfo, {}), "v1 controllers");
  auto none = PlanDelegation(DelegatedHost("/system.slice/srt-poller.service", offered), {});
  ASSERT_TRUE(none.has_value());
  EXPECT_FALSE(none->has_value()) << "no limits";
}

TEST(CgroupPlanTest, SandboxesGoBelowTheDelegatedCgroupTheCallerNames) {
  const std::string unit = kUnit;
  Limits limits{0, 0, 10};
  limits.v2_parent = unit;
  const HostCgroups host = DelegatedHost("/system.slice/srt-poller.service/supervisor",
                                         {{unit + "/cgroup.subtree_control", "cpu pids\n"}});
  auto p = PlanCgroups(host, limits, "x");
  ASSERT_TRUE(p.has_value()) << p.error().message();
  EXPECT_THAT(p->mkdirs, ElementsAre(unit + "/srt", unit + "/srt/x"));
  EXPECT_THAT(p->writes, ElementsAre(FileWrite{unit + "/srt/cgroup.subtree_control", "+pids"},
                                     FileWrite{unit + "/srt/x/pids.max", "10"}));
  auto parents = LeafParents(host, limits);
  ASSERT_TRUE(parents.has_value()) << parents.error().message();
  EXPECT_THAT(*parents, ElementsAre(unit + "/srt"));

  // A cgroup that does not hand the controllers on, or lies outside the mount, is an error.
  limits.pids = 0;
  limits.memory_bytes = 1 << 30;
  auto not_handed = PlanCgroups(host, limits, "x");
  ASSERT_FALSE(not_handed.has_value());
  EXPECT_THAT(not_handed.error().message(), HasSubstr("does not hand the controllers 'memory'"));
  limits.v2_parent = "/sys/fs/cgroupx/unit";
  auto outside = PlanCgroups(host, limits, "x");
  ASSERT_FALSE(outside.has_value());
  EXPECT_THAT(outside.error().message(), HasSubstr("is not below the cgroup2 mount"));
}

TEST(CgroupPlanTest, V2DelegatedOwnCgroupHoldsSrt) {
  const std::string own = "/sys/fs/cgroup/system.slice/poller.service";
  auto p = PlanCgroups(Host("0::/system.slice/poller.service\n", kV2Mountinfo,
                            {{"/sys/fs/cgroup/cgroup.controllers", "cpu memory pids\n"},
                             {own + "/cgroup.subtree_control", "cpu memory pids\n"}}),
                       {0, 0, 10}, "x");
  ASSERT_TRUE(p.has_value()) << p.error().message();
  EXPECT_THAT(p->mkdirs, ElementsAre(own + "/srt", own + "/srt/x"));
  EXPECT_THAT(p->writes, ElementsAre(FileWrite{own + "/srt/cgroup.subtree_control", "+pids"},
                                     FileWrite{own + "/srt/x/pids.max", "10"}));
}

// v2 keeps processes in leaves only: the leaf hands its controllers to the inner cgroup and
// the sandbox's own processes go to a sibling of it.
TEST(CgroupPlanTest, V2InnerCgroupHasASiblingForTheSandboxsProcesses) {
  auto p = PlanCgroups(Host("0::/\n", kV2Mountinfo,
                            {{"/sys/fs/cgroup/cgroup.controllers", "cpu memory pids\n"},
                             {"/sys/fs/cgroup/cgroup.subtree_control", "cpu memory pids\n"}}),
                       {1 << 30, 1000, 64, 1 << 29, 48}, "x");
  ASSERT_TRUE(p.has_value()) << p.error().message();
  const std::string leaf = "/sys/fs/cgroup/srt/x";
  EXPECT_THAT(p->mkdirs,
              ElementsAre("/sys/fs/cgroup/srt", leaf, leaf + "/sandbox", leaf + "/inner"));
  EXPECT_THAT(p->writes,
              ElementsAre(FileWrite{"/sys/fs/cgroup/srt/cgroup.subtree_control", "+memory"},
                          FileWrite{"/sys/fs/cgroup/srt/cgroup.subtree_control", "+cpu"},
                          FileWrite{"/sys/fs/cgroup/srt/cgroup.subtree_control", "+pids"},
                          FileWrite{leaf + "/memory.max", "1073741824"},
                          FileWrite{leaf + "/memory.swap.max", "0", true},
                          FileWrite{leaf + "/cpu.max", "100000 100000"},
                          FileWrite{leaf + "/pids.max", "64"},
                          FileWrite{leaf + "/cgroup.subtree_control", "+memory"},
                          FileWrite{leaf + "/cgroup.subtree_control", "+pids"},
                          FileWrite{leaf + "/inner/memory.max", "536870912"},
                          FileWrite{leaf + "/inner/memory.swap.max", "0", true},
                          FileWrite{leaf + "/inner/pids.max", "48"}));
  EXPECT_THAT(p->procs_files, ElementsAre(leaf + "/sandbox/cgroup.procs"));
  EXPECT_THAT(p->inner_procs_files, ElementsAre(leaf + "/inner/cgroup.procs"));
  EXPECT_THAT(p->leaves, ElementsAre(leaf, leaf + "/sandbox", leaf + "/inner"));
  // memory.events counts the kills below the leaf too.
  EXPECT_THAT(p->oom_events, ElementsAre(leaf + "/memory.events"));
  // The sweep looks where the leaves are, not in them.
  auto parents = LeafParents(Host("0::/\n", kV2Mountinfo,
                                  {{"/sys/fs/cgroup/cgroup.controllers", "cpu memory pids\n"},
                                   {"/sys/fs/cgroup/cgroup.subtree_control", "cpu memory pids\n"}}),
                             {1 << 30, 1000, 64, 1 << 29, 48});
  ASSERT_TRUE(parents.has_value()) << parents.error().message();
  EXPECT_THAT(*parents, ElementsAre("/sys/fs/cgroup/srt"));
}

// A sweep for a dead owner's leaves looks where the plan would put them, and nowhere else.
TEST(CgroupPlanTest, LeafParentsAreWherePlansPutTheLeaves) {
  auto hybrid = LeafParents(Host(kHybridCgroup, kHybridMountinfo, {}), {256u << 20, 500, 32});
  ASSERT_TRUE(hybrid.has_value()) << hybrid.error().message();
  EXPECT_THAT(*hybrid,
              ElementsAre("/sys/fs/cgroup/cpu/srt", "/sys/fs/cgroup/memory/process_api/abc/srt",
                          "/sys/fs/cgroup/pids/srt"));
  const std::string own = "/sys/fs/cgroup/system.slice/poller.service";
  auto v2 = LeafParents(Host("0::/system.slice/poller.service\n", kV2Mountinfo,
                             {{"/sys/fs/cgroup/cgroup.controllers", "cpu memory pids\n"},
                              {own + "/cgroup.subtree_control", "cpu memory pids\n"}}),
                        {1 << 20, 1000, 10});
  ASSERT_TRUE(v2.has_value()) << v2.error().message();
  EXPECT_THAT(*v2, ElementsAre(own + "/srt"));
  auto none = LeafParents(Host(kHybridCgroup, kHybridMountinfo, {}), {0, 0, 0});
  ASSERT_TRUE(none.has_value());
  EXPECT_TRUE(none->empty());
  EXPECT_FALSE(LeafParents(Host("0::/\n", kV2Mountinfo, {}), {0, 0, 10}).has_value());
}

TEST(CgroupPlanTest, MissingControllerIsAClearError) {
  auto p = PlanCgroups(
      Host("0::/\n", kV2Mountinfo, {{"/sys/fs/cgroup/cgroup.controllers", "cpu memory\n"}}),
      {0, 0, 10}, "x");
  ASSERT_FALSE(p.has_value());
  EXPECT_EQ(p.error().message(),
            "cannot enforce the process-count limit: no cgroup hierarchy offers the 'pids' "
            "controller (cgroup v2 at '/sys/fs/cgroup' offers 'cpu memory', and no cgroup v1 "
            "'pids' hierarchy is mounted)");
}

TEST(CgroupPlanTest, TinyCpuQuotaIsRefused) {
  auto p = PlanCgroups(Host(kHybridCgroup, kHybridMountinfo, {}), {0, 5, 0}, "x");
  ASSERT_FALSE(p.has_value());
  EXPECT_THAT(p.error().message(), HasSubstr("limits.cpu_millis 5"));
  // The smallest quota taken is 10 (1 ms of each 100 ms period); 9 is refused.
  EXPECT_FALSE(PlanCgroups(Host(kHybridCgroup, kHybridMountinfo, {}), {0, 9, 0}, "x").has_value());
  auto smallest = PlanCgroups(Host(kHybridCgroup, kHybridMountinfo, {}), {0, 10, 0}, "x");
  ASSERT_TRUE(smallest.has_value()) << smallest.error().message();
  EXPECT_THAT(smallest->writes,
              Contains(FileWrite{"/sys/fs/cgroup/cpu/srt/x/cpu.cfs_quota_us", "1000"}));
}

TEST(CgroupPlanTest, V1HierarchyThisProcessIsNotInIsAClearError) {
  auto p = PlanCgroups(Host("1:cpu:/\n0::/\n", kHybridMountinfo, {}), {0, 0, 10}, "x");
  ASSERT_FALSE(p.has_value());
  EXPECT_THAT(p.error().message(),
              HasSubstr("no cgroup v1 'pids' hierarchy is joined by this process"));
}

}  // namespace
}  // namespace srt::cgroup
