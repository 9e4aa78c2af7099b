// SPDX-License-Identifier: Apache-2.0
// policy/real_fs_view: FsView over the real filesystem of the calling process. The side-effect
// half of the policy side (its own target, srt::policy_real_fs): policy itself stays pure.
#pragma once

#include "policy/fs_view.h"

namespace srt::policy {

class RealFsView final : public FsView {
 public:
  FileType TypeOf(const std::string& path) const override;
  Result<std::string> ReadLink(const std::string& path) const override;
  Result<std::vector<DirEntry>> List(const std::string& dir) const override;
  Result<FileId> IdOf(const std::string& path) const override;
  Result<std::string> ReadSmallFile(const std::string& path, size_t max_bytes) const override;
  bool IsPlaceholder(const std::string& path) const override;
};

}  // namespace srt::policy
