// SPDX-License-Identifier: Apache-2.0
// Settings -> Policy resolution (pure; all filesystem questions go through FsView).
#include "policy/policy.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>

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
    case View::kSyntheticDir:
      return "srt's read-only tmpfs holding the host's entries";
    case View::kSymlink:
      return "a symlink";
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

// A bind (Environment::binds) after validation.
struct Bind {
  std::string source;  // canonical host path
  std::string target;  // normalised sandbox path
  bool writable = false;
  bool is_dir = false;
  bool mountpoint_exists = false;  // on the host, or in the source of an enclosing bind
  bool own_repositories = false;
  std::string origin;  // "bind '/src' -> '/target'"
};

// A read rule: hides (deny) or re-opens (reopen) a path and everything below it.
struct ReadRule {
  std::string path;
  bool reopen = false;
  std::string reason;
  bool forced = false;  // a credential deny: no re-open below or at it lifts it
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

// One walk for all: resolution lists the same directories for each `**` pattern and again for
// the mandatory denies under each write root. With a glob in the settings, every listing is kept
// for the length of one resolution and handed out again instead of listing the directory anew.
// Only listings: an lstat is still made for every name asked about, since a directory that can
// be listed need not be searchable (mode r--: the listing shows names lstat cannot reach).
// Held by the resolution alone; the listings are bounded by the glob and walk limits.
class ListingCache final : public FsView {
 public:
  explicit ListingCache(const FsView& fs) : fs_(fs) {}

  FileType TypeOf(const std::string& p) const override { return fs_.TypeOf(p); }
  Result<std::string> ReadLink(const std::string& p) const override { return fs_.ReadLink(p); }
  Result<std::vector<DirEntry>> List(const std::string& dir) const override {
    if (auto it = listings_.find(dir); it != listings_.end()) return it->second;
    Result<std::vector<DirEntry>> listed = fs_.List(dir);
    if (listed) listings_.emplace(dir, *listed);
    return listed;
  }
  Result<FileId> IdOf(const std::string& p) const override { return fs_.IdOf(p); }
  Result<std::string> ReadSmallFile(const std::string& p, size_t max_bytes) const override {
    return fs_.ReadSmallFile(p, max_bytes);
  }
  bool IsPlaceholder(const std::string& p) const override { return fs_.IsPlaceholder(p); }

 private:
  const FsView& fs_;
  mutable std::unordered_map<std::string, std::vector<DirEntry>> listings_;
};

bool HasGlob(const FilesystemSettings& fss) {
  for (const auto* list : {&fss.allow_write, &fss.deny_write, &fss.deny_read, &fss.allow_read}) {
    for (const PathEntry& e : *list) {
      if (!e.literal && HasGlobMeta(e.path)) return true;
    }
  }
  return false;
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
    SRT_ASSIGN_OR_RETURN(policy_.network,
                         ResolveNetworkPolicy(settings_.network, env_.proxy_variables));
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
      SRT_RETURN_IF_ERROR(ResolveBinds({}));
      SRT_RETURN_IF_ERROR(BuildBindMounts());
      return std::move(policy_);
    }

    SRT_ASSIGN_OR_RETURN(std::vector<Resolved> writes, Expand(fss.allow_write, "allowWrite"));
    SRT_ASSIGN_OR_RETURN(std::vector<Resolved> deny_writes, Expand(fss.deny_write, "denyWrite"));
    SRT_ASSIGN_OR_RETURN(std::vector<Resolved> deny_reads, Expand(fss.deny_read, "denyRead"));
    SRT_ASSIGN_OR_RETURN(std::vector<Resolved> allow_reads, Expand(fss.allow_read, "allowRead"));
    SRT_RETURN_IF_ERROR(ResolveCredentialFiles());

    SRT_RETURN_IF_ERROR(ResolveWriteRoots(writes, deny_writes));
    SRT_RETURN_IF_ERROR(ResolveBinds(deny_writes));
    BuildReadRules(deny_reads, allow_reads);
    for (const Resolved& d : credential_denies_) {
      if (!d.exists) {
        Note(d.origin + ": " + Quote(d.path) + " does not exist, nothing to hide");
        policy_.missing_denied_files.push_back(d.path);
        continue;
      }
      rules_.push_back(ReadRule{d.path, false, d.origin, /*forced=*/true});
    }
    IndexReadRules();  // rules_ is complete
    SRT_RETURN_IF_ERROR(BuildMounts());
    SRT_RETURN_IF_ERROR(BuildBindMounts());
    SRT_RETURN_IF_ERROR(BuildProtections(deny_writes, deny_reads));
    // Where the write guard's git rules hold: every tree the command may write and the host's
    // git may later read.
    policy_.allow_git_config = fss.allow_git_config;
    policy_.guard_roots = policy_.write_roots;
    for (const Bind& b : binds_) {
      if (!b.writable || !b.is_dir) continue;
      if (b.own_repositories) {
        Note(b.origin + ": holds the command's own repositories; git's rules do not apply there");
        continue;
      }
      policy_.guard_roots.push_back(b.target);
    }
    return std::move(policy_);
  }

 private:
  void Note(std::string s) { policy_.notes.push_back(std::move(s)); }
  void Warn(std::string s) {
    Note(s);
    policy_.warnings.push_back(std::move(s));
  }

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
        // A symlink on the way may have been planted by an earlier sandbox whose policy was
        // wider (turning W/a/b into a link to ~/.ssh for a later allowWrite [W/a/b]): an entry
        // that grants access is never followed outside its own tree, as upstream. A deny entry
        // only takes access away, so it is followed to what it protects.
        const std::string spelled = path::Normalize(c);
        if (!deny && !canonical->symlinks.empty() && !path::IsWithin(canonical->path, spelled)) {
          Warn(origin + ": " + Quote(spelled) + " resolves through a symlink to " +
               Quote(canonical->path) + ", outside its own tree: skipped; name " +
               Quote(canonical->path) + " itself if that is what it should grant");
          continue;
        }
        // A file denied from reading through symlinks: the host may point one elsewhere while
        // the sandbox runs (srt-agent follows the spelling again then).
        if ((key.substr(0, 8) == "denyRead" || key == "deny (mask)") &&
            !canonical->symlinks.empty() && spelled != canonical->path) {
          const SymlinkedFile link{canonical->path, spelled};
          if (std::find(policy_.symlinked_files.begin(), policy_.symlinked_files.end(), link) ==
              policy_.symlinked_files.end()) {
            policy_.symlinked_files.push_back(link);
          }
        }
        out.push_back(
            Resolved{canonical->path, canonical->exists, origin, std::move(canonical->symlinks)});
      }
    }
    return out;
  }

  // credentials.files: denies join the read denies (resolved like them, symlinks followed to
  // what they protect); masks name single regular files, resolved the same way.
  Result<void> ResolveCredentialFiles() {
    const std::vector<CredentialFile>& files = settings_.credentials.files;
    for (size_t i = 0; i < files.size(); ++i) {
      const CredentialFile& f = files[i];
      const std::string key =
          f.mode == CredentialMode::kDeny ? "denyRead (credentials.files)" : "deny (mask)";
      SRT_ASSIGN_OR_RETURN(std::vector<Resolved> found, Expand({f.path}, key));
      for (Resolved& r : found) {
        r.origin = "credentials.files[" + std::to_string(i) + "] " + Quote(f.path.path);
        if (f.mode == CredentialMode::kDeny) {
          credential_denies_.push_back(std::move(r));
          continue;
        }
        const FileType type = fs_.TypeOf(r.path);
        if (type == FileType::kMissing) {
          Note(r.origin + ": " + Quote(r.path) + " does not exist, nothing to mask");
          continue;
        }
        if (type != FileType::kRegular) {
          return MakeError(Errc::kInvalidArgument,
                           r.origin + ": " + Quote(r.path) +
                               " is not a regular file; mode \"mask\" applies to a single file "
                               "(use mode \"deny\" for a directory)");
        }
        Note(r.origin + ": " + Quote(r.path) + " is shown masked");
        policy_.masked_files.push_back(MaskedFile{r.path, i});
      }
    }
    return Ok();
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
    std::sort(policy_.write_roots.begin(), policy_.write_roots.end());
    for (const std::string& root : policy_.write_roots) Note("write root " + Quote(root));
    return Ok();
  }

  // Validates the binds and resolves their sources. Runs after the write roots are known (a source
  // reached through a symlink in a write root is refused, as for allowWrite).
  Result<void> ResolveBinds(const std::vector<Resolved>& deny_writes) {
    for (const BindRequest& request : env_.binds) {
      SRT_ASSIGN_OR_RETURN(Bind b, ResolveBind(request, deny_writes));
      binds_.push_back(std::move(b));
    }
    std::sort(binds_.begin(), binds_.end(), [](const Bind& a, const Bind& b) {
      size_t da = path::Depth(a.target), db = path::Depth(b.target);
      return da != db ? da < db : a.target < b.target;
    });
    // A target inside another bind's target is mounted in that bind's source: bwrap would create a
    // missing mount point there, on the host, so it must exist already.
    for (Bind& b : binds_) {
      const Bind* outer = EnclosingBind(b.target);
      if (!outer) continue;
      std::string host = MapToHost(*outer, b.target);
      FileType t = fs_.TypeOf(host);
      if (t == FileType::kMissing || (t == FileType::kDirectory) != b.is_dir) {
        return MakeError(Errc::kInvalidArgument,
                         b.origin + ": the target lies inside " + outer->origin + ", so " +
                             Quote(host) + " must exist as a " + (b.is_dir ? "directory" : "file") +
                             " (bwrap would otherwise create it in the source, on the host)");
      }
      b.mountpoint_exists = true;
    }
    for (const Bind& b : binds_) {
      Note(b.origin + ": " + (b.writable ? "writable" : "read-only") +
           (b.mountpoint_exists ? "" : " (the target does not exist on the host)"));
      if (b.writable) policy_.writable_bind_sources.push_back(b.source);
    }
    return Ok();
  }

  Result<Bind> ResolveBind(const BindRequest& request, const std::vector<Resolved>& deny_writes) {
    Bind b;
    b.origin = "bind " + Quote(request.source) + " -> " + Quote(request.target);
    auto invalid = [&](const std::string& why) {
      return MakeError(Errc::kInvalidArgument, b.origin + ": " + why);
    };
    const std::string& target = request.target;
    if (target.find('\0') != std::string::npos || request.source.find('\0') != std::string::npos) {
      return invalid("a path contains a NUL byte");
    }
    if (!path::IsAbsolute(target)) {
      return invalid("the target " + Quote(target) + " is not an absolute path");
    }
    if (path::Normalize(target) != target) {
      return invalid("the target " + Quote(target) + " is not normalised (write " +
                     Quote(path::Normalize(target)) + ")");
    }
    if (target == "/") return invalid("the target cannot be the sandbox's root '/'");
    for (std::string_view managed : {"/proc", "/dev", "/sys"}) {
      if (path::IsWithin(target, managed)) {
        return invalid("the target " + Quote(target) + " is under " + std::string(managed) +
                       ", which the sandbox gets from the kernel");
      }
    }
    for (const Bind& other : binds_) {
      if (other.target == target) {
        return invalid("the target " + Quote(target) + " is already the target of " + other.origin);
      }
    }
    if (!path::IsAbsolute(request.source)) {
      return invalid("the source " + Quote(request.source) + " is not an absolute path");
    }
    Result<CanonicalPath> source = Canonicalize(fs_, path::Normalize(request.source));
    if (!source) return std::move(source).error().Wrap(b.origin);
    if (!source->exists) return invalid("the source " + Quote(request.source) + " does not exist");
    const FileType type = fs_.TypeOf(source->path);
    if (type != FileType::kDirectory && type != FileType::kRegular) {
      return invalid("the source " + Quote(source->path) +
                     " is neither a directory nor a regular file");
    }
    if (UnderManagedTree(source->path)) {
      return invalid("the source " + Quote(source->path) +
                     " is under /dev or /proc, which srt builds itself");
    }
    for (const std::string& link : source->symlinks) {
      if (const std::string* root = RootContaining(link)) {
        return invalid("the source resolves through the symlink " + Quote(link) +
                       ", which lies in the write root " + Quote(*root) +
                       " and could have been planted by a sandboxed command; name " +
                       Quote(source->path) + " itself instead");
      }
    }
    // bwrap resolves the target inside the new root while that is being built, through the
    // host's symlinks: a target must name real directories.
    Result<CanonicalPath> resolved = Canonicalize(fs_, target);
    if (!resolved) return std::move(resolved).error().Wrap(b.origin);
    if (!resolved->symlinks.empty()) {
      return invalid("the target " + Quote(target) + " passes through the host's symlink " +
                     Quote(resolved->symlinks.front()) + "; name the path it resolves to, " +
                     Quote(resolved->path));
    }
    b.source = source->path;
    b.target = target;
    b.is_dir = type == FileType::kDirectory;
    b.writable = request.writable;
    b.own_repositories = request.own_repositories;
    b.mountpoint_exists = resolved->exists && !fs_.IsPlaceholder(target);
    if (b.mountpoint_exists) {
      const bool target_is_dir = fs_.TypeOf(target) == FileType::kDirectory;
      if (target_is_dir != b.is_dir) {
        return invalid(std::string("the source is a ") + (b.is_dir ? "directory" : "file") +
                       " but the target " + Quote(target) + " exists on the host as " +
                       (target_is_dir ? "a directory" : "something else"));
      }
    }
    if (b.writable) {
      auto denied = std::find_if(deny_writes.begin(), deny_writes.end(), [&](const Resolved& d) {
        return path::IsWithin(b.source, d.path);
      });
      if (denied != deny_writes.end()) {
        Note(b.origin + ": stays read-only because of " + denied->origin);
        b.writable = false;
      }
    }
    return b;
  }

  // The deepest bind whose target strictly contains `p` (binds_ is sorted shallow first).
  const Bind* EnclosingBind(std::string_view p) const {
    const Bind* best = nullptr;
    for (const Bind& b : binds_) {
      if (b.target != p && path::IsWithin(p, b.target)) best = &b;
    }
    return best;
  }
  // True if `p` (in the sandbox, inside b's target) is covered by a deeper bind.
  bool InDeeperBind(const Bind& b, std::string_view p) const {
    const Bind* deepest = nullptr;
    for (const Bind& o : binds_) {
      if (path::IsWithin(p, o.target)) deepest = &o;
    }
    return deepest && deepest != &b && path::IsWithin(deepest->target, b.target);
  }
  bool UnderBindTarget(std::string_view p) const {
    return std::any_of(binds_.begin(), binds_.end(),
                       [&](const Bind& b) { return path::IsWithin(p, b.target); });
  }
  static std::string MapToTarget(const Bind& b, std::string_view host) {
    if (host == b.source) return b.target;
    std::string_view rest = b.source == "/" ? host : host.substr(b.source.size());
    return b.target + std::string(rest);
  }
  static std::string MapToHost(const Bind& b, std::string_view in_sandbox) {
    if (in_sandbox == b.target) return b.source;
    std::string_view rest = in_sandbox.substr(b.target.size());
    return b.source == "/" ? std::string(rest) : b.source + std::string(rest);
  }
  // The settings' deepest read rule strictly inside the bind's source, at or above `host`.
  const ReadRule* DeepestRuleInBind(const Bind& b, std::string_view host) const {
    const ReadRule* best = nullptr;
    for (const ReadRule& r : rules_) {
      if (r.path == b.source || !path::IsWithin(r.path, b.source) ||
          !path::IsWithin(host, r.path)) {
        continue;
      }
      if (!best || r.path.size() > best->path.size() ||
          (r.path.size() == best->path.size() && r.reopen)) {
        best = &r;
      }
    }
    return best;
  }
  bool HiddenInBind(const Bind& b, std::string_view host) const {
    const ReadRule* r = DeepestRuleInBind(b, host);
    return r && !r->reopen;
  }

  // The binds' mounts. A bind shows its source at its target whatever the settings say about the
  // source's own path (like allowRead), writable only when asked; the settings' read rules
  // inside the source apply inside the target too. A target missing on the host is created by
  // bwrap in its parent, which must then be writable while bwrap sets up: a hidden directory (a
  // tmpfs) already is; a read-only host directory is replaced by a synthetic one (View::
  // kSyntheticDir), never written on the host.
  Result<void> BuildBindMounts() {
    if (binds_.empty()) return Ok();
    std::set<std::string> synthetic;
    for (const Bind& b : binds_) {
      if (b.mountpoint_exists) continue;
      std::string parent(path::Parent(b.target));
      while (fs_.TypeOf(parent) == FileType::kMissing || fs_.IsPlaceholder(parent)) {
        parent = std::string(path::Parent(parent));
      }
      if (fs_.TypeOf(parent) != FileType::kDirectory) {
        return MakeError(Errc::kInvalidArgument, b.origin + ": the target's parent " +
                                                     Quote(parent) +
                                                     " is not a directory on the host");
      }
      const View view = policy_.filesystem_disabled ? View::kHostWritable : ViewOf(parent);
      if (view == View::kHiddenDir) {
        Note(b.origin + ": the target is created in the hidden (empty) " + Quote(parent));
        continue;
      }
      if (view != View::kHostReadOnly) {
        return MakeError(Errc::kInvalidArgument,
                         b.origin + ": the target does not exist and its parent " + Quote(parent) +
                             " is " + ViewName(view) +
                             " in the sandbox, so bwrap would create it on the host; create " +
                             Quote(b.target) + " first or choose a target outside the write roots");
      }
      synthetic.insert(parent);
    }
    std::vector<std::string> dirs(synthetic.begin(), synthetic.end());
    std::stable_sort(dirs.begin(), dirs.end(), [](const std::string& a, const std::string& b) {
      return path::Depth(a) < path::Depth(b);
    });
    // The synthetic directories go after every settings' rule at or above them (which they
    // replace) and before the deeper ones (which refine what they hold).
    std::vector<MountRule> regular = std::move(policy_.mounts);
    policy_.mounts.clear();
    // What a later rule replaces with a tmpfs of its own (a hidden directory, or a synthetic one
    // deeper down): a synthetic directory shows no such entry, whose bind would be covered at
    // once. Each bind costs bwrap a read of the whole mount table (~0.1 ms); most of the root's
    // entries are hidden in srt-poller's sessions.
    std::set<std::string> covered(synthetic);
    for (const MountRule& m : regular) {
      if (m.view == View::kHiddenDir || m.view == View::kSyntheticDir) covered.insert(m.path);
    }
    size_t next = 0;
    auto synthesize_above = [&](size_t depth) -> Result<void> {
      for (; next < dirs.size() && path::Depth(dirs[next]) < depth; ++next) {
        SRT_RETURN_IF_ERROR(AddSyntheticDir(dirs[next], covered));
      }
      return Ok();
    };
    for (MountRule& m : regular) {
      SRT_RETURN_IF_ERROR(synthesize_above(path::Depth(m.path)));
      policy_.mounts.push_back(std::move(m));
    }
    SRT_RETURN_IF_ERROR(synthesize_above(SIZE_MAX));

    // Then the binds, each followed by the settings' rules mirrored into it; a deeper bind goes
    // on top of a shallower one.
    std::vector<MountRule> bind_mounts;
    for (const Bind& b : binds_) {
      const View base = b.writable ? View::kHostWritable : View::kHostReadOnly;
      bind_mounts.push_back(MountRule{b.target, base, b.origin, b.source});
      if (!b.is_dir) continue;
      std::map<std::pair<size_t, std::string>, bool> inside;  // (depth, host path)
      for (const ReadRule& r : rules_) {
        if (r.path != b.source && path::IsWithin(r.path, b.source) && !UnderManagedTree(r.path)) {
          inside.emplace(std::make_pair(path::Depth(r.path), r.path), true);
        }
      }
      std::vector<std::pair<std::string, View>> mirrored;  // (host path, view)
      for (const auto& [key, unused] : inside) {
        const std::string& host = key.second;
        const ReadRule* decider = DeepestRuleInBind(b, host);
        View view = base;
        if (decider && !decider->reopen) {
          view = fs_.TypeOf(host) == FileType::kDirectory ? View::kHiddenDir : View::kHiddenFile;
        }
        View inherited = base;
        for (auto it = mirrored.rbegin(); it != mirrored.rend(); ++it) {
          if (it->first != host && path::IsWithin(host, it->first)) {
            inherited = it->second;
            break;
          }
        }
        const bool hidden = view == View::kHiddenDir || view == View::kHiddenFile;
        const bool inherited_hidden =
            inherited == View::kHiddenDir || inherited == View::kHiddenFile;
        if (view == inherited || (hidden && inherited_hidden)) continue;
        mirrored.emplace_back(host, view);
        std::string p = MapToTarget(b, host);
        if (InDeeperBind(b, p)) continue;
        bind_mounts.push_back(MountRule{p, view, b.origin + " (" + decider->reason + ")",
                                        hidden ? std::string() : host});
        Note(decider->reason + " inside " + b.origin + ": " + Quote(p) + " is " + ViewName(view));
      }
    }
    std::stable_sort(bind_mounts.begin(), bind_mounts.end(),
                     [](const MountRule& a, const MountRule& b) {
                       return path::Depth(a.path) < path::Depth(b.path);
                     });
    for (MountRule& m : bind_mounts) policy_.mounts.push_back(std::move(m));
    return Ok();
  }

  // Replaces the read-only host directory `dir` with a tmpfs holding its entries, so that bwrap
  // can create a bind target in it without touching the host (and `dir` is read-only again once
  // every mount is in place). Entries created on the host later do not show. A directory entry
  // in `covered` gets no bind: a later tmpfs replaces it (bwrap makes its mount point).
  Result<void> AddSyntheticDir(const std::string& dir, const std::set<std::string>& covered) {
    Result<std::vector<DirEntry>> listed = fs_.List(dir);
    if (!listed) {
      return std::move(listed).error().Wrap("list " + Quote(dir) +
                                            " to create a bind target in it");
    }
    std::vector<DirEntry> entries = std::move(listed).value();
    std::sort(entries.begin(), entries.end(),
              [](const DirEntry& a, const DirEntry& b) { return a.name < b.name; });
    const std::string reason = "synthetic " + Quote(dir) + " (parent of a new bind target)";
    if (dir == "/") {
      policy_.synthetic_root = true;
    } else {
      policy_.mounts.push_back(MountRule{dir, View::kSyntheticDir, reason});
    }
    for (const DirEntry& e : entries) {
      // bwrap builds /dev and /proc itself.
      if (dir == "/" && (e.name == "dev" || e.name == "proc")) continue;
      std::string p = path::Join(dir, e.name);
      if (e.type == FileType::kSymlink) {
        Result<std::string> text = fs_.ReadLink(p);
        if (!text) return std::move(text).error().Wrap(reason);
        policy_.mounts.push_back(MountRule{p, View::kSymlink, reason, *text});
      } else if (e.type == FileType::kDirectory && covered.contains(p)) {
        Note(reason + ": " + Quote(p) + " is replaced by a later tmpfs, not shown first");
      } else {
        policy_.mounts.push_back(MountRule{p, View::kHostReadOnly, reason});
      }
    }
    policy_.remount_read_only.push_back(dir);
    Note(reason + ": a read-only tmpfs with the host's " + std::to_string(entries.size()) +
         " entries");
    return Ok();
  }

  void BuildReadRules(const std::vector<Resolved>& deny_reads,
                      const std::vector<Resolved>& allow_reads) {
    for (const Resolved& d : deny_reads) {
      if (!d.exists) {
        Note(d.origin + ": " + Quote(d.path) + " does not exist, nothing to hide");
        policy_.missing_denied_files.push_back(d.path);
        continue;
      }
      if (d.path == "/") {
        // Hiding the root itself would hide srt's own /dev and /proc: hide what is in it instead.
        Result<std::vector<DirEntry>> top = fs_.List("/");
        for (const DirEntry& e : top ? *top : std::vector<DirEntry>{}) {
          if (e.name == "dev" || e.name == "proc") continue;
          // /bin -> usr/bin on a merged-/usr host: see ShowSymlinksOfHiddenDirs.
          if (e.type == FileType::kSymlink) continue;
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

  // The rule that decides at each path named by one (see DeepestRule), and the forced ones. Once
  // rules_ is complete: the index points into it.
  void IndexReadRules() {
    rule_at_.clear();
    forced_rules_.clear();
    for (const ReadRule& r : rules_) {
      auto [it, fresh] = rule_at_.try_emplace(r.path, &r);
      if (!fresh && r.reopen) it->second = &r;
      if (r.forced) forced_rules_.push_back(&r);
    }
  }

  // The deepest read rule at or above `p` decides; at the same path a re-open beats a deny.
  // Looked up along `p`'s ancestors in rule_at_ (deepest first), not by scanning every rule:
  // thousands of denied paths made policy resolution quadratic.
  const ReadRule* DeepestRule(std::string_view p) const {
    if (rule_at_.empty()) return nullptr;
    std::string at(p);
    for (;;) {
      if (auto it = rule_at_.find(at); it != rule_at_.end()) return it->second;
      if (at == "/") return nullptr;
      at = std::string(path::Parent(at));
    }
  }
  bool Hidden(std::string_view p) const {
    // A credential deny holds whatever allowRead or write root covers it (upstream: denied
    // credential files take no allowRead exceptions).
    for (const ReadRule* r : forced_rules_) {
      if (path::IsWithin(p, r->path)) return true;
    }
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
    // The view of each mount made so far, by path: a rule inherits the view of its deepest
    // ancestor among them (mounts are made shallow first, so that is the latest one containing
    // it). Looked up along the rule's ancestors, not by scanning every mount: thousands of
    // denied files in one directory made this quadratic.
    std::unordered_map<std::string, View> view_at;
    for (const auto& [key, rule] : ordered) {
      const std::string& p = key.second;
      View view = ViewOf(p);
      View inherited = View::kHostReadOnly;
      if (!view_at.empty()) {
        for (std::string_view a = p; a != "/";) {
          a = path::Parent(a);
          auto it = view_at.find(std::string(a));
          if (it != view_at.end()) {
            inherited = it->second;
            break;
          }
        }
      }
      bool inherited_hidden = inherited == View::kHiddenDir || inherited == View::kHiddenFile;
      bool hidden = view == View::kHiddenDir || view == View::kHiddenFile;
      if (view == inherited || (inherited_hidden && hidden)) continue;
      const ReadRule* decider = DeepestRule(p);  // several rules may name the same path
      const std::string& reason = decider ? decider->reason : rule->reason;
      mounts.push_back(MountRule{p, view, reason});
      view_at[p] = view;
      Note(reason + ": " + Quote(p) + " is " + ViewName(view));
    }
    SRT_RETURN_IF_ERROR(ShowSymlinksOfHiddenDirs());
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
    // /tmp (and removes afterwards); /tmp itself stays as the policy has it. When the policy
    // hides /tmp, the sandbox's /tmp is already an empty private tmpfs of its own: TMPDIR is
    // left unset, so programs use that /tmp (srt-agent could not make its directory there).
    if (fs_.TypeOf("/tmp") == FileType::kDirectory && Hidden("/tmp")) {
      Note("/tmp is hidden: the sandbox's /tmp is a private tmpfs, and TMPDIR is left unset");
    } else if (fs_.TypeOf("/tmp") == FileType::kDirectory) {
      policy_.tmpdir_parent = "/tmp";
    } else {
      Note("/tmp does not exist on this host, so TMPDIR is left unset");
    }
    return Ok();
  }

  // A symlink is not a secret: it shows only the name of its target, and what a read through it
  // gets is decided by the target's own rule. Every directory of a denied region that the
  // sandbox sees - a hidden directory itself, and each directory bwrap makes inside one on the
  // way to a re-opened path - gets the host's symlinks back (so /etc/localtime and the
  // /etc/alternatives links of a "deny everything, re-open what the tool needs" policy keep
  // working). Directories the sandbox does not see at all keep theirs out of sight.
  Result<void> ShowSymlinksOfHiddenDirs() {
    constexpr size_t kMaxLinksPerDir = 1024;
    std::vector<MountRule>& mounts = policy_.mounts;
    std::vector<std::pair<std::string, std::string>> shown;  // (directory, why it is hidden)
    auto show = [&](const std::string& dir, const std::string& why) {
      for (const auto& s : shown) {
        if (s.first == dir) return;
      }
      shown.emplace_back(dir, why);
    };
    const auto hidden = [](View v) { return v == View::kHiddenDir || v == View::kHiddenFile; };
    for (size_t i = 0; i < mounts.size(); ++i) {
      const MountRule& m = mounts[i];
      if (m.view == View::kHiddenDir) {
        show(m.path, m.reason);
        continue;
      }
      if (hidden(m.view)) continue;
      // The mount this one lies in (mounts are shallow first): a hidden directory means bwrap
      // makes the directories between the two.
      for (size_t j = i; j-- > 0;) {
        if (mounts[j].path == m.path || !path::IsWithin(m.path, mounts[j].path)) continue;
        if (mounts[j].view != View::kHiddenDir) break;
        for (std::string d(path::Parent(m.path)); d.size() > mounts[j].path.size();
             d = std::string(path::Parent(d))) {
          show(d, mounts[j].reason);
        }
        break;
      }
    }
    std::vector<MountRule> links;
    for (const auto& [dir, why] : shown) {
      Result<std::vector<DirEntry>> listed = fs_.List(dir);
      if (!listed) {
        Note(why + ": " + Quote(dir) + " cannot be listed, so its symlinks are not shown");
        continue;
      }
      size_t count = 0;
      for (const DirEntry& e : *listed) {
        if (e.type != FileType::kSymlink) continue;
        const std::string p = path::Join(dir, e.name);
        if (std::any_of(mounts.begin(), mounts.end(),
                        [&](const MountRule& m) { return path::IsWithin(m.path, p); })) {
          continue;  // a rule of its own decides (it cannot be one: rule paths have no links)
        }
        if (++count > kMaxLinksPerDir) {
          Note(why + ": " + Quote(dir) + " holds more than " + std::to_string(kMaxLinksPerDir) +
               " symlinks; the rest are not shown");
          break;
        }
        SRT_ASSIGN_OR_RETURN(std::string target, fs_.ReadLink(p));
        links.push_back(MountRule{p, View::kSymlink, "symlink in " + Quote(dir) + " (" + why + ")",
                                  std::move(target)});
      }
    }
    if (links.empty()) return Ok();
    for (MountRule& l : links) mounts.push_back(std::move(l));
    // Shallow first again, so that a link comes after the hidden directory it lies in.
    std::stable_sort(mounts.begin(), mounts.end(), [](const MountRule& a, const MountRule& b) {
      return path::Depth(a.path) < path::Depth(b.path);
    });
    return Ok();
  }

  // The directories strictly between `root` and `p` cannot be renamed or removed while the
  // sandbox runs, so `p` stays where a rule names it (those that do not exist yet cannot hold
  // anything the guard lets be made).
  void PinAncestors(const std::string& p, const std::string& root) {
    for (std::string a(path::Parent(p)); a.size() > root.size() && path::IsWithin(a, root);
         a = std::string(path::Parent(a))) {
      if (fs_.TypeOf(a) != FileType::kDirectory) continue;
      pins_.push_back(Protection{ProtectKind::kPin, a, true, "holds " + Quote(p)});
    }
  }

  Result<void> BuildProtections(const std::vector<Resolved>& deny_writes,
                                const std::vector<Resolved>& deny_reads) {
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
      // A missing path is the write guard's to keep from being created (nor stood for by a
      // symlink or a moved-in directory at one of its ancestors).
      SRT_RETURN_IF_ERROR(AddProtection(d.path, d.exists, fs_.TypeOf(d.path) == FileType::kSymlink,
                                        false, d.origin));
    }
    // A denyRead path inside a write root must be the same file for as long as the sandbox
    // runs. Its hidden view is a mount, which cannot be renamed or removed, and its directories
    // are pinned; one that is missing cannot be created (it could be hard-linked elsewhere
    // before the secret lands there), as for denyWrite.
    for (const Resolved& d : deny_reads) {
      const std::string* root = RootContaining(d.path, /*strictly=*/true);
      if (!root) continue;
      if (d.exists) {
        PinAncestors(d.path, *root);
        continue;
      }
      SRT_RETURN_IF_ERROR(AddProtection(d.path, false, false, false, d.origin));
    }
    // A symlink on the way to what a deny entry protects, inside a write root, is protected
    // itself: replaced by a file or directory of the command's choosing, it would carry what
    // the user later writes through it to that file.
    for (const std::vector<Resolved>* list : {&deny_reads, &deny_writes}) {
      for (const Resolved& d : *list) {
        for (const std::string& link : d.symlinks) {
          if (!RootContaining(link, /*strictly=*/true)) continue;
          SRT_RETURN_IF_ERROR(AddProtection(link, true, /*is_symlink=*/false, /*resolve=*/false,
                                            d.origin + " (a symlink on its way)"));
        }
      }
    }
    // A writable bind's source is a write root seen at another path: the same protections, at
    // the target.
    for (const Bind& b : binds_) {
      if (!b.writable || !b.is_dir) continue;
      Result<std::vector<ProtectTarget>> found = DiscoverMandatoryDenies(fs_, b.source, options);
      if (!found) return std::move(found).error().Wrap(b.origin);
      for (ProtectTarget& t : *found) {
        SRT_RETURN_IF_ERROR(
            AddBindProtection(b, t.path, t.exists, t.is_symlink, !t.canonical, t.reason));
      }
      for (const Resolved& d : deny_writes) {
        if (d.path == b.source || !path::IsWithin(d.path, b.source)) continue;
        SRT_RETURN_IF_ERROR(AddBindProtection(b, d.path, d.exists,
                                              fs_.TypeOf(d.path) == FileType::kSymlink, false,
                                              d.origin + " inside " + b.origin));
      }
    }
    Finish();
    return Ok();
  }

  // Protects the host path `host` (inside b's source) where the sandbox sees it, in b's target.
  Result<void> AddBindProtection(const Bind& b, std::string host, bool exists, bool is_symlink,
                                 bool resolve, const std::string& reason) {
    if (resolve) {
      SRT_ASSIGN_OR_RETURN(CanonicalPath c, Canonicalize(fs_, host));
      host = c.path;
      exists = c.exists;
      is_symlink = false;
    }
    if (!path::IsWithin(host, b.source)) {
      // A worktree's git directory elsewhere: protected where the sandbox may write it.
      return AddProtection(host, exists, is_symlink, false, reason);
    }
    std::string p = MapToTarget(b, host);
    if (InDeeperBind(b, p)) return Ok();
    if (HiddenInBind(b, host)) {
      Note(reason + ": " + Quote(p) + " is hidden, so writes there never reach the host");
      return Ok();
    }
    protections_.push_back(
        Protection{ProtectKind::kProtect, p, exists, reason, host == p ? "" : host});
    for (std::string a(path::Parent(p)); a.size() > b.target.size() && path::IsWithin(a, b.target);
         a = std::string(path::Parent(a))) {
      if (fs_.TypeOf(MapToHost(b, a)) != FileType::kDirectory) continue;
      pins_.push_back(Protection{ProtectKind::kPin, a, true, "holds " + Quote(p)});
    }
    if (is_symlink) {
      // TODO(srt): a relative link that climbs out of the source resolves differently in the
      // sandbox; only its host resolution is protected.
      SRT_ASSIGN_OR_RETURN(CanonicalPath target, Canonicalize(fs_, host));
      if (target.exists && target.path != host) {
        const std::string why = reason + " (target of " + Quote(p) + ")";
        if (path::IsWithin(target.path, b.source)) {
          SRT_RETURN_IF_ERROR(AddBindProtection(b, target.path, true, false, false, why));
        } else {
          SRT_RETURN_IF_ERROR(AddProtection(target.path, true, false, false, why));
        }
      }
    }
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
    if (UnderBindTarget(p)) {
      Note(reason + ": " + Quote(p) + " is covered by a bind, which shows something else there");
      return Ok();
    }
    if (Hidden(p)) {
      Note(reason + ": " + Quote(p) + " is hidden, so writes there never reach the host");
      return Ok();
    }
    protections_.push_back(Protection{ProtectKind::kProtect, p, exists, reason});
    PinAncestors(p, *root);
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
           (p.exists ? " is read-only" : " cannot be created (the write guard)"));
      policy_.protections.push_back(std::move(p));
    }
  }

  const Settings& settings_;
  const Environment& env_;
  const FsView& fs_;
  Policy policy_;
  std::vector<ReadRule> rules_;
  // Path -> the rule that decides there: the first one naming it, or the last re-open naming it
  // (a re-open beats a deny at the same path). Built once rules_ is complete.
  std::unordered_map<std::string, const ReadRule*> rule_at_;
  // The rules that no allowRead or write root lifts (credential denies): few, so scanned.
  std::vector<const ReadRule*> forced_rules_;
  std::vector<Resolved> credential_denies_;  // credentials.files mode "deny"
  std::vector<Bind> binds_;                  // shallow targets first
  std::vector<Protection> protections_;
  std::vector<Protection> pins_;
};

}  // namespace

Result<Policy> ResolvePolicy(const Settings& settings, const Environment& env, const FsView& fs) {
  if (!HasGlob(settings.filesystem)) return Resolver(settings, env, fs).Run();
  const ListingCache cached(fs);
  return Resolver(settings, env, cached).Run();
}

}  // namespace srt::policy
