// SPDX-License-Identifier: Apache-2.0
// net/trust_bundle.h: the file the sandbox reads srt's CA from (network.tlsTerminate): a private
// directory `srt-ca-XXXXXX` (mode 0700) under a parent such as /tmp, holding `trust-bundle.crt`
// (0644): srt's CA certificate, the system's roots and extraCaCertPaths, never a key. srt owns
// both and removes them when the object goes; the facade binds the file read-only into the
// sandbox at the same path.
//
// Usage protocol (sandbox.cc): Create(parent) before the policy is resolved (its path becomes a
// read-only bind), Write() once the proxy made the CA, keep the object for the sandbox's life.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "base/unique_fd.h"
#include "srt/result.h"

namespace srt::net {

class TrustBundleFile {
 public:
  [[nodiscard]] static Result<std::unique_ptr<TrustBundleFile>> Create(std::string_view parent);
  ~TrustBundleFile();
  TrustBundleFile(const TrustBundleFile&) = delete;
  TrustBundleFile& operator=(const TrustBundleFile&) = delete;

  // Absolute path of the bundle (it exists, empty, from Create on).
  [[nodiscard]] const std::string& path() const { return path_; }
  // Replaces the contents (through the descriptor opened at Create: no path is followed again).
  [[nodiscard]] Result<void> Write(std::string_view pem);

 private:
  TrustBundleFile() = default;
  std::string dir_;
  std::string path_;
  UniqueFd fd_;
};

}  // namespace srt::net
