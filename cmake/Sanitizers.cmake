# SRT_SANITIZE=address,undefined instruments every hosted target; the freestanding srt-init never is
# (it has no runtime to report into).
function(srt_target_sanitize target)
  if(SRT_SANITIZE)
    target_compile_options(${target} PRIVATE -fsanitize=${SRT_SANITIZE} -fno-sanitize-recover=all
                                             -fno-omit-frame-pointer)
    target_link_options(${target} PRIVATE -fsanitize=${SRT_SANITIZE})
  endif()
endfunction()
