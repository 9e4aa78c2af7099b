// SPDX-License-Identifier: Apache-2.0
// The libsrt facade: Settings -> Policy -> seccomp filter -> Launch.
#include "srt/sandbox.h"

#include <fcntl.h>
#include <pwd.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <csignal>
#include <cstdlib>

#include "base/path.h"
#include "base/strings.h"
#include "base/system_text.h"
#include "base/unique_fd.h"
#include "cgroup/cgroup.h"
#include "cgroup/plan.h"
#include "credentials/mask.h"
#include "launch/launcher.h"
#include "net/sandbox_network.h"
#include "policy/policy.h"
#include "policy/real_fs_view.h"
#include "sandbox_plan.h"
#include "seccomp/filter.h"
#include "sys/helper_path.h"
#include "sys/random_hex.h"

extern char** environ;

namespace srt {

namespace {

using strings::Quote;

// The sandbox's working directory when the caller names none. One that cannot be read (most
// often deleted from under the caller) fails Start: no other directory stands in for it.
Result<std::string> CurrentDirectory() {
  char buf[PATH_MAX];
  if (getcwd(buf, sizeof buf)) return std::string(buf);
  const int err = errno;
  return Error(err == ENOENT ? Errc::kNotFound : Errc::kSystem,
               std::string("the working directory no longer exists or cannot be read (getcwd: ") +
                   ErrnoText(err) + "); change to a directory that exists and run again",
               err);
}

std::string HomeDirectory() {
  const char* home = getenv("HOME");
  if (home && path::IsAbsolute(home)) return home;
  struct passwd pw;
  struct passwd* found = nullptr;
  char buf[4096];
  if (getpwuid_r(getuid(), &pw, buf, sizeof buf, &found) == 0 && found && found->pw_dir) {
    return found->pw_dir;
  }
  return "/";
}

std::string Canonical(const std::string& p) {
  char buf[PATH_MAX];
  if (realpath(p.c_str(), buf)) return buf;
  return p;
}

// What stat(2) says of an executable srt would run.
facade::ExecutableFact ExecutableFactOf(const std::string& path) {
  facade::ExecutableFact fact;
  fact.path = path;
  fact.real = Canonical(path);
  struct stat st;
  if (stat(fact.real.c_str(), &st) < 0) {
    fact.stat_errno = errno;
    return fact;
  }
  fact.executable = S_ISREG(st.st_mode) && access(fact.real.c_str(), X_OK) == 0;
  fact.group_or_other_writable = (st.st_mode & (S_IWGRP | S_IWOTH)) != 0;
  return fact;
}

Result<std::string> FindBwrap(const Settings& settings, const std::vector<std::string>& env) {
  if (settings.bwrap_path) return *settings.bwrap_path;
  std::string path_var = "/usr/local/bin:/usr/bin:/bin";
  for (const std::string& e : env) {
    if (e.rfind("PATH=", 0) == 0) path_var = e.substr(5);
  }
  if (const char* own = getenv("PATH")) path_var = own;
  size_t start = 0;
  while (start <= path_var.size()) {
    size_t end = path_var.find(':', start);
    if (end == std::string::npos) end = path_var.size();
    std::string dir = path_var.substr(start, end - start);
    if (!dir.empty()) {
      std::string candidate = path::Join(dir, "bwrap");
      if (access(candidate.c_str(), X_OK) == 0) return candidate;
    }
    start = end + 1;
  }
  return MakeError(Errc::kNotFound,
                   "bubblewrap (bwrap) was not found in PATH. srt needs it to build the sandbox "
                   "and never runs commands without one. Install it (Debian/Ubuntu: apt-get "
                   "install bubblewrap; Fedora: dnf install bubblewrap) or set \"bwrapPath\" in "
                   "the settings.");
}

// The caller's sandbox id, checked, or 16 random hex digits.
Result<std::string> SandboxId(const std::string& given) {
  if (given.empty()) return sys::RandomHex(8);
  const bool ok = given.size() <= 64 && std::all_of(given.begin(), given.end(), [](char c) {
                    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                           (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
                  });
  if (!ok) {
    return MakeError(
        Errc::kInvalidArgument,
        "sandbox id " + Quote(given) + " must be 1 to 64 letters, digits, '.', '_' or '-'");
  }
  return given;
}

Result<std::string> FindInit(const std::optional<std::string>& configured) {
  if (configured) return *configured;
  if (const char* env = getenv("SRT_INIT_PATH"); env != nullptr && access(env, X_OK) == 0) {
    return std::string(env);
  }
  std::string found = sys::FindHelper("srt-init", SRT_INIT_INSTALL_PATH);
  if (!found.empty()) return found;
  std::string looked;
  for (const std::string& c : sys::HelperCandidates("srt-init", SRT_INIT_INSTALL_PATH)) {
    looked += (looked.empty() ? "" : ", ") + Quote(c);
  }
  return MakeError(Errc::kNotFound,
                   "srt-init, srt's sandbox helper, was not found (looked for " + looked +
                       "); reinstall srt, or give its path (SandboxOptions::init_path)");
}

// An environment variable of srt's, upper case first ("HTTP_PROXY", then "http_proxy"); empty
// counts as unset, as for curl.
std::optional<std::string> ProxyVariable(const char* upper, const char* lower) {
  const char* v = getenv(upper);
  if (v == nullptr || *v == '\0') v = getenv(lower);
  if (v == nullptr || *v == '\0') return std::nullopt;
  return std::string(v);
}

// A credential file to mask, read whole: a regular file (never through a symlink: the policy
// resolved it), at most credentials::kMaxMaskedValueBytes.
Result<std::string> ReadMaskedFile(const std::string& path) {
  UniqueFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK));
  if (!fd) return SysError("open " + Quote(path));
  struct stat st;
  if (fstat(fd.get(), &st) != 0) return SysError("stat " + Quote(path));
  if (!S_ISREG(st.st_mode)) {
    return MakeError(Errc::kInvalidArgument, Quote(path) + " is not a regular file");
  }
  std::string text;
  char buf[16 * 1024];
  for (;;) {
    const ssize_t n = read(fd.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return SysError("read " + Quote(path));
    if (n == 0) break;
    text.append(buf, static_cast<size_t>(n));
    if (text.size() > credentials::kMaxMaskedValueBytes) {
      return MakeError(Errc::kInvalidArgument,
                       Quote(path) + " is larger than " +
                           std::to_string(credentials::kMaxMaskedValueBytes / 1024) +
                           " KiB, more than srt masks; use extract, or mode \"deny\"");
    }
  }
  return text;
}

// network.mitmProxy.socketPath is host configuration, but the sandbox must not be able to put a
// socket of its own there: it would see (and could redirect) everything routed to it. So the
// path must be its own real path (no symlink to retarget later) and lie outside every place the
// command can write. The socket itself may appear later (it is connected to per connection).
Result<void> VetMitmSocket(const NetworkPolicy& network, const std::vector<std::string>& writable) {
  if (!network.mitm_proxy) return Ok();
  const std::string& path = network.mitm_proxy->socket_path;
  const std::string what = "network.mitmProxy.socketPath " + Quote(path);
  const std::string parent(path::Parent(path));
  char resolved[PATH_MAX];
  if (realpath(parent.c_str(), resolved) == nullptr) {
    return SysError(what + ": its directory " + Quote(parent));
  }
  const std::string real_parent(resolved);
  struct stat st;
  const bool is_link = lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode);
  if (real_parent != parent || is_link) {
    return MakeError(Errc::kInvalidArgument,
                     what +
                         " is not its own real path (it goes through a symlink, '.' or '..'): "
                         "give the socket's real path, so that it cannot be pointed elsewhere");
  }
  for (const std::string& root : writable) {
    if (path::IsWithin(path, root)) {
      return MakeError(Errc::kInvalidArgument,
                       what + " lies inside the write root " + Quote(root) +
                           ": a sandboxed command could replace the socket with its own and see "
                           "or redirect the traffic routed to it. Put the socket elsewhere or "
                           "narrow allowWrite.");
    }
  }
  return Ok();
}

// A host file the caller trusts must not lie where the command can write: the command could
// move it away and put its own at its name.
Result<void> VetOutsideWritable(const std::vector<SandboxOptions::HostPath>& paths,
                                const std::vector<std::string>& writable) {
  for (const SandboxOptions::HostPath& p : paths) {
    for (const std::string& root : writable) {
      if (path::IsWithin(p.path, root)) {
        return MakeError(Errc::kInvalidArgument,
                         p.what + " lies inside the write root " + Quote(root) +
                             ": a sandboxed command could move it away and put its own at its "
                             "name. Put it elsewhere (e.g. $XDG_RUNTIME_DIR) or narrow "
                             "allowWrite.");
      }
    }
  }
  return Ok();
}

// Whether something other than a directory of `euid`'s with mode 0700 is at the TMPDIRs' kept
// parent (facade::KeptTmpdirParent), not following a symlink. Nothing there is usable: the agent
// makes it, and checks it again where it mounts on it.
bool KeptTmpdirParentUnusable(const std::string& path, uid_t euid) {
  struct stat st {};
  if (fstatat(AT_FDCWD, path.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return errno != ENOENT;
  return !S_ISDIR(st.st_mode) || (st.st_mode & 07777) != 0700 || st.st_uid != euid;
}

// Everything Start asks the host before it plans (see sandbox_plan.h).
Result<facade::HostFacts> GatherHostFacts(const SandboxOptions& options) {
  facade::HostFacts facts;
  facts.home = options.home ? *options.home : HomeDirectory();
  if (options.cwd) {
    facts.cwd = *options.cwd;
  } else {
    SRT_ASSIGN_OR_RETURN(facts.cwd, CurrentDirectory());
  }
  facts.euid = geteuid();
  if (!options.env) {
    for (char** e = environ; e && *e; ++e) facts.environment.emplace_back(*e);
  }
  SRT_ASSIGN_OR_RETURN(facts.random_name, sys::RandomHex(8));
  rlimit nofile;
  if (getrlimit(RLIMIT_NOFILE, &nofile) == 0) {
    facts.nofile = std::make_pair(static_cast<uint64_t>(nofile.rlim_cur),
                                  static_cast<uint64_t>(nofile.rlim_max));
  }
  facts.proxy_variables = {ProxyVariable("HTTP_PROXY", "http_proxy"),
                           ProxyVariable("HTTPS_PROXY", "https_proxy"),
                           ProxyVariable("NO_PROXY", "no_proxy")};
  SRT_ASSIGN_OR_RETURN(std::string bwrap,
                       FindBwrap(options.settings, options.env ? *options.env : facts.environment));
  facts.bwrap = ExecutableFactOf(bwrap);
  SRT_ASSIGN_OR_RETURN(std::string init, FindInit(options.init_path));
  facts.init = ExecutableFactOf(init);
  return facts;
}

// Where the TLS trust bundle's private directory goes: srt's own TMPDIR when it is an absolute
// directory, else /tmp (as upstream's srt-ca-XXXXXX under the temporary directory).
std::string TrustBundleParent(const facade::HostFacts& facts) {
  for (const std::string& e : facts.environment) {
    if (e.starts_with("TMPDIR=/") && e.size() > 8) return e.substr(7);
  }
  return "/tmp";
}

}  // namespace

std::string_view Version() { return SRT_VERSION; }

// What a warm sandbox's Exec() needs of its start: the environments (ExecEnvironment) and the
// working directory its commands get by default.
struct Sandbox::ServeContext {
  std::vector<std::string> base_env;
  std::vector<std::string> planned_env;
  std::vector<std::string> pinned;
  std::string cwd;
};

Sandbox::Sandbox(std::unique_ptr<net::SandboxNetwork> network,
                 std::unique_ptr<launch::Launch> launch, std::vector<std::string> writable,
                 std::unique_ptr<ServeContext> serve)
    : network_(std::move(network)),
      launch_(std::move(launch)),
      writable_(std::move(writable)),
      serve_(std::move(serve)) {}
Sandbox::Sandbox(Sandbox&&) noexcept = default;
Sandbox& Sandbox::operator=(Sandbox&&) noexcept = default;
Sandbox::~Sandbox() = default;

Result<Sandbox> Sandbox::Start(SandboxOptions options) {
  auto debug = [&](std::string_view line) {
    if (options.debug) options.debug(line);
  };
  if (options.serve && !options.argv.empty()) {
    return MakeError(Errc::kInvalidArgument,
                     "a warm sandbox (serve) runs its commands with Exec(), not argv");
  }
  if (!options.serve && (options.argv.empty() || options.argv[0].empty())) {
    return MakeError(Errc::kInvalidArgument, "no command to run");
  }
  // srt reaps bwrap and srt-agent itself: their exit statuses, and until then their pids name
  // no other process (the launcher signals bwrap's process group and writes its pid to a
  // cgroup). With SIGCHLD ignored the kernel reaps them first.
  struct sigaction chld {};
  if (sigaction(SIGCHLD, nullptr, &chld) == 0 &&
      (chld.sa_handler == SIG_IGN || (chld.sa_flags & SA_NOCLDWAIT) != 0)) {
    return MakeError(Errc::kInvalidArgument,
                     "SIGCHLD is ignored (SIG_IGN or SA_NOCLDWAIT) in this process: srt must reap "
                     "the processes it starts; give SIGCHLD its default disposition first");
  }
  // A warm sandbox's PID 1 gets /dev/null for its standard descriptors (never a terminal), and
  // no descriptor of the caller's: each command brings its own.
  UniqueFd serve_null;
  if (options.serve) {
    serve_null.reset(open("/dev/null", O_RDWR | O_CLOEXEC));
    if (!serve_null) return SysError("open /dev/null");
    options.stdin_fd = options.stdout_fd = options.stderr_fd = serve_null.get();
    options.inherit_fds.clear();
  }
  if (options.inherit_fds.size() > kMaxInheritFds) {
    return MakeError(Errc::kInvalidArgument,
                     "too many descriptors to pass: " + std::to_string(options.inherit_fds.size()) +
                         " given, at most " + std::to_string(kMaxInheritFds));
  }
  for (int fd : options.inherit_fds) {
    if (fd < 3) {
      return MakeError(Errc::kInvalidArgument,
                       "descriptor " + std::to_string(fd) +
                           " cannot be passed by number: 0-2 are the standard streams");
    }
    if (fcntl(fd, F_GETFD) < 0) {
      return MakeError(Errc::kInvalidArgument,
                       "descriptor " + std::to_string(fd) + " is not open, so it cannot be passed");
    }
  }

  SRT_ASSIGN_OR_RETURN(facade::HostFacts facts, GatherHostFacts(options));
  policy::Environment env{facts.home, facts.cwd, {}, facts.proxy_variables};
  for (const BindMount& b : options.binds) {
    env.binds.push_back(policy::BindRequest{b.source, b.target, b.writable, b.own_repositories});
  }
  // network.tlsTerminate: the file the sandbox trusts srt's CA from exists (empty) before the
  // policy is resolved, so that it is bound read-only into the sandbox like any bind; the proxy
  // fills it once it has made the CA.
  std::unique_ptr<net::TrustBundleFile> trust_bundle;
  if (options.settings.network.tls_terminate) {
    SRT_ASSIGN_OR_RETURN(trust_bundle, net::TrustBundleFile::Create(TrustBundleParent(facts)));
    env.binds.push_back(
        policy::BindRequest{trust_bundle->path(), trust_bundle->path(), false, false});
  }
  policy::RealFsView fs;
  SRT_ASSIGN_OR_RETURN(policy::Policy policy, policy::ResolvePolicy(options.settings, env, fs));
  for (const std::string& note : policy.notes) debug(note);
  if (options.warn) {
    for (const std::string& w : policy.warnings) options.warn(w);
  }

  SRT_RETURN_IF_ERROR(facade::VetNesting(policy, facts));
  if (!policy.tmpdir_parent.empty()) {
    facts.kept_tmpdir_parent_unusable = KeptTmpdirParentUnusable(
        facade::KeptTmpdirParent(policy.tmpdir_parent, facts.euid), facts.euid);
  }
  facade::SandboxPlan plan = facade::PlanSandbox(options, facts, policy);
  if (options.debug) {
    for (const std::string& rule : seccomp::DescribeFilter(plan.filter)) debug("seccomp: " + rule);
  }
  for (const std::string& note : plan.notes) debug(note);
  if (options.warn) {
    for (const std::string& w : plan.warnings) options.warn(w);
  }

  // Credentials: denied variables go, masked ones get sentinels; masked files get fakes. The
  // real values stay in this process (the proxy's injector) and reach no argv, file or
  // environment of the sandbox.
  const CredentialSettings& creds = options.settings.credentials;
  const credentials::RandomSource random = [](size_t n) { return sys::RandomBytes(n); };
  SRT_ASSIGN_OR_RETURN(credentials::EnvironmentPlan env_plan,
                       credentials::PlanEnvironment(creds, options.settings.network.allowed_domains,
                                                    std::move(plan.environment), random));
  plan.environment = std::move(env_plan.environment);
  for (const std::string& note : env_plan.notes) debug(note);
  if (options.warn) {
    for (const std::string& w : env_plan.warnings) options.warn(w);
  }
  std::vector<CredentialSecret> secrets = std::move(env_plan.secrets);
  std::vector<AwsKeyPair> aws_pairs = std::move(env_plan.aws_pairs);
  // After the credentials, so that the count continues what the command would otherwise see.
  facade::AddGitSafeDirectories(plan.environment, options.settings.git.safe_directories);
  std::vector<std::string> masked_contents;
  for (const policy::MaskedFile& f : policy.masked_files) {
    const CredentialFile& entry = creds.files[f.entry];
    const std::string name = "file " + f.path;
    Result<std::string> real = ReadMaskedFile(f.path);
    if (!real)
      return std::move(real).error().Wrap("credentials.files[" + std::to_string(f.entry) + "]");
    SRT_ASSIGN_OR_RETURN(
        credentials::Masked m,
        credentials::MaskValue(
            name, *real, entry.mask,
            credentials::InjectHosts(entry.mask, options.settings.network.allowed_domains),
            random));
    if (!m.warning.empty() && options.warn) options.warn(m.warning);
    // A file whose secret could not be found is shown empty (kDenied), or as it is when the
    // entry says "warn" (kPassed).
    masked_contents.push_back(m.outcome == credentials::Masked::Outcome::kDenied ? "" : m.fake);
    for (CredentialSecret& s : m.secrets) secrets.push_back(std::move(s));
  }

  SRT_ASSIGN_OR_RETURN(std::string bwrap,
                       facade::VetExecutable(facts.bwrap, "bwrap", plan.writable));
  SRT_RETURN_IF_ERROR(VetMitmSocket(policy.network, plan.writable));
  SRT_RETURN_IF_ERROR(VetOutsideWritable(options.outside_writable, plan.writable));
  std::vector<std::string> writable = plan.writable;
  SRT_ASSIGN_OR_RETURN(std::string init,
                       facade::VetExecutable(facts.init, "srt-init", plan.writable));

  // Resource limits: the sandbox's cgroups exist, limits written, before bwrap is spawned.
  std::unique_ptr<cgroup::Cgroups> cgroups;
  if (options.limits) {
    const ResourceLimits& l = *options.limits;
    SRT_ASSIGN_OR_RETURN(std::string suffix, sys::RandomHex(8));
    const std::string name =
        (options.id.empty() ? std::string("sandbox") : options.id) + "-" + suffix.substr(0, 8);
    if (!options.id.empty()) SRT_RETURN_IF_ERROR(SandboxId(options.id));
    SRT_ASSIGN_OR_RETURN(cgroup::HostCgroups host, cgroup::ReadHostCgroups());
    Result<cgroup::Plan> cgroup_plan = cgroup::PlanCgroups(
        host,
        {l.memory_bytes, l.cpu_millis, l.pids, l.inner_memory_bytes, l.inner_pids, l.cgroup_parent},
        name);
    if (!cgroup_plan) return std::move(cgroup_plan).error().Wrap("limits");
    for (const std::string& note : cgroup_plan->notes) debug(note);
    if (!cgroup_plan->leaves.empty()) {
      SRT_ASSIGN_OR_RETURN(cgroups, cgroup::Cgroups::Create(std::move(cgroup_plan).value()));
    }
  }
  debug("bwrap: " + bwrap + ", srt-init: " + init);

  // The network: only through srt's proxy, which runs even when nothing is allowed (as upstream):
  // then every attempt is refused with the reason and recorded, rather than failing as if the
  // network were down, and an update can open it later.
  // srt raises its own open-file limit for the proxy, before the proxy sizes its connection cap
  // from it; the command gets the original back.
  bool raised_nofile = false;
  if (plan.raise_nofile) {
    const auto hard = static_cast<rlim_t>(plan.command_nofile->second);
    const auto target = static_cast<rlim_t>(*plan.raise_nofile);
    rlimit raised{target, std::max(target, hard)};
    raised_nofile = setrlimit(RLIMIT_NOFILE, &raised) == 0;
    if (!raised_nofile && target > hard) {  // root without CAP_SYS_RESOURCE, or fs.nr_open
      raised = rlimit{hard, hard};
      raised_nofile = hard > static_cast<rlim_t>(plan.command_nofile->first) &&
                      setrlimit(RLIMIT_NOFILE, &raised) == 0;
    }
  }
  SRT_ASSIGN_OR_RETURN(std::string id, SandboxId(options.id));
  net::NetworkOptions network_options{id, init, std::move(options.on_connection), options.debug};
  network_options.credentials = std::move(secrets);
  network_options.inject_plaintext = creds.allow_plaintext_inject;
  network_options.aws_pairs = std::move(aws_pairs);
  network_options.sigv4 = {creds.sigv4.streaming == SigV4Policy::kPassthrough,
                           creds.sigv4.presigned == SigV4Policy::kPassthrough,
                           creds.sigv4.sigv4a == SigV4Policy::kPassthrough};
  network_options.trust_bundle = std::move(trust_bundle);
  if (const std::optional<std::string>& jar = options.settings.java_agent_jar_path) {
    // As upstream: a jar that is not there is skipped (a JVM told to load a missing agent does
    // not start at all).
    struct stat st;
    if (stat(jar->c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
      network_options.java_agent = *jar;
    } else if (options.warn) {
      options.warn("javaAgentJarPath: " + strings::Quote(*jar) +
                   " is not a file; JVMs in the sandbox run without the agent");
    }
  }
  SRT_ASSIGN_OR_RETURN(std::unique_ptr<net::SandboxNetwork> network,
                       net::SandboxNetwork::Create(policy.network, std::move(network_options)));
  for (auto& [name, value] : network->Environment(plan.environment)) {
    facade::SetEnv(plan.environment, name, value);
  }

  std::unique_ptr<ServeContext> serve;
  if (options.serve) {
    serve = std::make_unique<ServeContext>();
    serve->base_env = options.env ? *options.env : facts.environment;
    serve->planned_env = plan.environment;
    for (const CredentialEnvVar& v : creds.env_vars) serve->pinned.push_back(v.name);
    serve->cwd = facts.cwd;
    plan.guard.flags |= wire::kGuardServe;
  }
  launch::LaunchSpec spec;
  spec.serve = options.serve;
  const bool guard = !plan.guard.calls.empty();
  spec.guard = std::move(plan.guard);
  spec.policy = std::move(policy);
  spec.build_seccomp_filter = [filter_options = plan.filter,
                               guard]() -> Result<launch::SeccompPrograms> {
    launch::SeccompPrograms programs;
    SRT_ASSIGN_OR_RETURN(programs.deny, seccomp::BuildFilter(filter_options));
    if (guard) {
      SRT_ASSIGN_OR_RETURN(programs.guard, seccomp::BuildGuardFilter());
    }
    return programs;
  };
  spec.argv = std::move(options.argv);
  spec.env = std::move(plan.environment);
  spec.stdin_fd = options.stdin_fd;
  spec.stdout_fd = options.stdout_fd;
  spec.stderr_fd = options.stderr_fd;
  spec.keep_fds = std::move(options.inherit_fds);
  spec.tmpdir = std::move(plan.tmpdir);
  spec.cgroups = std::move(cgroups);
  if (options.limits) spec.tmpfs_bytes = options.limits->tmpfs_bytes;
  spec.bwrap_path = std::move(bwrap);
  spec.init_path = std::move(init);
  spec.on_terminal_stop = std::move(options.on_terminal_stop);
  spec.debug = options.debug;
  if (raised_nofile) spec.command_nofile = plan.command_nofile;
  spec.net_sockets = network->sockets();
  spec.resolv_conf = network->resolv_conf();
  spec.masked_file_contents = std::move(masked_contents);
  spec.beside_bwrap = [net = network.get()] { return net->Run(); };
  spec.on_sandbox_empty = [net = network.get()] { net->StopServing(); };
  spec.on_network = [net = network.get()](std::vector<UniqueFd> sockets) {
    return net->Attach(std::move(sockets));
  };
  SRT_ASSIGN_OR_RETURN(std::unique_ptr<launch::Launch> launch,
                       launch::Launch::Start(std::move(spec)));
  return Sandbox(std::move(network), std::move(launch), std::move(writable), std::move(serve));
}

Result<Execution> Sandbox::Exec(ExecOptions options) {
  if (!launch_) return MakeError(Errc::kInvalidArgument, "the sandbox has ended");
  if (!serve_) return MakeError(Errc::kInvalidArgument, "Exec() needs a warm sandbox (serve)");
  launch::ExecSpec spec;
  spec.argv = std::move(options.argv);
  spec.env = options.env ? facade::ExecEnvironment(*options.env, serve_->base_env,
                                                   serve_->planned_env, serve_->pinned)
                         : serve_->planned_env;
  spec.cwd = options.cwd ? *options.cwd : serve_->cwd;
  spec.stdin_fd = options.stdin_fd;
  spec.stdout_fd = options.stdout_fd;
  spec.stderr_fd = options.stderr_fd;
  SRT_ASSIGN_OR_RETURN(std::unique_ptr<launch::Execution> exec, launch_->Exec(std::move(spec)));
  return Execution(std::move(exec));
}

Result<void> Sandbox::Stop() {
  if (!launch_) return MakeError(Errc::kInvalidArgument, "the sandbox has ended");
  return launch_->Stop();
}

Execution::Execution(std::unique_ptr<launch::Execution> exec) : exec_(std::move(exec)) {}
Execution::Execution(Execution&&) noexcept = default;
Execution& Execution::operator=(Execution&&) noexcept = default;
Execution::~Execution() = default;

Result<void> Execution::Signal(int signal) {
  if (!exec_) return MakeError(Errc::kInvalidArgument, "the command has ended");
  return exec_->Signal(signal);
}

int Execution::done_fd() const { return exec_ ? exec_->done_fd() : -1; }

Result<ExitStatus> Execution::Wait() {
  if (!exec_) return MakeError(Errc::kInvalidArgument, "the command has ended");
  return exec_->Wait();
}

Result<void> Sandbox::Signal(int signal) {
  if (!launch_) return MakeError(Errc::kInvalidArgument, "the sandbox has ended");
  return launch_->Signal(signal);
}

Result<ExitStatus> Sandbox::Wait(int forward_signals_fd) {
  if (!launch_) return MakeError(Errc::kInvalidArgument, "the sandbox has ended");
  // The proxy stops serving once srt-init reports the sandbox empty (on_sandbox_empty); the
  // Sandbox's destruction waits for it. UpdateNetwork may race with this call.
  return launch_->Wait(forward_signals_fd);
}

Result<void> Sandbox::UpdateNetwork(const NetworkSettings& network) {
  if (!network_) return MakeError(Errc::kInvalidArgument, "the sandbox has been moved from");
  // Only the rules change (proxy/proxy.h), so srt's own proxy variables do not matter here.
  SRT_ASSIGN_OR_RETURN(NetworkPolicy policy, policy::ResolveNetworkPolicy(network, {}));
  SRT_RETURN_IF_ERROR(VetMitmSocket(policy, writable_));
  return network_->Update(policy);
}

Result<std::vector<std::string>> RemoveLeftoverCgroups(const ResourceLimits& limits,
                                                       std::string_view id_prefix) {
  // The prefix is of a sandbox id, whose grammar SandboxId holds.
  SRT_RETURN_IF_ERROR(SandboxId(std::string(id_prefix)));
  SRT_ASSIGN_OR_RETURN(cgroup::HostCgroups host, cgroup::ReadHostCgroups());
  SRT_ASSIGN_OR_RETURN(std::vector<std::string> parents,
                       cgroup::LeafParents(host, {limits.memory_bytes, limits.cpu_millis,
                                                  limits.pids, 0, 0, limits.cgroup_parent}));
  return cgroup::RemoveLeftovers(parents, id_prefix);
}

Result<std::string> TakeCgroupDelegation(const ResourceLimits& limits) {
  SRT_ASSIGN_OR_RETURN(cgroup::HostCgroups host, cgroup::ReadHostCgroups());
  SRT_ASSIGN_OR_RETURN(
      std::optional<std::string> parent,
      cgroup::TakeDelegation(host, {limits.memory_bytes, limits.cpu_millis, limits.pids}));
  return parent.value_or("");
}

Result<ExitStatus> RunSandboxed(SandboxOptions options) {
  SRT_ASSIGN_OR_RETURN(Sandbox sandbox, Sandbox::Start(std::move(options)));
  return sandbox.Wait();
}

}  // namespace srt
