// SPDX-License-Identifier: Apache-2.0
// Bounded discovery of mandatory write denies under a write root.
#include "policy/mandatory_deny.h"

#include <array>
#include <deque>
#include <iterator>

#include "base/path.h"
#include "base/strings.h"

namespace srt::policy {

namespace {

constexpr size_t kMaxGitFileBytes = 4096;

// The names a directory's listing is searched for: the protected ones, .claude and .git.
constexpr auto kWatched = [] {
  std::array<std::string_view, std::size(kProtectedFiles) + std::size(kProtectedDirs) + 2> all{};
  size_t n = 0;
  for (std::string_view name : kProtectedFiles) all[n++] = name;
  for (std::string_view name : kProtectedDirs) all[n++] = name;
  all[n++] = ".claude";
  all[n++] = ".git";
  return all;
}();

class Scanner {
 public:
  Scanner(const FsView& fs, const std::string& root, const MandatoryDenyOptions& options)
      : fs_(fs), root_(root), options_(options) {}

  Result<std::vector<ProtectTarget>> Run() {
    std::deque<std::pair<std::string, int>> queue{{root_, 0}};
    while (!queue.empty()) {
      auto [dir, level] = std::move(queue.front());
      queue.pop_front();
      if (++directories_ > options_.max_directories) {
        return TooLarge(std::to_string(options_.max_directories) + " directories");
      }
      Result<std::vector<DirEntry>> listed = fs_.List(dir);
      if (!listed) {
        // The command runs as the same user, so it cannot list this directory either, but it may
        // still be able to create names in it: protect the whole directory.
        Add(dir, /*exists=*/true, /*is_symlink=*/false,
            "cannot be listed (" + listed.error().message() + ") under write root " +
                strings::Quote(root_));
        continue;
      }
      entries_ += listed->size();
      if (entries_ > options_.max_entries) {
        return TooLarge(std::to_string(options_.max_entries) + " entries");
      }
      // Only dot-names matter here: one pass over the listing picks them out (no index of every
      // name, which cost more than the listing itself in a tree of thousands of directories).
      std::array<FileType, kWatched.size()> watched;
      watched.fill(FileType::kMissing);
      for (const DirEntry& e : *listed) {
        if (e.name.empty() || e.name[0] != '.') continue;
        for (size_t i = 0; i < kWatched.size(); ++i) {
          if (e.name == kWatched[i]) watched[i] = e.type;
        }
      }
      auto type_of = [&](std::string_view name) {
        for (size_t i = 0; i < kWatched.size(); ++i) {
          if (kWatched[i] == name) return watched[i];
        }
        return FileType::kMissing;
      };
      const bool at_root = level == 0;

      for (std::string_view name : kProtectedFiles) CheckName(dir, name, type_of(name), at_root);
      for (std::string_view name : kProtectedDirs) CheckName(dir, name, type_of(name), at_root);
      CheckClaude(dir, type_of(".claude"), at_root);
      SRT_RETURN_IF_ERROR(CheckGit(dir, type_of(".git")));

      if (level + 1 >= options_.depth) continue;
      for (const DirEntry& e : *listed) {
        if (e.type != FileType::kDirectory || e.name == "node_modules" || e.name == ".git" ||
            e.name == ".claude" || IsProtectedName(e.name)) {
          continue;
        }
        queue.emplace_back(path::Join(dir, e.name), level + 1);
      }
    }
    return std::move(targets_);
  }

 private:
  static bool IsProtectedName(std::string_view name) {
    for (std::string_view n : kProtectedFiles) {
      if (n == name) return true;
    }
    for (std::string_view n : kProtectedDirs) {
      if (n == name) return true;
    }
    return false;
  }

  void Add(std::string path, bool exists, bool is_symlink, std::string reason,
           bool canonical = true) {
    targets_.push_back(
        ProtectTarget{std::move(path), exists, is_symlink, canonical, std::move(reason)});
  }

  std::string Reason(std::string_view what) const {
    return "mandatory deny " + strings::Quote(what) + " under write root " + strings::Quote(root_);
  }

  // A placeholder an earlier srt left stands for a missing path (the agent removes it).
  FileType Effective(const std::string& p, FileType type) const {
    return type == FileType::kDirectory && fs_.IsPlaceholder(p) ? FileType::kMissing : type;
  }

  // `type` is the listing's: a name it does not show is missing without asking again (most
  // names in most directories are; a placeholder is a directory, which the listing shows).
  void CheckName(const std::string& dir, std::string_view name, FileType type, bool at_root) {
    if (type == FileType::kMissing && !at_root) return;
    std::string p = path::Join(dir, name);
    const bool placeholder = Effective(p, type) == FileType::kMissing;
    if (!placeholder) {
      Add(std::move(p), true, type == FileType::kSymlink, Reason(name));
    } else {
      // Missing at the root, or a placeholder an earlier srt left anywhere: the agent removes it
      // and the write guard refuses its creation.
      Add(std::move(p), false, false, Reason(name));
    }
  }

  void CheckClaude(const std::string& dir, FileType type, bool at_root) {
    std::string claude = path::Join(dir, ".claude");
    if (Effective(claude, type) == FileType::kMissing) {
      // The write guard refuses .claude/commands and .claude/agents (and a symlink or a moved-in
      // directory standing for .claude); .claude itself may be made.
      if (at_root || type != FileType::kMissing) {
        for (std::string_view sub : kProtectedClaudeDirs) {
          Add(path::Join(claude, sub), false, false, Reason(".claude/" + std::string(sub)));
        }
      }
      return;
    }
    if (type != FileType::kDirectory) {
      Add(claude, true, type == FileType::kSymlink, Reason(".claude (not a directory)"));
      return;
    }
    for (std::string_view sub : kProtectedClaudeDirs) {
      std::string p = path::Join(claude, sub);
      FileType t = Effective(p, fs_.TypeOf(p));
      std::string what = ".claude/" + std::string(sub);
      if (t != FileType::kMissing) {
        Add(p, true, t == FileType::kSymlink, Reason(what));
      } else if (at_root) {
        Add(p, false, false, Reason(what));
      }
    }
  }

  Result<void> CheckGit(const std::string& dir, FileType type) {
    std::string git = path::Join(dir, ".git");
    if (type == FileType::kMissing) return Ok();
    if (type == FileType::kDirectory) {
      AddGitDir(git, /*canonical=*/true);
      return Ok();
    }
    // A worktree or submodule: the .git file names the real git directory. Protect the file (so
    // it cannot be pointed elsewhere) and the hooks and config of the repository it names.
    Add(git, true, type == FileType::kSymlink, Reason(".git (file)"));
    if (type != FileType::kRegular) return Ok();
    Result<std::string> text = fs_.ReadSmallFile(git, kMaxGitFileBytes);
    if (!text) return Ok();  // unreadable for us is unreadable for the command too
    std::string_view line = *text;
    constexpr std::string_view kPrefix = "gitdir: ";
    if (line.substr(0, kPrefix.size()) != kPrefix) return Ok();
    line.remove_prefix(kPrefix.size());
    while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.remove_suffix(1);
    std::string gitdir =
        path::IsAbsolute(line) ? path::Normalize(line) : path::Normalize(path::Join(dir, line));
    // Worktrees keep hooks and config in the common directory named by "commondir".
    std::string common = gitdir;
    Result<std::string> commondir =
        fs_.ReadSmallFile(path::Join(gitdir, "commondir"), kMaxGitFileBytes);
    if (commondir) {
      std::string_view c = *commondir;
      while (!c.empty() && (c.back() == '\n' || c.back() == '\r')) c.remove_suffix(1);
      common = path::IsAbsolute(c) ? path::Normalize(c) : path::Normalize(path::Join(gitdir, c));
    }
    AddGitDir(common, /*canonical=*/false);
    if (common != gitdir) AddGitDir(gitdir, /*canonical=*/false);
    return Ok();
  }

  void AddGitDir(const std::string& git, bool canonical) {
    std::string hooks = path::Join(git, "hooks");
    FileType hooks_type = Effective(hooks, fs_.TypeOf(hooks));
    Add(hooks, hooks_type != FileType::kMissing, hooks_type == FileType::kSymlink,
        Reason(".git/hooks"), canonical);
    if (!options_.allow_git_config) {
      std::string config = path::Join(git, "config");
      FileType config_type = fs_.TypeOf(config);
      if (config_type != FileType::kMissing) {
        Add(config, true, config_type == FileType::kSymlink, Reason(".git/config"), canonical);
      }
    }
  }

  Error TooLarge(const std::string& what) const {
    return MakeError(Errc::kInvalidArgument,
                     "write root " + strings::Quote(root_) + " has more than " + what +
                         " within mandatoryDenySearchDepth " + std::to_string(options_.depth) +
                         "; lower mandatoryDenySearchDepth or allow a narrower directory");
  }

  const FsView& fs_;
  const std::string& root_;
  const MandatoryDenyOptions& options_;
  std::vector<ProtectTarget> targets_;
  size_t directories_ = 0;
  size_t entries_ = 0;
};

}  // namespace

Result<std::vector<ProtectTarget>> DiscoverMandatoryDenies(const FsView& fs,
                                                           const std::string& root,
                                                           const MandatoryDenyOptions& options) {
  return Scanner(fs, root, options).Run();
}

}  // namespace srt::policy
