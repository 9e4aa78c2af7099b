// SPDX-License-Identifier: Apache-2.0
// StartThread: std::thread's start as an error value. Its constructor throws std::system_error
// when the kernel refuses a thread (EAGAIN at a process limit); srt takes that as a Result
// naming what could not be started and the limit (StartError), never as an exception that
// ends srt without a word.
#pragma once

#include <string_view>
#include <system_error>
#include <thread>
#include <utility>

#include "base/system_text.h"
#include "srt/result.h"

namespace srt {

template <typename Body>
[[nodiscard]] Result<std::thread> StartThread(std::string_view what, Body&& body) {
  try {
    return std::thread(std::forward<Body>(body));
  } catch (const std::system_error& e) {
    return StartError(what, e.code().value());
  }
}

}  // namespace srt
