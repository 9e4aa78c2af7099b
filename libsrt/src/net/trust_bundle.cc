// SPDX-License-Identifier: Apache-2.0
#include "net/trust_bundle.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <vector>

#include "base/strings.h"
#include "sys/fd.h"

namespace srt::net {

Result<std::unique_ptr<TrustBundleFile>> TrustBundleFile::Create(std::string_view parent) {
  std::unique_ptr<TrustBundleFile> self(new TrustBundleFile());
  std::string pattern = std::string(parent) + "/srt-ca-XXXXXX";
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  if (mkdtemp(buf.data()) == nullptr) {  // mode 0700
    return SysError("create a directory for the TLS trust bundle in " + strings::Quote(parent));
  }
  self->dir_ = buf.data();
  self->path_ = self->dir_ + "/trust-bundle.crt";
  self->fd_.reset(
      open(self->path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644));
  if (!self->fd_) return SysError("create " + strings::Quote(self->path_));
  return self;
}

TrustBundleFile::~TrustBundleFile() {
  fd_.reset();
  if (!path_.empty()) (void)unlink(path_.c_str());
  if (!dir_.empty()) (void)rmdir(dir_.c_str());
}

Result<void> TrustBundleFile::Write(std::string_view pem) {
  if (ftruncate(fd_.get(), 0) != 0) return SysError("truncate " + strings::Quote(path_));
  if (lseek(fd_.get(), 0, SEEK_SET) != 0) return SysError("seek " + strings::Quote(path_));
  SRT_RETURN_IF_ERROR(sys::WriteAll(fd_.get(), pem, "write " + strings::Quote(path_)));
  if (fchmod(fd_.get(), 0644) != 0) return SysError("chmod " + strings::Quote(path_));
  return Ok();
}

}  // namespace srt::net
