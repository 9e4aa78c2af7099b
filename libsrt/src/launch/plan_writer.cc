// SPDX-License-Identifier: Apache-2.0
// Plan encoding for srt-init.
#include "launch/plan_writer.h"

#include "init_protocol/wire.h"

namespace srt::launch {

namespace {

void PutU32(std::string& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
}

void Record(std::string& out, uint16_t tag, std::string_view payload) {
  PutU32(out, tag);
  PutU32(out, static_cast<uint32_t>(payload.size()));
  out.append(payload);
}

void RecordU32(std::string& out, uint16_t tag, uint32_t v) {
  std::string p;
  PutU32(p, v);
  Record(out, tag, p);
}

void RecordString(std::string& out, uint16_t tag, std::string_view s) {
  std::string p(s);
  p += '\0';
  Record(out, tag, p);
}

// One record per descriptor srt-init reopens, in both plans (a command's and a warm
// sandbox's): one encoding, so that the two cannot drift apart.
void RecordReopens(std::string& out, const std::vector<InitPlanSpec::Reopen>& reopens) {
  for (const InitPlanSpec::Reopen& r : reopens) {
    std::string p;
    PutU32(p, static_cast<uint32_t>(r.fd));
    PutU32(p, static_cast<uint32_t>(r.flags));
    p += r.path;
    p += '\0';
    Record(out, wire::kTagReopen, p);
  }
}

std::string Header() {
  std::string out;
  PutU32(out, wire::kPlanMagic);
  PutU32(out, wire::kPlanVersion);
  return out;
}

}  // namespace

std::string EncodeInitPlan(const InitPlanSpec& spec) {
  std::string out = Header();
  RecordU32(out, wire::kTagStderrFd, static_cast<uint32_t>(spec.stderr_fd));
  for (int fd : spec.keep_fds) RecordU32(out, wire::kTagKeepFd, static_cast<uint32_t>(fd));
  if (spec.nofile) {
    std::string p;
    for (uint64_t v : {spec.nofile->first, spec.nofile->second}) {
      for (int b = 0; b < 8; ++b) p.push_back(static_cast<char>((v >> (8 * b)) & 0xff));
    }
    Record(out, wire::kTagNofile, p);
  }
  if (spec.terminal) RecordU32(out, wire::kTagTerminal, spec.terminal);
  RecordReopens(out, spec.reopens);
  if (spec.serve) RecordU32(out, wire::kTagServe, 1);
  if (!spec.cwd.empty()) RecordString(out, wire::kTagCwd, spec.cwd);
  for (const std::string& a : spec.argv) RecordString(out, wire::kTagArg, a);
  return out;
}

std::string EncodeExecPlan(const ExecPlanSpec& spec) {
  std::string out = Header();
  for (const std::string& a : spec.argv) RecordString(out, wire::kTagArg, a);
  for (const std::string& e : spec.env) RecordString(out, wire::kTagEnv, e);
  RecordString(out, wire::kTagCwd, spec.cwd);
  if (spec.terminal) RecordU32(out, wire::kTagTerminal, spec.terminal);
  RecordReopens(out, spec.reopens);
  return out;
}

std::string EncodeAgentPlan(wire::ProcMode proc, const PrivateTmpdir& tmpdir,
                            const std::vector<policy::Protection>& protections,
                            const std::vector<wire::NetSocket>& sockets, const GuardPlan& guard,
                            const std::vector<std::string>& covers,
                            const std::vector<std::string>& masks,
                            const std::vector<policy::SymlinkedFile>& symlinked, uint32_t ptys,
                            const std::vector<std::string>& shows,
                            const std::vector<std::string>& seals) {
  std::string out = Header();
  RecordU32(out, wire::kTagProc, proc);
  for (const std::string& path : shows) RecordString(out, wire::kTagShow, path);
  for (const std::string& dir : seals) RecordString(out, wire::kTagSeal, dir);
  if (ptys != 0) RecordU32(out, wire::kTagPtys, ptys);
  if (!tmpdir.path.empty()) {
    RecordString(out, tmpdir.in_kept_parent ? wire::kTagTmpdirIn : wire::kTagTmpdir, tmpdir.path);
  }
  for (const wire::NetSocket& ns : sockets) {
    std::string p;
    PutU32(p, ns.kind);
    PutU32(p, ns.family);
    PutU32(p, ns.port);
    p.append(reinterpret_cast<const char*>(ns.address), sizeof ns.address);
    Record(out, wire::kTagNetSocket, p);
  }
  for (const wire::GuardCall& c : guard.calls) {
    std::string p;
    PutU32(p, c.arch);
    PutU32(p, c.nr);
    PutU32(p, c.op);
    Record(out, wire::kTagGuardCall, p);
  }
  for (const std::string& r : guard.roots) RecordString(out, wire::kTagGuardRoot, r);
  for (const std::string& r : guard.private_roots) RecordString(out, wire::kTagGuardPrivate, r);
  if (guard.flags != 0) RecordU32(out, wire::kTagGuardFlags, guard.flags);
  const auto record_with_spellings = [&](uint16_t tag, const std::string& path) {
    RecordString(out, tag, path);
    for (const policy::SymlinkedFile& s : symlinked) {
      if (s.path == path) RecordString(out, wire::kTagSpelled, s.spelled);
    }
  };
  for (const std::string& path : covers) record_with_spellings(wire::kTagCover, path);
  for (const std::string& path : masks) record_with_spellings(wire::kTagMask, path);
  for (const policy::Protection& p : protections) {
    const bool pin = p.kind == policy::ProtectKind::kPin;
    RecordString(out, pin ? wire::kTagPin : wire::kTagProtect, p.path);
    if (!pin && !p.host_path.empty() && p.host_path != p.path) {
      RecordString(out, wire::kTagHostPath, p.host_path);
    }
  }
  return out;
}

}  // namespace srt::launch
