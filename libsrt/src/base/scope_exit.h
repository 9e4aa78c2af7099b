// SPDX-License-Identifier: Apache-2.0
// ScopeExit runs a function when the scope that holds it ends, however it ends (return,
// exception). For undoing what other threads can see, such as a pointer they reach under a
// lock, where a destructor of its own would be one class per pointer.
#pragma once

#include <utility>

namespace srt {

template <typename F>
class ScopeExit {
 public:
  explicit ScopeExit(F f) : f_(std::move(f)) {}
  ~ScopeExit() { f_(); }
  ScopeExit(const ScopeExit&) = delete;
  ScopeExit& operator=(const ScopeExit&) = delete;
  ScopeExit(ScopeExit&&) = delete;
  ScopeExit& operator=(ScopeExit&&) = delete;

 private:
  F f_;
};

}  // namespace srt
