// SPDX-License-Identifier: Apache-2.0
// runner/skills.h: skill download and extraction into <workspace>/skills/<name>/ (work-queue-
// protocol §2.6, Go SDK tools/agenttoolset/{skills,skillarchive}.go).
//
// Usage protocol: SetupSkills() before the session's sandbox starts (after the lease heartbeat
// started), CleanupSkills() after the work item ends. The workspace is writable by the sandbox,
// so everything below it is treated as hostile: directories are opened with O_NOFOLLOW below a
// directory fd and nothing is ever written or removed through a symlink.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "api/work.h"
#include "srt/result.h"

namespace srt::poller {

// Bounds on one archive (Go: 10 000 members, 1 GiB decompressed).
struct ArchiveLimits {
  uint64_t max_members = 10000;
  uint64_t max_total_bytes = uint64_t{1} << 30;  // decompressed, over all files
  size_t max_path_length = 1024;                 // bytes of a member's path
};

struct ExtractStats {
  uint64_t files = 0;
  uint64_t directories = 0;
  uint64_t bytes = 0;
  uint64_t skipped_links = 0;    // symlinks and hard links are never created (Go parity)
  uint64_t skipped_special = 0;  // devices, FIFOs, sockets
  std::string stripped_top_dir;  // the single wrapper directory removed, if any
};

// Extracts a zip, tar, tar.gz or tar.bz2 archive held in `bytes` into `dest_dir` (created,
// with parents, if missing). Refuses (and fails the whole archive on) absolute member names,
// ".." components, over-long paths, and the limits above. Symlinks, hard links and special files
// are skipped. Regular files get mode 0755 if any execute bit was set, else 0644 (no setuid,
// setgid or sticky); directories 0755. When every member lies below one top-level directory
// (and at least one is nested in it), that directory is stripped, as the Go SDK does. On
// failure `dest_dir` is removed, so it is either a complete extraction or absent.
[[nodiscard]] Result<ExtractStats> ExtractSkillArchive(std::string_view bytes,
                                                       const std::string& dest_dir,
                                                       const ArchiveLimits& limits = {});

// The skills API, for one credential (the environment key: the quickstart says the skills API
// refuses the sessions token). Errors are reported per skill, never retried here.
class SkillsApi {
 public:
  virtual ~SkillsApi() = default;
  // GET /v1/skills/{id}/versions (all pages): the version strings. Only used to resolve an
  // alias such as "latest".
  [[nodiscard]] virtual Result<std::vector<std::string>> ListVersions(
      const std::string& skill_id) = 0;
  // GET /v1/skills/{id}/versions/{version}: the version's `name`.
  [[nodiscard]] virtual Result<std::string> GetVersionName(const std::string& skill_id,
                                                           const std::string& version) = 0;
  // GET /v1/skills/{id}/versions/{version}/content (Accept: application/binary): the archive.
  [[nodiscard]] virtual Result<std::string> Download(const std::string& skill_id,
                                                     const std::string& version) = 0;
};

// SkillRef (one entry of the session's agent.skills[]) is the API layer's, in api/work.h.

struct SkillOutcome {
  std::string skill_id;
  std::string requested_version;
  std::string resolved_version;  // "" if resolution failed
  std::string directory;         // <workspace>/skills/<dir>, "" if not reached
  bool ok = false;
  std::string error;  // why it failed
  ExtractStats stats;
};

// A numeric version is returned unchanged; anything else resolves to the newest numeric version
// in `available` (compared as numbers of any length). Fails if there is none.
[[nodiscard]] Result<std::string> ResolveSkillVersion(const std::string& skill_id,
                                                      const std::string& version,
                                                      const std::vector<std::string>& available);

// The directory name for a skill: the last component of its trimmed name, or the skill id when
// that is empty, ".", ".." or contains a backslash (Go's rule). Fails if the result is still not
// one safe path component.
[[nodiscard]] Result<std::string> SkillDirName(const std::string& name,
                                               const std::string& skill_id);

// Downloads and extracts each skill into <workspace_dir>/skills/<dir>/, replacing an existing
// directory of that name. One failing skill does not stop the others; the result says what
// happened to each, in order. Fails as a whole only if <workspace_dir>/skills cannot be made.
[[nodiscard]] Result<std::vector<SkillOutcome>> SetupSkills(SkillsApi& api,
                                                            const std::vector<SkillRef>& skills,
                                                            const std::string& workspace_dir,
                                                            const ArchiveLimits& limits = {});

// Removes <workspace_dir>/skills without following symlinks (a symlink planted there is removed
// itself, never its target). Missing is fine.
[[nodiscard]] Result<void> CleanupSkills(const std::string& workspace_dir);

}  // namespace srt::poller
