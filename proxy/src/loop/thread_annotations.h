// SPDX-License-Identifier: Apache-2.0
// loop/thread_annotations.h: Clang thread-safety attributes and an annotated mutex (house style
// §2.6: "annotate shared state with GUARDED_BY"). libstdc++'s std::mutex carries no capability
// attribute, so the analysis needs this thin wrapper; under GCC the macros expand to nothing.
#pragma once

#include <mutex>

#if defined(__clang__)
#define SRT_THREAD_ANNOTATION_(x) __attribute__((x))
#else
#define SRT_THREAD_ANNOTATION_(x)
#endif

#define SRT_CAPABILITY(x) SRT_THREAD_ANNOTATION_(capability(x))
#define SRT_SCOPED_CAPABILITY SRT_THREAD_ANNOTATION_(scoped_lockable)
#define SRT_GUARDED_BY(x) SRT_THREAD_ANNOTATION_(guarded_by(x))
#define SRT_PT_GUARDED_BY(x) SRT_THREAD_ANNOTATION_(pt_guarded_by(x))
#define SRT_REQUIRES(...) SRT_THREAD_ANNOTATION_(requires_capability(__VA_ARGS__))
#define SRT_ACQUIRE(...) SRT_THREAD_ANNOTATION_(acquire_capability(__VA_ARGS__))
#define SRT_RELEASE(...) SRT_THREAD_ANNOTATION_(release_capability(__VA_ARGS__))
#define SRT_EXCLUDES(...) SRT_THREAD_ANNOTATION_(locks_excluded(__VA_ARGS__))

namespace srt::proxy {

// A std::mutex the analysis understands.
class SRT_CAPABILITY("mutex") Mutex {
 public:
  void Lock() SRT_ACQUIRE() { mu_.lock(); }
  void Unlock() SRT_RELEASE() { mu_.unlock(); }
  // For std::condition_variable: wait on native() with a std::unique_lock adopted under a
  // MutexLock (the lock is held again when wait() returns, so the annotations stay truthful).
  std::mutex& native() { return mu_; }

 private:
  std::mutex mu_;
};

// Holds `mu` for the enclosing scope.
class SRT_SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex& mu) SRT_ACQUIRE(mu) : mu_(mu) { mu_.Lock(); }
  ~MutexLock() SRT_RELEASE() { mu_.Unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  Mutex& mu_;
};

}  // namespace srt::proxy
