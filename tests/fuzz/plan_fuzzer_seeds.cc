// SPDX-License-Identifier: Apache-2.0
// Writes the seed corpus of plan_fuzzer (corpus/plan/): plans encoded by launch/plan_writer, the
// encoder srt itself uses, plus hand-made mutations of them that the decoders must reject.
// Usage: plan_fuzzer_seeds DIR   (files are overwritten; commit what changes)
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "init_protocol/wire.h"
#include "launch/plan_writer.h"

namespace {

using srt::launch::EncodeAgentPlan;
using srt::launch::EncodeInitPlan;
using srt::launch::InitPlanSpec;
using srt::policy::Protection;
using srt::policy::ProtectKind;

void PutU32(std::string& out, size_t at, uint32_t v) {
  for (size_t i = 0; i < 4; ++i) out[at + i] = static_cast<char>((v >> (8 * i)) & 0xff);
}

std::string Record(uint16_t tag, const std::string& payload) {
  std::string r(8, '\0');
  PutU32(r, 0, tag);
  PutU32(r, 4, static_cast<uint32_t>(payload.size()));
  return r + payload;
}

std::string U32(uint32_t v) {
  std::string s(4, '\0');
  PutU32(s, 0, v);
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 1;
  }
  const std::string dir = argv[1];
  std::vector<std::pair<std::string, std::string>> seeds;

  // A plain run's init plan names its working directory.
  auto plain = [](InitPlanSpec spec) {
    spec.cwd = "/w";
    return EncodeInitPlan(spec);
  };
  const std::string typical = plain({8, {3, 5}, {"bash", "-c", "echo hi", ""}});
  seeds.push_back({"init_minimal", plain({2, {}, {"true"}})});
  seeds.push_back({"init_no_cwd", EncodeInitPlan({2, {}, {"true"}})});
  InitPlanSpec relative{2, {}, {"true"}};
  relative.cwd = "w";
  seeds.push_back({"init_relative_cwd", EncodeInitPlan(relative)});
  seeds.push_back({"init_typical", typical});
  InitPlanSpec many{2, {}, {}};
  for (int i = 0; i < 64; ++i) many.keep_fds.push_back(10 + i);
  for (int i = 0; i < 40; ++i) many.argv.push_back("arg" + std::to_string(i));
  seeds.push_back({"init_max_keep_fds", plain(many)});
  many.keep_fds.push_back(99);
  seeds.push_back({"init_too_many_keep_fds", plain(many)});
  seeds.push_back({"init_no_command", plain({2, {}, {}})});
  seeds.push_back({"init_stderr_too_big", plain({-1, {}, {"true"}})});
  InitPlanSpec terminal{8, {7}, {"bash"}, std::nullopt, 0b111};
  terminal.reopens = {{7, 02001, "/dev/null"}, {1, 1, "/dev/zero"}};
  seeds.push_back({"init_terminal_and_devices", plain(terminal)});
  terminal.reopens = {{0, 0, "/etc/passwd"}};
  seeds.push_back({"init_reopen_not_a_device", plain(terminal)});

  const std::vector<Protection> ps = {{ProtectKind::kPin, "/w/.git", true, ""},
                                      {ProtectKind::kProtect, "/w/.git/hooks", true, ""},
                                      {ProtectKind::kProtect, "/w/.bashrc", false, ""},
                                      {ProtectKind::kProtect, "/w/.claude/commands", false, ""}};
  const std::string agent = EncodeAgentPlan(srt::wire::kProcHidePid, {"/tmp/srt-0123456789ab"}, ps);
  seeds.push_back({"agent_typical", agent});
  seeds.push_back({"agent_empty", EncodeAgentPlan(srt::wire::kProcAsIs, {}, {})});
  seeds.push_back({"agent_serve_ptys", EncodeAgentPlan(srt::wire::kProcHidePid, {}, {}, {}, {}, {},
                                                       {}, {}, srt::wire::kMaxPtys)});
  seeds.push_back(
      {"agent_tmpdir_in_kept_parent",
       EncodeAgentPlan(srt::wire::kProcHidePid, {"/tmp/srt-1000/0123456789ab", true}, ps)});
  seeds.push_back({"agent_relative_path", EncodeAgentPlan(srt::wire::kProcAsIs, {},
                                                          {{ProtectKind::kPin, "w", true, ""}})});

  // Mutations of the typical plans.
  seeds.push_back({"mut_empty", ""});
  seeds.push_back({"mut_header_only", typical.substr(0, 8)});
  seeds.push_back({"mut_truncated_record", typical.substr(0, typical.size() - 1)});
  seeds.push_back({"mut_truncated_head", typical.substr(0, 8 + 6)});
  std::string s = typical;
  s[0] = 'X';
  seeds.push_back({"mut_bad_magic", s});
  s = typical;
  PutU32(s, 4, srt::wire::kPlanVersion + 1);
  seeds.push_back({"mut_next_version", s});
  s = typical;
  s[8] = 99;
  seeds.push_back({"mut_unknown_tag", s});
  s = typical;
  s[10] = 1;  // the u16 after the tag must be zero
  seeds.push_back({"mut_head_high_bits", s});
  s = typical;
  PutU32(s, 12, 0xfffffff0u);
  seeds.push_back({"mut_length_past_end", s});
  s = typical;
  s[s.rfind("echo hi") + 4] = '\0';
  seeds.push_back({"mut_embedded_nul", s});
  s = typical;
  s.back() = 'x';
  seeds.push_back({"mut_unterminated_arg", s});
  seeds.push_back({"mut_keep_fd_short",
                   typical + Record(srt::wire::kTagKeepFd, std::string("\x03\x00\x00", 3))});
  seeds.push_back(
      {"mut_agent_tag_in_init", typical + Record(srt::wire::kTagPin, std::string("/w\0", 3))});
  seeds.push_back({"mut_proc_mode_3", agent + Record(srt::wire::kTagProc, U32(3))});
  seeds.push_back({"mut_two_stderr_records", typical + Record(srt::wire::kTagStderrFd, U32(9))});
  seeds.push_back({"mut_zero_length_arg", typical + Record(srt::wire::kTagArg, "")});
  seeds.push_back({"mut_empty_path", agent + Record(srt::wire::kTagProtect, std::string(1, '\0'))});
  seeds.push_back(
      {"agent_cover", agent + Record(srt::wire::kTagCover, std::string("/w/.env\0", 8))});
  seeds.push_back({"agent_cover_spelled",
                   agent + Record(srt::wire::kTagCover, std::string("/w/..v1/token\0", 14)) +
                       Record(srt::wire::kTagSpelled, std::string("/w/token\0", 9))});
  seeds.push_back({"mut_spelled_after_protect",
                   agent + Record(srt::wire::kTagProtect, std::string("/w/.env\0", 8)) +
                       Record(srt::wire::kTagSpelled, std::string("/w/token\0", 9))});
  seeds.push_back({"mut_host_path_after_cover",
                   agent + Record(srt::wire::kTagCover, std::string("/w/.env\0", 8)) +
                       Record(srt::wire::kTagHostPath, std::string("/h\0", 3))});

  for (const auto& [name, bytes] : seeds) {
    std::ofstream out(dir + "/" + name, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out) {
      std::fprintf(stderr, "cannot write '%s/%s'\n", dir.c_str(), name.c_str());
      return 1;
    }
  }
  std::printf("wrote %zu seeds to %s\n", seeds.size(), dir.c_str());
  return 0;
}
