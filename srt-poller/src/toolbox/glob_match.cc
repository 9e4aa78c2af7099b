// SPDX-License-Identifier: Apache-2.0
// Pure glob matching for the glob tool (see glob_match.h).
#include "toolbox/glob_match.h"

#include <fnmatch.h>

#include <string>
#include <vector>

namespace srt::poller::toolbox {
namespace {

std::vector<std::string> Segments(std::string_view s) {
  std::vector<std::string> out;
  size_t i = 0;
  for (;;) {
    size_t j = s.find('/', i);
    if (j == std::string_view::npos) {
      out.emplace_back(s.substr(i));
      return out;
    }
    out.emplace_back(s.substr(i, j - i));
    i = j + 1;
  }
}

class Matcher {
 public:
  Matcher(std::vector<std::string> pat, std::vector<std::string> name)
      : pat_(std::move(pat)),
        name_(std::move(name)),
        memo_((pat_.size() + 1) * (name_.size() + 1), -1) {}

  // Does pat_[p..] match name_[n..]?
  bool Match(size_t p, size_t n) {
    int8_t& m = memo_[p * (name_.size() + 1) + n];
    if (m < 0) m = Compute(p, n) ? 1 : 0;
    return m == 1;
  }

 private:
  bool Compute(size_t p, size_t n) {
    while (p < pat_.size()) {
      if (pat_[p] == "**") {
        while (p < pat_.size() && pat_[p] == "**") ++p;  // consecutive "**" are one
        if (p == pat_.size()) return true;               // a trailing "**" takes the rest
        for (size_t i = n; i <= name_.size(); ++i) {
          if (Match(p, i)) return true;
        }
        return false;
      }
      if (n == name_.size()) return false;
      if (fnmatch(pat_[p].c_str(), name_[n].c_str(), 0) != 0) return false;
      ++p;
      ++n;
    }
    return n == name_.size();
  }

  std::vector<std::string> pat_;
  std::vector<std::string> name_;
  std::vector<int8_t> memo_;
};

}  // namespace

bool HasParentDirSegment(std::string_view pattern) {
  for (const auto& s : Segments(pattern)) {
    if (s == "..") return true;
  }
  return false;
}

bool GlobMatch(std::string_view pattern, std::string_view rel) {
  return Matcher(Segments(pattern), Segments(rel)).Match(0, 0);
}

}  // namespace srt::poller::toolbox
