// Settings -> Policy resolution (pure; all filesystem questions go through FsView).
#include "policy/policy.h"

#include <algorithm>
#include <map>
#include <optional>

#include "base/path.h"
#include "base/strings.h"
#include "policy/canonical.h"
#include "policy/glob.h"
#include "policy/mandatory_deny.h"

namespace srt::policy {

const char* ViewName(View v) {
  switch (v) {
    case View::kHostReadOnly:
      return "read-only";
    case View::kHostWritable:
      return "writable";
    case View::kHiddenDir:
      return "hidden (empty tmpfs)";
    case View::kHiddenFile:
      return "hidden (/dev/null)";
  }
  return "?";
}

namespace {

using strings::Quote;

// A path named by a rule, after expansion and symlink resolution.
struct Resolved {
  std::string path;  // canonical
  bool exists = false;
  std::string origin;  // e.g. "denyRead '~/.ssh'"
  std::vector<std::string> symlinks;
};

// A read rule: hides (deny) or re-opens (reopen) a path and everything below it.
struct ReadRule {
  std::string path;
  bool reopen = false;
  std::string reason;
};

// Escapes glob metacharacters so a literal base (home, cwd) can prefix a pattern.
std::string EscapeGlob(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '*' || c == '?' || c == '[' || c == ']' || c == '\\' || c == '{' || c == '}') {
      out += '\\';
    }
    out += c;
  }
  return out;
}

bool UnderManagedTree(std::string_view p) {
  // bwrap builds its own /dev and /proc; host paths there are not the policy's to grant.
  return path::IsWithin(p, "/dev") || path::IsWithin(p, "/proc");
}

class Resolver {
 public:
  Resolver(const Settings& settings, const Environment& env, const FsView& fs)
      : settings_(settings), env_(env), fs_(fs) {}

  Result<Policy> Run() {
    const FilesystemSettings& fss = settings_.filesystem;
    policy_.weaker_nested_sandbox = settings_.enable_weaker_nested_sandbox;
    policy_.allow_nested_user_namespaces = settings_.allow_nested_user_namespaces;
    policy_.allow_all_unix_sockets = settings_.network.allow_all_unix_sockets;
    policy_.network = settings_.network;
    SRT_ASSIGN_OR_RETURN(CanonicalPath cwd, Canonicalize(fs_, path::Normalize(env_.cwd)));
    policy_.cwd = cwd.path;
    // Where srt's DNS stub is named, if the proxy runs with transparent capture (the facade
    // decides); /etc/resolv.conf is often a symlink, and bwrap binds over the target.
    if (Result<CanonicalPath> resolv = Canonicalize(fs_, "/etc/resolv.conf");
        resolv && resolv->exists) {
      policy_.resolv_conf = resolv->path;
    }

    if (fss.disabled) {
      policy_.filesystem_disabled = true;
      Note("filesystem.disabled: the host filesystem is writable, no filesystem rules apply");
      return std::move(policy_);
    }

    SRT_ASSIGN_OR_RETURN(std::vector<Resolved> writes, Expand(fss.allow_write, "allowWrite"));
    SRT_ASSIGN_OR_RETURN(std::vector<Resolved> deny_writes, Expand(fss.deny_write, "denyWrite"));
    SRT_ASSIGN_OR_RETURN(std::vector<Resolved> deny_reads, Expand(fss.deny_read, "denyRead"));
    SRT_ASSIGN_OR_RETURN(std::vector<Resolved> allow_reads, Expand(fss.allow_read, "allowRead"));

    SRT_RETURN_IF_ERROR(ResolveWriteRoots(writes, deny_writes));
    BuildReadRules(deny_reads, allow_reads);
    SRT_RETURN_IF_ERROR(BuildMounts());
    SRT_RETURN_IF_ERROR(BuildProtections(deny_writes));
    return std::move(policy_);
  }

 private:
  void Note(std::string s) { policy_.notes.push_back(std::move(s)); }

  // ~, relative and glob expansion, then symlink resolution.
  Result<std::vector<Resolved>> Expand(const std::vector<PathEntry>& entries,
                                       std::string_view key) {
    const bool deny = key.substr(0, 4) == "deny";
    std::vector<Resolved> out;
    for (const PathEntry& entry : entries) {
      std::string origin = std::string(key) + " " + Quote(entry.path);
      std::string absolute = path::MakeAbsolute(entry.path, env_.home, env_.cwd);
      std::vector<std::string> candidates;
      if (!entry.literal && HasGlobMeta(entry.path)) {
        SRT_ASSIGN_OR_RETURN(std::string pattern, PatternFor(entry.path));
        Result<GlobResult> globbed = ExpandGlob(fs_, pattern);
        if (!globbed) return std::move(globbed).error().Wrap(origin);
        candidates = std::move(globbed->matches);
        for (std::string& dir : globbed->unlistable) {
          if (!deny) continue;
          Note(origin + ": " + Quote(dir) + " cannot be listed, so it is denied whole");
          candidates.push_back(std::move(dir));
        }
        // A spelling with glob characters is also the name of a path where one exists.
        if (fs_.TypeOf(absolute) != FileType::kMissing) candidates.push_back(absolute);
        if (candidates.empty()) Note(origin + ": matches nothing now");
      } else {
        candidates.push_back(absolute);
      }
      for (const std::string& c : candidates) {
        Result<CanonicalPath> canonical = Canonicalize(fs_, c);
        if (!canonical) return std::move(canonical).error().Wrap(origin);
        out.push_back(
            Resolved{canonical->path, canonical->exists, origin, std::move(canonical->symlinks)});
      }
    }
    return out;
  }

  Result<std::string> PatternFor(std::string_view spelled) const {
    std::string pattern;
    if (spelled == "~" || spelled.substr(0, 2) == "~/") {
      pattern = EscapeGlob(env_.home) + std::string(spelled.substr(1));
    } else if (path::IsAbsolute(spelled)) {
      pattern = std::string(spelled);
    } else {
      pattern = EscapeGlob(env_.cwd) + "/" + std::string(spelled);
    }
    // Lexical clean-up that cannot change a pattern's meaning: no "." segments, no "//".
    std::string cleaned;
    for (std::string_view part : path::Components(pattern)) {
      if (part == ".") continue;
      if (part == "..") {
        return MakeError(Errc::kInvalidArgument,
                         Quote(spelled) + ": '..' is not supported in a glob pattern");
      }
      cleaned += '/';
      cleaned += part;
    }
    return cleaned.empty() ? std::string("/") : cleaned;
  }

  const std::string* RootContaining(std::string_view p, bool strictly = false) const {
    const std::string* best = nullptr;
    for (const std::string& root : policy_.write_roots) {
      if (!path::IsWithin(p, root) || (strictly && p == root)) continue;
      if (!best || root.size() > best->size()) best = &root;
    }
    return best;
  }

  Result<void> ResolveWriteRoots(const std::vector<Resolved>& writes,
                                 const std::vector<Resolved>& deny_writes) {
    std::vector<const Resolved*> kept;
    for (const Resolved& w : writes) {
      if (!w.exists) {
        Note(w.origin + ": " + Quote(w.path) + " does not exist, so nothing is made writable");
        continue;
      }
      if (UnderManagedTree(w.path)) {
        Note(w.origin + ": " + Quote(w.path) + " is under /dev or /proc, which srt builds itself");
        continue;
      }
      auto denied = std::find_if(deny_writes.begin(), deny_writes.end(),
                                 [&](const Resolved& d) { return path::IsWithin(w.path, d.path); });
      if (denied != deny_writes.end()) {
        Note(w.origin + ": " + Quote(w.path) + " stays read-only because of " + denied->origin);
        continue;
      }
      kept.push_back(&w);
    }
    for (const Resolved* w : kept) {
      if (std::find(policy_.write_roots.begin(), policy_.write_roots.end(), w->path) ==
          policy_.write_roots.end()) {
        policy_.write_roots.push_back(w->path);
      }
    }
    // A write root reached through a symlink that itself lies in a writable tree may have been
    // planted by an earlier sandboxed command to make this run grant writes elsewhere.
    for (const Resolved* w : kept) {
      for (const std::string& link : w->symlinks) {
        const std::string* planted_in = RootContaining(link);
        if (!planted_in) continue;
        bool already_writable = false;
        for (const std::string& root : policy_.write_roots) {
          if (root != w->path && path::IsWithin(w->path, root)) already_writable = true;
        }
        if (already_writable) continue;
        return MakeError(Errc::kInvalidArgument,
                         w->origin + ": resolves through the symlink " + Quote(link) +
                             ", which lies in the write root " + Quote(*planted_in) +
                             " and could have been planted by a sandboxed command; name the "
                             "target " +
                             Quote(w->path) + " itself instead");
      }
    }
    std::sort(policy_.write_roots.begin(), policy_.write_roots.end());
    for (const std::string& root : policy_.write_roots) Note("write root " + Quote(root));
    return Ok();
  }

  void BuildReadRules(const std::vector<Resolved>& deny_reads,
                      const std::vector<Resolved>& allow_reads) {
    for (const Resolved& d : deny_reads) {
      if (!d.exists) {
        Note(d.origin + ": " + Quote(d.path) + " does not exist, nothing to hide");
        continue;
      }
      if (d.path == "/") {
        // Hiding the root itself would hide srt's own /dev and /proc: hide what is in it instead.
        Result<std::vector<DirEntry>> top = fs_.List("/");
        for (const DirEntry& e : top ? *top : std::vector<DirEntry>{}) {
          if (e.name == "dev" || e.name == "proc") continue;
          rules_.push_back(ReadRule{"/" + e.name, false, d.origin});
        }
        continue;
      }
      rules_.push_back(ReadRule{d.path, false, d.origin});
    }
    for (const Resolved& a : allow_reads) {
      if (!a.exists) {
        Note(a.origin + ": " + Quote(a.path) + " does not exist");
        continue;
      }
      rules_.push_back(ReadRule{a.path, true, a.origin});
    }
    for (const std::string& root : policy_.write_roots) {
      rules_.push_back(ReadRule{root, true, "allowWrite " + Quote(root)});
    }
    // ssh refuses its root-owned config snippets when they show up as owned by nobody.
    if (fs_.TypeOf("/etc/ssh/ssh_config.d") == FileType::kDirectory) {
      rules_.push_back(ReadRule{"/etc/ssh/ssh_config.d", false,
                                "ssh_config.d (owned by nobody inside the sandbox)"});
    }
  }

  // The deepest read rule at or above `p` decides; at the same path a re-open beats a deny.
  const ReadRule* DeepestRule(std::string_view p) const {
    const ReadRule* best = nullptr;
    for (const ReadRule& r : rules_) {
      if (!path::IsWithin(p, r.path)) continue;
      if (!best || r.path.size() > best->path.size() ||
          (r.path.size() == best->path.size() && r.reopen)) {
        best = &r;
      }
    }
    return best;
  }
  bool Hidden(std::string_view p) const {
    const ReadRule* best = DeepestRule(p);
    return best && !best->reopen;
  }

  View ViewOf(const std::string& p) const {
    if (Hidden(p)) {
      return fs_.TypeOf(p) == FileType::kDirectory ? View::kHiddenDir : View::kHiddenFile;
    }
    return RootContaining(p) ? View::kHostWritable : View::kHostReadOnly;
  }

  Result<void> BuildMounts() {
    std::map<std::pair<size_t, std::string>, const ReadRule*> ordered;  // (depth, path)
    for (const ReadRule& r : rules_) {
      if (UnderManagedTree(r.path)) {
        Note(r.reason + ": " + Quote(r.path) + " is under /dev or /proc, which srt builds itself");
        continue;
      }
      ordered.emplace(std::make_pair(path::Depth(r.path), r.path), &r);
    }
    std::vector<MountRule>& mounts = policy_.mounts;
    for (const auto& [key, rule] : ordered) {
      const std::string& p = key.second;
      View view = ViewOf(p);
      View inherited = View::kHostReadOnly;
      for (auto it = mounts.rbegin(); it != mounts.rend(); ++it) {
        if (it->path != p && path::IsWithin(p, it->path)) {
          inherited = it->view;
          break;
        }
      }
      bool inherited_hidden = inherited == View::kHiddenDir || inherited == View::kHiddenFile;
      bool hidden = view == View::kHiddenDir || view == View::kHiddenFile;
      if (view == inherited || (inherited_hidden && hidden)) continue;
      const ReadRule* decider = DeepestRule(p);  // several rules may name the same path
      const std::string& reason = decider ? decider->reason : rule->reason;
      mounts.push_back(MountRule{p, view, reason});
      Note(reason + ": " + Quote(p) + " is " + ViewName(view));
    }
    // The command starts in the working directory, so it must exist inside: visible, or itself
    // the root of a hidden (empty) directory.
    if (Hidden(policy_.cwd)) {
      const ReadRule* hider = DeepestRule(policy_.cwd);
      if (hider && hider->path != policy_.cwd) {
        return MakeError(Errc::kInvalidArgument,
                         "the working directory " + Quote(policy_.cwd) + " is hidden by " +
                             hider->reason +
                             "; allowRead or allowWrite it, or run srt from "
                             "another directory");
      }
    }
    // The sandbox's TMPDIR is a private tmpfs in a directory srt-agent creates below the host's
    // /tmp (and removes afterwards); /tmp itself stays as the policy has it.
    if (fs_.TypeOf("/tmp") == FileType::kDirectory) {
      policy_.tmpdir_parent = "/tmp";
    } else {
      Note("/tmp does not exist on this host, so TMPDIR is left unset");
    }
    return Ok();
  }

  Result<void> BuildProtections(const std::vector<Resolved>& deny_writes) {
    MandatoryDenyOptions options;
    options.depth = settings_.mandatory_deny_search_depth;
    options.allow_git_config = settings_.filesystem.allow_git_config;
    for (const std::string& root : policy_.write_roots) {
      if (fs_.TypeOf(root) != FileType::kDirectory) continue;
      Result<std::vector<ProtectTarget>> found = DiscoverMandatoryDenies(fs_, root, options);
      if (!found) return std::move(found).error();
      for (ProtectTarget& t : *found) {
        SRT_RETURN_IF_ERROR(AddProtection(t.path, t.exists, t.is_symlink, !t.canonical, t.reason));
      }
    }
    for (const Resolved& d : deny_writes) {
      const std::string* root = RootContaining(d.path, /*strictly=*/true);
      if (!root) {
        Note(d.origin + ": " + Quote(d.path) + " is outside every write root, already read-only");
        continue;
      }
      std::string target = d.path;
      if (!d.exists) {
        // Block the first missing component: that is what creating the path would create.
        target = *root;
        const std::string below = d.path.substr(root->size());  // outlives the views into it
        for (std::string_view part : path::Components(below)) {
          target = path::Join(target, part);
          if (fs_.TypeOf(target) == FileType::kMissing || fs_.IsPlaceholder(target)) break;
        }
      }
      SRT_RETURN_IF_ERROR(AddProtection(target, d.exists || target != d.path,
                                        fs_.TypeOf(target) == FileType::kSymlink, false, d.origin));
    }
    Finish();
    return Ok();
  }

  Result<void> AddProtection(std::string p, bool exists, bool is_symlink, bool resolve,
                             const std::string& reason) {
    if (resolve) {
      SRT_ASSIGN_OR_RETURN(CanonicalPath c, Canonicalize(fs_, p));
      p = c.path;
      exists = c.exists;
      is_symlink = false;
    }
    const std::string* root = RootContaining(p);
    if (!root) return Ok();  // outside every write root: read-only already
    if (Hidden(p)) {
      Note(reason + ": " + Quote(p) + " is hidden, so writes there never reach the host");
      return Ok();
    }
    protections_.push_back(Protection{ProtectKind::kProtect, p, exists, reason});
    for (std::string a(path::Parent(p)); a.size() > root->size() && path::IsWithin(a, *root);
         a = std::string(path::Parent(a))) {
      pins_.push_back(Protection{ProtectKind::kPin, a, true, "holds " + Quote(p)});
    }
    if (is_symlink) {
      // Protecting the link stops it being replaced; its target needs protecting too when it
      // lies in a write root, or writes would go through the link.
      SRT_ASSIGN_OR_RETURN(CanonicalPath target, Canonicalize(fs_, p));
      if (target.exists && target.path != p) {
        SRT_RETURN_IF_ERROR(AddProtection(target.path, true, false, false,
                                          reason + " (target of " + Quote(p) + ")"));
      }
    }
    return Ok();
  }

  // Orders and de-duplicates: a protection covers everything below it (srt-agent applies it
  // recursively), and a pin is only needed above a protection.
  void Finish() {
    auto by_depth = [](const Protection& a, const Protection& b) {
      size_t da = path::Depth(a.path), db = path::Depth(b.path);
      return da != db ? da < db : a.path < b.path;
    };
    std::sort(protections_.begin(), protections_.end(), by_depth);
    std::vector<Protection> protects;
    for (Protection& p : protections_) {
      bool covered = std::any_of(protects.begin(), protects.end(), [&](const Protection& q) {
        return path::IsWithin(p.path, q.path);
      });
      if (!covered) protects.push_back(std::move(p));
    }
    std::sort(pins_.begin(), pins_.end(), by_depth);
    std::vector<Protection> pins;
    for (Protection& pin : pins_) {
      bool redundant =
          std::any_of(protects.begin(), protects.end(),
                      [&](const Protection& q) { return path::IsWithin(pin.path, q.path); }) ||
          (!pins.empty() && pins.back().path == pin.path);
      if (!redundant) pins.push_back(std::move(pin));
    }
    for (Protection& p : pins) policy_.protections.push_back(std::move(p));
    for (Protection& p : protects) {
      Note(p.reason + ": " + Quote(p.path) +
           (p.exists ? " is read-only" : " cannot be created (placeholder)"));
      policy_.protections.push_back(std::move(p));
    }
  }

  const Settings& settings_;
  const Environment& env_;
  const FsView& fs_;
  Policy policy_;
  std::vector<ReadRule> rules_;
  std::vector<Protection> protections_;
  std::vector<Protection> pins_;
};

}  // namespace

Result<Policy> ResolvePolicy(const Settings& settings, const Environment& env, const FsView& fs) {
  return Resolver(settings, env, fs).Run();
}

}  // namespace srt::policy
