// SPDX-License-Identifier: Apache-2.0
// mitm/ossl_loader: libssl and libcrypto, loaded on first use instead of at every start.
//
// Every srt run used to map both libraries and bind their symbols before main(): about 0.7 ms
// of CPU and 150 page faults per sandboxed command (bench/README.md), paid by every run although
// only TLS termination and SigV4 re-signing use them. srt now defines, for each OpenSSL function
// it calls (ossl_symbols.inc), a stub of the same name that jumps through a slot. A slot starts
// empty: the first call of any stub loads libssl (and with it libcrypto) with dlopen, fills every
// slot with dlsym, makes the slots read-only, and goes on to the function asked for. The stubs
// are hidden (never exported, so libssl's own calls never reach them) and take the caller's
// arguments untouched, so no call site knows. A library that cannot be loaded stops srt with a
// message naming it: the same outcome as the loader's before main(), only later.
//
// x86-64 only (the stubs are assembly); elsewhere srt links OpenSSL as before (CMakeLists.txt).
#include <dlfcn.h>
#include <openssl/opensslv.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <iterator>
#include <mutex>
#include <string>

#if !defined(__x86_64__)
#error "mitm/ossl_loader.cc has x86-64 stubs only; build with SRT_LAZY_OPENSSL=OFF"
#endif

namespace {

constexpr size_t kSlotsBytes = 4096;
const char* const kSymbolNames[] = {
#define SRT_OSSL(index, name) #name,
#include "mitm/ossl_symbols.inc"
#undef SRT_OSSL
};
constexpr int kSymbolCount = static_cast<int>(std::size(kSymbolNames));
static_assert(std::size(kSymbolNames) * sizeof(void*) <= kSlotsBytes,
              "more OpenSSL functions than slots");

// The slots' indices are the list's order (the stubs name them by number).
constexpr bool IndicesInOrder() {
  int expected = 0;
  bool ok = true;
#define SRT_OSSL(index, name) ok = ok && (index) == expected++;
#include "mitm/ossl_symbols.inc"
#undef SRT_OSSL
  return ok;
}
static_assert(IndicesInOrder(), "ossl_symbols.inc: indices must count up from 0");

[[noreturn]] void Die(const std::string& what) {
  const std::string line = "srt: " + what + "\n";
  (void)!write(STDERR_FILENO, line.data(), line.size());
  std::abort();
}

}  // namespace

extern "C" {

// One page of its own, so that it can be made read-only once filled (as the GOT is with
// -z relro -z now).
__attribute__((visibility("hidden"),
               aligned(4096))) void* srt_ossl_slots[kSlotsBytes / sizeof(void*)] = {};

// Called by a stub whose slot is empty, with the caller's argument registers saved.
__attribute__((visibility("hidden"), used)) void srt_ossl_load() {
  static std::once_flag once;
  std::call_once(once, [] {
    const std::string soname = "libssl.so." + std::to_string(OPENSSL_VERSION_MAJOR);
    void* ssl = dlopen(soname.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (ssl == nullptr) {
      const char* why = dlerror();
      Die("cannot load " + soname +
          " (TLS termination and SigV4 signing need OpenSSL): " + (why ? why : "unknown error"));
    }
    void* found[kSymbolCount] = {};
    for (int i = 0; i < kSymbolCount; ++i) {
      // libssl's handle reaches libcrypto's symbols too (its dependency).
      found[i] = dlsym(ssl, kSymbolNames[i]);
      if (found[i] == nullptr) {
        Die(std::string("OpenSSL function ") + kSymbolNames[i] + " not found in " + soname);
      }
    }
    std::memcpy(srt_ossl_slots, found, sizeof found);
    if (mprotect(srt_ossl_slots, kSlotsBytes, PROT_READ) != 0) {
      Die("mprotect of the OpenSSL slots failed");
    }
  });
}

}  // extern "C"

// A slot's first use: save the argument registers (%rax holds a variadic call's count of vector
// registers, e.g. EVP_PKEY_Q_keygen), load, restore, jump. %r11 carries the slot's address.
// OpenSSL's functions take no floating-point arguments; xmm0-7 are saved anyway.
asm(R"(
  .text
  .p2align 4
  .type srt_ossl_resolve, @function
srt_ossl_resolve:
  pushq %rdi
  pushq %rsi
  pushq %rdx
  pushq %rcx
  pushq %r8
  pushq %r9
  pushq %rax
  pushq %r11
  subq $136, %rsp
  movdqu %xmm0, 0(%rsp)
  movdqu %xmm1, 16(%rsp)
  movdqu %xmm2, 32(%rsp)
  movdqu %xmm3, 48(%rsp)
  movdqu %xmm4, 64(%rsp)
  movdqu %xmm5, 80(%rsp)
  movdqu %xmm6, 96(%rsp)
  movdqu %xmm7, 112(%rsp)
  call srt_ossl_load
  movdqu 0(%rsp), %xmm0
  movdqu 16(%rsp), %xmm1
  movdqu 32(%rsp), %xmm2
  movdqu 48(%rsp), %xmm3
  movdqu 64(%rsp), %xmm4
  movdqu 80(%rsp), %xmm5
  movdqu 96(%rsp), %xmm6
  movdqu 112(%rsp), %xmm7
  addq $136, %rsp
  popq %r11
  popq %rax
  popq %r9
  popq %r8
  popq %rcx
  popq %rdx
  popq %rsi
  popq %rdi
  jmp *(%r11)
  .size srt_ossl_resolve, .-srt_ossl_resolve
)");

// Each stub: jump through its slot, or resolve first. Hidden: srt's own calls bind to it at link
// time, and nothing loaded at run time (libssl included) can reach it.
// clang-format off
#define SRT_OSSL(index, name)                                    \
  asm(".text\n"                                                  \
      ".p2align 4\n"                                             \
      ".globl " #name "\n"                                       \
      ".hidden " #name "\n"                                      \
      ".type " #name ", @function\n"                             \
      #name ":\n"                                                \
      "  movq srt_ossl_slots+8*" #index "(%rip), %r11\n"         \
      "  testq %r11, %r11\n"                                     \
      "  jz 1f\n"                                                \
      "  jmp *%r11\n"                                            \
      "1:\n"                                                     \
      "  leaq srt_ossl_slots+8*" #index "(%rip), %r11\n"         \
      "  jmp srt_ossl_resolve\n"                                 \
      ".size " #name ", .-" #name "\n");
// clang-format on
#include "mitm/ossl_symbols.inc"
#undef SRT_OSSL
