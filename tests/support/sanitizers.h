// SPDX-License-Identifier: Apache-2.0
// SRT_TEST_SANITIZED: 1 when this build runs under AddressSanitizer or ThreadSanitizer, whose
// shadow memory and allocator (ASan's quarantine keeps what is freed) make a process's memory
// figures, its address space and its peak RSS, say nothing of the code's own use.
// GCC says so by __SANITIZE_*__, clang by __has_feature.
#pragma once

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SRT_TEST_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SRT_TEST_SANITIZED 1
#endif
#endif
#ifndef SRT_TEST_SANITIZED
#define SRT_TEST_SANITIZED 0
#endif
