# SPDX-License-Identifier: Apache-2.0
# Warning flags shared by every hosted target (house style §2.10).
set(SRT_WARNINGS
  -Wall -Wextra -Wshadow -Wconversion -Wsign-conversion -Wformat=2 -Werror=format-security
  -Wimplicit-fallthrough -Wnon-virtual-dtor -Wno-missing-field-initializers
  # GCC 12 reports impossible overlaps inside libstdc++'s std::string at -O3 (GCC bug 105329).
  $<$<CXX_COMPILER_ID:GNU>:-Wno-restrict>)
option(SRT_WERROR "Treat warnings as errors" ON)
if(SRT_WERROR)
  list(APPEND SRT_WARNINGS -Werror)
endif()

function(srt_target_defaults target)
  target_compile_options(${target} PRIVATE ${SRT_WARNINGS})
  srt_target_sanitize(${target})
endfunction()
