// Error construction helpers that need errno/strerror.
#include <cerrno>
#include <cstring>

#include "srt/result.h"

namespace srt {

Error SysError(std::string_view what) { return SysError(what, errno); }

Error SysError(std::string_view what, int err) {
  std::string msg(what);
  msg += ": ";
  msg += std::strerror(err);
  Errc code = Errc::kSystem;
  if (err == ENOENT) code = Errc::kNotFound;
  if (err == EACCES || err == EPERM) code = Errc::kPermissionDenied;
  return Error(code, std::move(msg), err);
}

}  // namespace srt
