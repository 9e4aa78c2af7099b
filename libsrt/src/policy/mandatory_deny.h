// SPDX-License-Identifier: Apache-2.0
// policy/mandatory_deny: finds the files and directories under a write root that a sandboxed
// command must never be able to create or change, because something outside the sandbox would
// later execute or trust them (shell startup files, git hooks and config, editor and agent
// configuration, MCP server lists).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "policy/fs_view.h"
#include "srt/result.h"

namespace srt::policy {

// Names protected in every scanned directory. Directories are protected with their contents.
inline constexpr std::string_view kProtectedFiles[] = {".bashrc",     ".bash_profile", ".zshrc",
                                                       ".zprofile",   ".profile",      ".gitconfig",
                                                       ".gitmodules", ".ripgreprc",    ".mcp.json"};
inline constexpr std::string_view kProtectedDirs[] = {".vscode", ".idea"};
inline constexpr std::string_view kProtectedClaudeDirs[] = {"commands", "agents"};

struct MandatoryDenyOptions {
  int depth = 3;                   // directories up to depth-1 levels below the root are scanned
  bool allow_git_config = false;   // leave .git/config writable
  size_t max_directories = 20000;  // directories listed per write root
  size_t max_entries = 400000;     // entries examined per write root
};

struct ProtectTarget {
  std::string path;  // absolute; for a missing path this is the first missing component
  bool exists = false;
  bool is_symlink = false;  // the entry itself is a symlink (its target may need protecting too)
  bool canonical = true;    // false for paths derived from a worktree's "gitdir:" line
  std::string reason;       // for --debug
};

// Scans `root` (a canonical existing directory) breadth-first, without following symlinks and
// without entering node_modules or .git directories. Missing protected names are reported only
// directly in the root (where the write guard blocks their creation) and for the hooks directory
// of every repository found; elsewhere only existing entries are reported.
// Errors: the limits (never a silently partial scan).
[[nodiscard]] Result<std::vector<ProtectTarget>> DiscoverMandatoryDenies(
    const FsView& fs, const std::string& root, const MandatoryDenyOptions& options);

}  // namespace srt::policy
