// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: srt-attach's freestanding argument parser (srt-cli/init/attach_args.h)
// against srt's (srt-cli/args.cc), on arbitrary argument lists (the input split at NUL bytes).
// Properties checked (a violation traps): whatever srt-attach runs, srt --attach runs the same
// (argv and --debug alike); the command it builds has at least one word, and every word it points
// to is one of the input's.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "args.h"
#include "attach_args.h"

namespace {

void Check(bool ok) {
  if (!ok) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<std::string> words = {"srt-attach"};
  std::string word;
  for (size_t i = 0; i < size && words.size() < 64; ++i) {
    if (data[i] == 0) {
      words.push_back(word);
      word.clear();
    } else {
      word += static_cast<char>(data[i]);
    }
  }
  words.push_back(word);
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  const srt::attach::AttachArgs a =
      srt::attach::ParseAttachArgs(static_cast<int>(words.size()), argv.data());
  if (a.action != srt::attach::AttachArgs::kRun) return 0;
  std::vector<std::string> ours;
  if (a.shell_command) ours = {"bash", "-c", a.shell_command};
  for (size_t i = 0; i < a.word_count; ++i) {
    Check(a.words + i >= argv.data() + 2 && a.words + i < argv.data() + words.size());
    ours.emplace_back(a.words[i]);
  }
  // Never an empty command. Its first word may be empty ("" x): both parsers pass it on and the
  // exec fails with "command not found", as a shell's would.
  Check(!ours.empty());
  std::vector<std::string_view> args = {"--attach"};
  for (size_t i = 1; i < words.size(); ++i) args.emplace_back(words[i]);
  srt::Result<srt::cli::CliOptions> srt = srt::cli::ParseArgs(args);
  Check(srt.has_value() && srt->action == srt::cli::CliOptions::Action::kRun);
  Check(srt->attach_socket == words[1]);
  Check(srt->argv == ours);
  Check(srt->debug == a.debug);
  return 0;
}
