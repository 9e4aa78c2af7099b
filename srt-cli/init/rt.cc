// SPDX-License-Identifier: Apache-2.0
// srt-init runtime: process entry, memory/string primitives, small formatting helpers.
#include "rt.h"

#include <linux/close_range.h>
#include <linux/errno.h>
#include <linux/fcntl.h>
#include <linux/mman.h>
#include <linux/openat2.h>

extern "C" {

// The empty asm in each loop keeps the compiler from recognising the loop as memcpy/memset and
// replacing it with a call to the very function being defined.
void* memcpy(void* dst, const void* src, size_t n) {
  auto* d = static_cast<unsigned char*>(dst);
  const auto* s = static_cast<const unsigned char*>(src);
  for (size_t i = 0; i < n; ++i) {
    d[i] = s[i];
    __asm__ volatile("" ::: "memory");
  }
  return dst;
}
void* memmove(void* dst, const void* src, size_t n) {
  auto* d = static_cast<unsigned char*>(dst);
  const auto* s = static_cast<const unsigned char*>(src);
  if (d < s) {
    for (size_t i = 0; i < n; ++i) {
      d[i] = s[i];
      __asm__ volatile("" ::: "memory");
    }
  } else {
    while (n--) {
      d[n] = s[n];
      __asm__ volatile("" ::: "memory");
    }
  }
  return dst;
}
void* memset(void* dst, int c, size_t n) {
  auto* d = static_cast<unsigned char*>(dst);
  for (size_t i = 0; i < n; ++i) {
    d[i] = static_cast<unsigned char>(c);
    __asm__ volatile("" ::: "memory");
  }
  return dst;
}
int memcmp(const void* a, const void* b, size_t n) {
  const auto* x = static_cast<const unsigned char*>(a);
  const auto* y = static_cast<const unsigned char*>(b);
  for (size_t i = 0; i < n; ++i) {
    if (x[i] != y[i]) return x[i] < y[i] ? -1 : 1;
  }
  return 0;
}
size_t strlen(const char* s) {
  size_t n = 0;
  while (s[n]) ++n;
  return n;
}

int SrtInitMain(int argc, char** argv, char** envp);

// The kernel enters at _start with the stack holding argc, argv[], NULL, envp[], NULL, auxv.
[[noreturn, gnu::used]] void SrtInitStart(long* stack) {
  int argc = static_cast<int>(stack[0]);
  char** argv = reinterpret_cast<char**>(stack + 1);
  char** envp = argv + argc + 1;
  srt::rt::Exit(SrtInitMain(argc, argv, envp));
}

#if defined(__x86_64__)
__asm__(
    ".text\n"
    ".global _start\n"
    "_start:\n"
    "  xor %rbp, %rbp\n"
    "  mov %rsp, %rdi\n"
    "  and $-16, %rsp\n"
    "  call SrtInitStart\n"
    "  hlt\n");
#elif defined(__aarch64__)
__asm__(
    ".text\n"
    ".global _start\n"
    "_start:\n"
    "  mov x29, #0\n"
    "  mov x30, #0\n"
    "  mov x0, sp\n"
    "  and sp, x0, #-16\n"
    "  bl SrtInitStart\n"
    "  brk #0\n");
#endif

}  // extern "C"

namespace srt::rt {

void Exit(int code) {
  for (;;) SRT_SYS(__NR_exit_group, code);
}

void WriteAll(int fd, const void* data, size_t n) {
  const auto* p = static_cast<const char*>(data);
  while (n > 0) {
    long r = SRT_SYS(__NR_write, fd, p, n);
    if (r == -EINTR) continue;
    if (r <= 0) return;
    p += r;
    n -= static_cast<size_t>(r);
  }
}

void WriteStr(int fd, const char* s) { WriteAll(fd, s, strlen(s)); }

bool ParseInt(const char* s, int& out) {
  if (!s || !*s) return false;
  long v = 0;
  for (; *s; ++s) {
    if (*s < '0' || *s > '9') return false;
    v = v * 10 + (*s - '0');
    if (v > 0x7fffffff) return false;
  }
  out = static_cast<int>(v);
  return true;
}

size_t FormatInt(long v, char* buf) {
  char tmp[24];
  size_t n = 0;
  bool neg = v < 0;
  unsigned long u = neg ? 0UL - static_cast<unsigned long>(v) : static_cast<unsigned long>(v);
  do {
    tmp[n++] = static_cast<char>('0' + u % 10);
    u /= 10;
  } while (u);
  size_t len = 0;
  if (neg) buf[len++] = '-';
  while (n) buf[len++] = tmp[--n];
  buf[len] = 0;
  return len;
}

const char* ErrnoName(int err, char* scratch) {
  switch (err) {
    case EPERM:
      return "EPERM (Operation not permitted)";
    case ENOENT:
      return "ENOENT (No such file or directory)";
    case EACCES:
      return "EACCES (Permission denied)";
    case EEXIST:
      return "EEXIST (File exists)";
    case ENOTDIR:
      return "ENOTDIR (Not a directory)";
    case EINVAL:
      return "EINVAL (Invalid argument)";
    case ENOSYS:
      return "ENOSYS (Function not implemented)";
    case EROFS:
      return "EROFS (Read-only file system)";
    case ELOOP:
      return "ELOOP (Too many levels of symbolic links)";
    case EBUSY:
      return "EBUSY (Device or resource busy)";
    case ENOMEM:
      return "ENOMEM (Cannot allocate memory)";
    case ENOEXEC:
      return "ENOEXEC (Exec format error)";
    case E2BIG:
      return "E2BIG (Argument list too long)";
    case ESRCH:
      return "ESRCH (No such process)";
    default:
      break;
  }
  const char prefix[] = "errno ";
  memcpy(scratch, prefix, sizeof prefix - 1);
  FormatInt(err, scratch + sizeof prefix - 1);
  return scratch;
}

long MapPlan(int fd, size_t max_size, size_t& size) {
  constexpr int kSeekEnd = 2;
  long end = SRT_SYS(__NR_lseek, fd, 0, kSeekEnd);
  if (Failed(end)) return end;
  if (end <= 0 || static_cast<size_t>(end) > max_size) return -EINVAL;
  size = static_cast<size_t>(end);
  return SRT_SYS(__NR_mmap, 0, size, PROT_READ, MAP_PRIVATE, fd, 0);
}

void CloseAllExcept(int from, const int* keep, size_t n) {
  // Sort a copy of the keep list (tiny, insertion sort) so the gaps can be closed in order.
  int sorted[128];  // the keep lists are at most kMaxKeepFds (66) + 3
  size_t m = 0;
  for (size_t i = 0; i < n && m < 128; ++i) {
    if (keep[i] < from) continue;
    size_t j = m++;
    while (j > 0 && sorted[j - 1] > keep[i]) {
      sorted[j] = sorted[j - 1];
      --j;
    }
    sorted[j] = keep[i];
  }
  unsigned int lo = static_cast<unsigned int>(from);
  for (size_t i = 0; i <= m; ++i) {
    unsigned int hi = i < m ? static_cast<unsigned int>(sorted[i]) : ~0U;
    if (i < m && static_cast<unsigned int>(sorted[i]) < lo) continue;  // duplicate
    if (hi > lo) {
      unsigned int last = i < m ? hi - 1 : ~0U;
      if (Failed(SRT_SYS(__NR_close_range, lo, last, 0))) {
        // FIXME: remove once Linux 5.9 (close_range) is the baseline.
        unsigned int cap = last > 65536 ? 65536 : last;
        for (unsigned int fd = lo; fd <= cap; ++fd) SRT_SYS(__NR_close, fd);
      }
    }
    if (i < m) lo = static_cast<unsigned int>(sorted[i]) + 1;
  }
}

long OpenWorkingDirectory(const char* path) {
  open_how how{};
  how.flags = static_cast<__u64>(O_PATH | O_DIRECTORY | O_CLOEXEC);
  how.resolve = RESOLVE_NO_MAGICLINKS;
  return SRT_SYS(__NR_openat2, AT_FDCWD, path, &how, sizeof how);
}

}  // namespace srt::rt
