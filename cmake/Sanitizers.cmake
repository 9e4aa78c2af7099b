# SPDX-License-Identifier: Apache-2.0
# SRT_SANITIZE=address,undefined instruments every hosted target; the freestanding srt-init never is
# (it has no runtime to report into).
# SRT_FUZZ (clang only) adds -fsanitize=fuzzer-no-link to the same targets, so that libFuzzer sees
# coverage inside the libraries and not only in the fuzz targets' own files (c-ares FUZZING.md);
# tests/fuzz adds -fsanitize=fuzzer to the fuzz targets themselves.
if(SRT_FUZZ AND NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  message(FATAL_ERROR "SRT_FUZZ needs clang (libFuzzer); use the `fuzz` preset")
endif()

function(srt_target_sanitize target)
  if(SRT_SANITIZE)
    target_compile_options(${target} PRIVATE -fsanitize=${SRT_SANITIZE} -fno-sanitize-recover=all
                                             -fno-omit-frame-pointer)
    target_link_options(${target} PRIVATE -fsanitize=${SRT_SANITIZE})
  endif()
  if(SRT_FUZZ)
    target_compile_options(${target} PRIVATE -fsanitize=fuzzer-no-link)
    target_link_options(${target} PRIVATE -fsanitize=fuzzer-no-link)
  endif()
endfunction()
