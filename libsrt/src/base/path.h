// SPDX-License-Identifier: Apache-2.0
// Pure, lexical path helpers. No system calls: symlink resolution goes through policy::FsView.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace srt::path {

// True for "/..." paths.
inline bool IsAbsolute(std::string_view p) { return !p.empty() && p.front() == '/'; }

// Collapses "//", "/./", trailing "/" and resolves ".." lexically; the input must be absolute.
// "/" stays "/"; ".." above the root stays at the root (as the kernel does).
std::string Normalize(std::string_view absolute);

// "~" -> home, "~/x" -> home/x, relative -> cwd/x, absolute unchanged; then Normalize().
// `~user` is not expanded (returned as a relative name under cwd, like upstream srt).
std::string MakeAbsolute(std::string_view p, std::string_view home, std::string_view cwd);

// Joins two paths with exactly one "/" between them. `rel` must not be absolute.
std::string Join(std::string_view base, std::string_view rel);

// "/a/b/c" -> {"a","b","c"}; "/" -> {}.
std::vector<std::string_view> Components(std::string_view absolute);

// True if `p` equals `ancestor` or lies below it (both normalised absolute paths).
bool IsWithin(std::string_view p, std::string_view ancestor);

// Parent of a normalised absolute path; Parent("/") == "/".
std::string_view Parent(std::string_view absolute);
// Last component; Basename("/") == "".
std::string_view Basename(std::string_view absolute);

// Number of components: Depth("/") == 0, Depth("/a/b") == 2.
size_t Depth(std::string_view absolute);

}  // namespace srt::path
