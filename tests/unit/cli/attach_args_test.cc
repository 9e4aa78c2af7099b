// SPDX-License-Identifier: Apache-2.0
// srt-attach's parser (srt-cli/init/attach_args.h, freestanding) against srt's own: what
// follows `srt-attach SOCKET` means what it means after `srt --attach SOCKET`.
#include "attach_args.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "args.h"

namespace srt::attach {
namespace {

struct Parsed {
  bool ok = false;
  std::vector<std::string> argv;
  bool debug = false;
};

Parsed Attach(std::vector<std::string> words) {
  words.insert(words.begin(), {"srt-attach", "/run/s.sock"});
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  const AttachArgs a = ParseAttachArgs(static_cast<int>(words.size()), argv.data());
  Parsed p;
  p.ok = a.action == AttachArgs::kRun;
  if (!p.ok) return p;
  EXPECT_STREQ(a.socket, "/run/s.sock");
  if (a.shell_command) p.argv = {"bash", "-c", a.shell_command};
  for (size_t i = 0; i < a.word_count; ++i) p.argv.emplace_back(a.words[i]);
  p.debug = a.debug;
  return p;
}

Parsed Srt(const std::vector<std::string>& words) {
  std::vector<std::string_view> args = {"--attach", "/run/s.sock"};
  args.insert(args.end(), words.begin(), words.end());
  Result<cli::CliOptions> o = cli::ParseArgs(args);
  Parsed p;
  p.ok = o && o->action == cli::CliOptions::Action::kRun;
  if (!p.ok) return p;
  EXPECT_EQ(o->attach_socket, "/run/s.sock");
  p.argv = o->argv;
  p.debug = o->debug;
  return p;
}

TEST(AttachArgsTest, MeansWhatSrtAttachMeans) {
  const std::vector<std::vector<std::string>> cases = {
      {"true", "x"},
      {"git", "status", "--short"},
      {"echo single word"},
      {"ls"},
      {"-c", "echo $0 $1", "a", "b"},
      {"-cecho inline"},
      {"-d", "true", "x"},
      {"--debug", "-c", "exit 3"},
      {"--", "-weird", "arg"},
      {"--", "ls"},
      {"-d", "--", "true", "-d"},
      {"-", "x"},
      {"true", "-c", "x"},
      {"-c", "true", "-d"},
      // Refused by both.
      {},
      {"-c"},
      {"-c", ""},
      {""},
      {"--"},
      {"-d"},
      {"-s", "settings.json", "true", "x"},
      {"--settings=settings.json", "true", "x"},
      {"--memory", "1G", "true", "x"},
      {"--timeout", "5s", "true", "x"},
      {"--pass-fd", "3", "true", "x"},
      {"--serve", "/run/t.sock"},
      {"--attach", "/run/t.sock", "true", "x"},
      {"--no-such-option", "true", "x"},
  };
  for (const auto& c : cases) {
    std::string shown;
    for (const std::string& w : c) shown += "[" + w + "] ";
    SCOPED_TRACE(shown);
    const Parsed ours = Attach(c);
    const Parsed srt = Srt(c);
    EXPECT_EQ(ours.ok, srt.ok);
    EXPECT_EQ(ours.argv, srt.argv);
    EXPECT_EQ(ours.debug, srt.debug);
  }
}

TEST(AttachArgsTest, HelpVersionAndTheSocketFirst) {
  auto action = [](std::vector<std::string> words) {
    words.insert(words.begin(), "srt-attach");
    std::vector<char*> argv;
    for (std::string& w : words) argv.push_back(w.data());
    argv.push_back(nullptr);
    return ParseAttachArgs(static_cast<int>(words.size()), argv.data()).action;
  };
  EXPECT_EQ(action({"--help"}), AttachArgs::kHelp);
  EXPECT_EQ(action({"-h"}), AttachArgs::kHelp);
  EXPECT_EQ(action({"--version"}), AttachArgs::kVersion);
  EXPECT_EQ(action({"/run/s.sock", "-V"}), AttachArgs::kVersion);
  EXPECT_EQ(action({}), AttachArgs::kError);
  EXPECT_EQ(action({""}), AttachArgs::kError);
  EXPECT_EQ(action({"-d", "/run/s.sock", "true", "x"}), AttachArgs::kError);
  EXPECT_EQ(action({"/run/s.sock", "true", "x"}), AttachArgs::kRun);
}

}  // namespace
}  // namespace srt::attach
