// SPDX-License-Identifier: Apache-2.0
// srt-attach's arguments: `srt-attach SOCKET [-d|--debug] [-c COMMAND | [--] COMMAND] [ARG...]`,
// read as srt's own parser (srt-cli/args.cc) reads what follows `srt --attach SOCKET`; the
// options srt refuses with --attach, and every other, are refused here. Pure and free of libc
// (srt-attach is freestanding, as srt-init); tests/unit/cli/attach_args_test.cc runs it and
// srt's ParseArgs over the same argument lists.
#pragma once

#include <stddef.h>

namespace srt::attach {

struct AttachArgs {
  enum Action { kRun, kHelp, kVersion, kError } action = kError;
  const char* socket = nullptr;
  bool debug = false;
  // The command: `bash -c COMMAND ARG...` for -c COMMAND or a single word, else words[0..n).
  const char* shell_command = nullptr;
  char** words = nullptr;
  size_t word_count = 0;
  // kError: the message (a constant), and the argument it is about (or null).
  const char* error = nullptr;
  const char* error_arg = nullptr;
};

namespace detail {
inline bool Eq(const char* a, const char* b) {
  while (*a && *a == *b) ++a, ++b;
  return *a == *b;
}
}  // namespace detail

// argv[0] is srt-attach itself; argv[argc] is null.
inline AttachArgs ParseAttachArgs(int argc, char** argv) {
  using detail::Eq;
  AttachArgs o;
  auto fail = [&o](const char* message, const char* arg) {
    o.action = AttachArgs::kError;
    o.error = message;
    o.error_arg = arg;
    return o;
  };
  if (argc >= 2 && (Eq(argv[1], "-h") || Eq(argv[1], "--help"))) {
    o.action = AttachArgs::kHelp;
    return o;
  }
  if (argc >= 2 && (Eq(argv[1], "-V") || Eq(argv[1], "--version"))) {
    o.action = AttachArgs::kVersion;
    return o;
  }
  if (argc < 2 || argv[1][0] == 0) {
    return fail("the first argument is the socket of an srt --serve (srt-attach SOCKET COMMAND)",
                nullptr);
  }
  if (argv[1][0] == '-') {
    return fail("the first argument is the socket of an srt --serve, not an option", argv[1]);
  }
  o.socket = argv[1];
  int i = 2;
  bool shell = false;
  for (; i < argc; ++i) {
    const char* a = argv[i];
    if (Eq(a, "--")) {
      ++i;
      break;
    }
    if (a[0] != '-' || a[1] == 0) break;  // the command starts here
    if (Eq(a, "-h") || Eq(a, "--help")) {
      o.action = AttachArgs::kHelp;
      return o;
    }
    if (Eq(a, "-V") || Eq(a, "--version")) {
      o.action = AttachArgs::kVersion;
      return o;
    }
    if (Eq(a, "-d") || Eq(a, "--debug")) {
      o.debug = true;
      continue;
    }
    if (a[1] == 'c') {  // -c COMMAND or -cCOMMAND; what follows are $0, $1, ...
      if (a[2]) {
        o.shell_command = a + 2;
      } else if (i + 1 < argc) {
        o.shell_command = argv[++i];
      } else {
        return fail("option '-c' needs a value", nullptr);
      }
      shell = true;
      ++i;
      break;
    }
    return fail(
        "is not an option of srt-attach (the settings, limits and logs are those of "
        "srt --serve; give them there)",
        a);
  }
  o.words = argv + i;
  o.word_count = static_cast<size_t>(argc - i);
  if (shell) {
    if (o.shell_command[0] == 0) return fail("-c needs a non-empty command", nullptr);
  } else if (o.word_count == 1) {
    if (o.words[0][0] == 0) return fail("the command is empty", nullptr);
    o.shell_command = o.words[0];
    o.words = argv + argc;
    o.word_count = 0;
  } else if (o.word_count == 0) {
    return fail(
        "no command given; run 'srt-attach SOCKET COMMAND [ARG...]', 'srt-attach SOCKET \"shell "
        "command\"' or 'srt-attach SOCKET -c \"shell command\"'",
        nullptr);
  }
  o.action = AttachArgs::kRun;
  return o;
}

}  // namespace srt::attach
