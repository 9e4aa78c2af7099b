// sys/real_fs_view: policy::FsView over the real filesystem of the calling process.
#pragma once

#include "policy/fs_view.h"

namespace srt::sys {

class RealFsView final : public policy::FsView {
 public:
  policy::FileType TypeOf(const std::string& path) const override;
  Result<std::string> ReadLink(const std::string& path) const override;
  Result<std::vector<policy::DirEntry>> List(const std::string& dir) const override;
  Result<policy::FileId> IdOf(const std::string& path) const override;
  Result<std::string> ReadSmallFile(const std::string& path, size_t max_bytes) const override;
  bool IsPlaceholder(const std::string& path) const override;
};

}  // namespace srt::sys
