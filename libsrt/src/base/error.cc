// SPDX-License-Identifier: Apache-2.0
// Error construction helpers that need errno, and the texts of errno values and signals.
#include <string.h>  // strerrordesc_np, sigdescr_np (GNU)

#include <cerrno>
#include <string>

#include "base/system_text.h"
#include "srt/result.h"

namespace srt {

const char* ErrnoText(int err) {
  // glibc's own table: constant strings, no locale, no shared buffer.
  const char* text = strerrordesc_np(err);
  return text != nullptr ? text : "unknown error";
}

const char* SignalText(int sig) {
  const char* text = sigdescr_np(sig);
  return text != nullptr ? text : "unknown signal";
}

const char* ProcessLimitText() {
  return "no more processes may be started: the caller's limit (ulimit -u) or this host's "
         "(kernel.threads-max, kernel.pid_max) is reached";
}

std::string StartErrnoText(int err) {
  std::string text = ErrnoText(err);
  if (err == EAGAIN) text += std::string(" (") + ProcessLimitText() + ")";
  return text;
}

Error StartError(std::string_view what, int err) {
  const Errc code = SysError(what, err).code();
  return Error(code, std::string(what) + ": " + StartErrnoText(err), err);
}

Error SysError(std::string_view what) { return SysError(what, errno); }

Error SysError(std::string_view what, int err) {
  std::string msg(what);
  msg += ": ";
  msg += ErrnoText(err);
  Errc code = Errc::kSystem;
  if (err == ENOENT) code = Errc::kNotFound;
  if (err == EACCES || err == EPERM) code = Errc::kPermissionDenied;
  return Error(code, std::move(msg), err);
}

}  // namespace srt
