// SPDX-License-Identifier: Apache-2.0
// srt-init runtime: raw Linux system calls and the few helpers a freestanding program needs.
//
// srt-init runs without libc on purpose: glibc's start-up code costs about 0.8 ms per exec on
// virtual machines where CPUID traps (it probes the CPU dozens of times), and srt-init is exec'd
// once inside every sandbox and once on the host. Everything here returns -errno on failure,
// like the kernel does; nothing allocates.
#pragma once

#include <asm/unistd.h>
#include <linux/types.h>
#include <stddef.h>
#include <stdint.h>

extern "C" {
void* memcpy(void* dst, const void* src, size_t n);
void* memmove(void* dst, const void* src, size_t n);
void* memset(void* dst, int c, size_t n);
int memcmp(const void* a, const void* b, size_t n);
size_t strlen(const char* s);
}

namespace srt::rt {

#if defined(__x86_64__)
inline long Syscall6(long n, long a, long b, long c, long d, long e, long f) {
  long ret;
  register long r10 __asm__("r10") = d;
  register long r8 __asm__("r8") = e;
  register long r9 __asm__("r9") = f;
  __asm__ volatile("syscall"
                   : "=a"(ret)
                   : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
                   : "rcx", "r11", "memory");
  return ret;
}
#elif defined(__aarch64__)
inline long Syscall6(long n, long a, long b, long c, long d, long e, long f) {
  register long x8 __asm__("x8") = n;
  register long x0 __asm__("x0") = a;
  register long x1 __asm__("x1") = b;
  register long x2 __asm__("x2") = c;
  register long x3 __asm__("x3") = d;
  register long x4 __asm__("x4") = e;
  register long x5 __asm__("x5") = f;
  __asm__ volatile("svc 0"
                   : "+r"(x0)
                   : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4), "r"(x5)
                   : "memory");
  return x0;
}
#else
#error "srt-init supports x86_64 and aarch64"
#endif

// Pads the argument pack so Sys() always has six values to read.
#define SRT_SYS(n, ...) ::srt::rt::SysPad(n, ##__VA_ARGS__)
template <typename... A>
inline long SysPad(long n, A... args) {
  static_assert(sizeof...(A) <= 6);
  long v[6] = {0, 0, 0, 0, 0, 0};
  long given[sizeof...(A) + 1] = {(long)args..., 0};
  for (size_t i = 0; i < sizeof...(A); ++i) v[i] = given[i];
  return Syscall6(n, v[0], v[1], v[2], v[3], v[4], v[5]);
}

inline bool Failed(long r) { return r < 0 && r > -4096; }

[[noreturn]] void Exit(int code);

// Writes all of `s` (best effort, retries on EINTR and short writes).
void WriteAll(int fd, const void* data, size_t n);
void WriteStr(int fd, const char* s);

// Parses a non-negative decimal int; false on anything else.
bool ParseInt(const char* s, int& out);
// Formats `v` in decimal into buf (at least 21 bytes); returns the length.
size_t FormatInt(long v, char* buf);

// errno names for diagnostics ("EACCES"), or "errno N".
const char* ErrnoName(int err, char* scratch);

inline constexpr short kPollIn = 0x001;  // POLLIN
inline constexpr int kRlimitNofile = 7;  // RLIMIT_NOFILE
struct PollFd {                          // struct pollfd
  int fd;
  short events;
  short revents;
};

// Maps a plan memfd read-only. Returns its address and sets `size`, or -errno (EINVAL for an
// empty plan or one above `max_size` bytes).
long MapPlan(int fd, size_t max_size, size_t& size);

// Closes every fd >= `from` except those in keep[0..n) (close_range over the gaps; falls back to
// a bounded loop where close_range is missing).
void CloseAllExcept(int from, const int* keep, size_t n);

// An O_PATH descriptor of the command's working directory `path`, resolved without magic links
// (/proc/PID/cwd, /proc/self/fd/N: a symlink the command planted in the path must not lead to a
// directory held from before the protections), for fchdir. Returns the fd or -errno.
long OpenWorkingDirectory(const char* path);

}  // namespace srt::rt
