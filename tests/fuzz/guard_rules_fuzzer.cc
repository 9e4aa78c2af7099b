// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: the write guard's rules (srt-cli/init/guard_rules.h) on arbitrary changes,
// directories, names and probe answers. The input is: 1 byte change, 1 byte kind (its top bit:
// whether the directory is on the private tmpfs), 2 bytes of probe answers (one bit per question
// asked, in order; a question beyond them answers "no"), then the directory and the name
// separated by a NUL.
// Properties checked (a violation traps): Judge never reads outside its inputs (ASan), answers
// the same twice, refuses every `.git` below a guard root, allows "." and "..", refuses the
// protected paths themselves, and never refuses below a private root on the private tmpfs or
// outside the roots unless a protected path is at stake.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "guard_rules.h"

namespace {

using srt::init::guard::Change;
using srt::init::guard::Config;
using srt::init::guard::Judge;
using srt::init::guard::Kind;
using srt::init::guard::Probe;
using srt::init::guard::Verdict;

void Check(bool ok) {
  if (!ok) __builtin_trap();
}

class BitsProbe final : public Probe {
 public:
  BitsProbe(uint16_t bits, bool on_private) : bits_(bits), on_private_(on_private) {}
  bool OnPrivateFileSystem() override { return on_private_; }
  bool Has(int up, const char* name) override {
    Check(up >= 0 && up <= 2 && name != nullptr && name[0] != 0);
    const bool yes = asked_ < 16 && ((bits_ >> asked_) & 1);
    ++asked_;
    return yes;
  }

 private:
  uint16_t bits_;
  bool on_private_;
  int asked_ = 0;
};

bool IsDotGit(const std::string& n) {
  if (n.size() != 4 || n[0] != '.') return false;
  for (size_t i = 1; i < 4; ++i) {
    if ((n[i] | 0x20) != "git"[i - 1]) return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 4) return 0;
  const auto change = static_cast<Change>(data[0] % 7);
  const auto kind = static_cast<Kind>(data[1] % 4);
  const uint16_t bits = static_cast<uint16_t>(data[2] | data[3] << 8);
  std::string rest(reinterpret_cast<const char*>(data + 4), size - 4);
  const size_t nul = rest.find('\0');
  if (nul == std::string::npos) return 0;
  const std::string dir = rest.substr(0, nul);
  std::string name = rest.substr(nul + 1);
  name = name.substr(0, name.find('\0'));
  if (dir.size() > 4096 || name.size() > 255 || name.find('/') != std::string::npos) return 0;

  Config config;
  config.git_roots[config.git_root_count++] = "/w";
  config.git_roots[config.git_root_count++] = "/";
  config.private_roots[config.private_root_count++] = "/tmp/srt-1";
  const char* blocked[] = {"/w/.mcp.json", "/w/a/b/.env"};
  config.blocked = blocked;
  config.blocked_count = 2;
  const char* mounted[] = {"/w/.bashrc", "/w/x/srt.json"};
  config.mounted = mounted;
  config.mounted_count = 2;

  const bool on_private = (data[1] & 0x80) != 0;
  BitsProbe p1(bits, on_private), p2(bits, on_private);
  const Verdict v = Judge(config, change, kind, dir.c_str(), name.c_str(), p1);
  Check(Judge(config, change, kind, dir.c_str(), name.c_str(), p2) == v);
  if (name.empty() || name == "." || name == "..") Check(v == Verdict::kAllow);
  const bool known = !dir.empty() && dir[0] == '/';
  auto within = [&](const std::string& root) {
    return dir == root || (dir.size() > root.size() && dir.compare(0, root.size(), root) == 0 &&
                           dir[root.size()] == '/');
  };
  // Moving a `.git` away plants nothing (where it lands is judged as its own change).
  if (IsDotGit(name) && known && !(within("/tmp/srt-1") && on_private) &&
      change != Change::kMoveOut) {
    Check(v != Verdict::kAllow);
  }
  if (dir == "/w" && name == ".mcp.json") Check(v == Verdict::kProtectedPath);
  if (within("/w/a/b/.env") && !name.empty() && name != "." && name != "..") {
    Check(v == Verdict::kProtectedPath);
  }
  if (dir == "/w" && name == ".bashrc") Check(v == Verdict::kReadOnly);
  // What leaves a name is refused only for a protected path.
  if (change == Change::kMoveOut) {
    Check(v == Verdict::kAllow || v == Verdict::kReadOnly || v == Verdict::kProtectedPath);
  }
  if (known && within("/tmp/srt-1") && on_private && dir.find("/w") != 0) {
    Check(v == Verdict::kAllow || v == Verdict::kProtectedPath);
  }
  return 0;
}
