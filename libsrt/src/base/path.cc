// SPDX-License-Identifier: Apache-2.0
// Lexical path helpers.
#include "base/path.h"

namespace srt::path {

std::string Normalize(std::string_view absolute) {
  std::vector<std::string_view> parts;
  size_t i = 0;
  while (i < absolute.size()) {
    while (i < absolute.size() && absolute[i] == '/') ++i;
    size_t j = i;
    while (j < absolute.size() && absolute[j] != '/') ++j;
    std::string_view part = absolute.substr(i, j - i);
    i = j;
    if (part.empty() || part == ".") continue;
    if (part == "..") {
      if (!parts.empty()) parts.pop_back();
      continue;
    }
    parts.push_back(part);
  }
  std::string out;
  for (std::string_view part : parts) {
    out += '/';
    out += part;
  }
  return out.empty() ? "/" : out;
}

std::string MakeAbsolute(std::string_view p, std::string_view home, std::string_view cwd) {
  if (p == "~") return Normalize(home);
  if (p.size() >= 2 && p[0] == '~' && p[1] == '/') return Normalize(Join(home, p.substr(2)));
  if (IsAbsolute(p)) return Normalize(p);
  return Normalize(Join(cwd, p));
}

std::string Join(std::string_view base, std::string_view rel) {
  std::string out(base);
  if (out.empty() || out.back() != '/') out += '/';
  while (!rel.empty() && rel.front() == '/') rel.remove_prefix(1);
  out += rel;
  return out;
}

std::vector<std::string_view> Components(std::string_view absolute) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < absolute.size()) {
    while (i < absolute.size() && absolute[i] == '/') ++i;
    size_t j = i;
    while (j < absolute.size() && absolute[j] != '/') ++j;
    if (j > i) out.push_back(absolute.substr(i, j - i));
    i = j;
  }
  return out;
}

bool IsWithin(std::string_view p, std::string_view ancestor) {
  if (ancestor == "/") return IsAbsolute(p);
  if (p.size() < ancestor.size() || p.substr(0, ancestor.size()) != ancestor) return false;
  return p.size() == ancestor.size() || p[ancestor.size()] == '/';
}

std::string_view Parent(std::string_view absolute) {
  size_t slash = absolute.rfind('/');
  if (slash == std::string_view::npos || slash == 0) return "/";
  return absolute.substr(0, slash);
}

std::string_view Basename(std::string_view absolute) {
  size_t slash = absolute.rfind('/');
  return slash == std::string_view::npos ? absolute : absolute.substr(slash + 1);
}

// Counted in place (policy resolution sorts by depth, and Components allocates a vector).
size_t Depth(std::string_view absolute) {
  size_t depth = 0;
  for (size_t i = 0; i < absolute.size(); ++i) {
    if (absolute[i] != '/' && (i == 0 || absolute[i - 1] == '/')) ++depth;
  }
  return depth;
}

}  // namespace srt::path
