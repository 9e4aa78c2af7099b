// SPDX-License-Identifier: Apache-2.0
// Test support for srt-toolbox: scratch roots, a Toolbox on them, and a line client for the
// protocol over pipes.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "support/temp_dir.h"
#include "toolbox/toolbox.h"

namespace srt::poller::toolbox::testing {

namespace fs = std::filesystem;

// The scratch directory of every test tree.
class TempDir : public srt::testing::TempDir {
 public:
  TempDir() : srt::testing::TempDir("srt-toolbox") {}
};

inline void WriteFile(const std::string& path, const std::string& content) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path, std::ios::binary) << content;
}

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A Toolbox on a fresh scratch root (file tools confined to root_), with a sibling directory
// outside_ holding a secret, for escape attempts.
class ToolboxTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = base_.path() + "/root";
    outside_ = base_.path() + "/outside";
    fs::create_directories(root_);
    fs::create_directories(outside_);
    WriteFile(outside_ + "/secret", "top secret\n");
    ToolboxOptions options;
    options.root = root_;
    auto tb = Toolbox::Create(options);
    ASSERT_TRUE(tb.has_value()) << tb.error().message();
    tb_ = std::move(*tb);
  }

  ToolResult Call(const std::string& tool, const nlohmann::json& input,
                  std::chrono::milliseconds timeout = std::chrono::milliseconds(0)) {
    NoInterrupt never;
    return tb_->Run(tool, input, timeout, never);
  }
  std::string In(const std::string& rel) const { return root_ + "/" + rel; }

  TempDir base_;
  std::string root_;
  std::string outside_;
  std::unique_ptr<Toolbox> tb_;
};

// Talks the line protocol: writes to `to`, reads lines from `from`.
class LineClient {
 public:
  LineClient(int to, int from) : to_(to), from_(from) {}

  void Send(const std::string& line) {
    std::string l = line + "\n";
    size_t done = 0;
    while (done < l.size()) {
      ssize_t n = write(to_, l.data() + done, l.size() - done);
      if (n <= 0) {
        ADD_FAILURE() << "write to the toolbox failed";
        return;
      }
      done += static_cast<size_t>(n);
    }
  }
  void SendJson(const nlohmann::json& j) { Send(j.dump()); }

  // The next line, or "" after `limit` (a test failure) or EOF.
  std::string ReadLine(std::chrono::milliseconds limit = std::chrono::seconds(20)) {
    auto deadline = std::chrono::steady_clock::now() + limit;
    for (;;) {
      size_t nl = buf_.find('\n');
      if (nl != std::string::npos) {
        std::string line = buf_.substr(0, nl);
        buf_.erase(0, nl + 1);
        return line;
      }
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) {
        ADD_FAILURE() << "no line from the toolbox within " << limit.count() << " ms";
        return "";
      }
      pollfd p{from_, POLLIN, 0};
      if (poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
      char chunk[65536];
      ssize_t n = read(from_, chunk, sizeof chunk);
      if (n <= 0) {
        eof_ = true;
        return "";
      }
      buf_.append(chunk, static_cast<size_t>(n));
    }
  }
  nlohmann::json ReadJson(std::chrono::milliseconds limit = std::chrono::seconds(20)) {
    std::string line = ReadLine(limit);
    if (line.empty()) return nullptr;
    return nlohmann::json::parse(line);
  }
  bool eof() const { return eof_; }

 private:
  int to_;
  int from_;
  std::string buf_;
  bool eof_ = false;
};

// Polls `done` until it holds or `limit` passes.
template <typename F>
bool Eventually(F done, std::chrono::milliseconds limit = std::chrono::seconds(5)) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    usleep(10'000);
  }
  return done();
}

inline std::string Text(const nlohmann::json& response) {
  return response.at("content").at(0).at("text").get<std::string>();
}

inline nlohmann::json Request(long long id, const std::string& tool, nlohmann::json input,
                              long long timeout_ms = 0) {
  nlohmann::json j = {{"id", id}, {"tool", tool}, {"input", std::move(input)}};
  if (timeout_ms > 0) j["timeout_ms"] = timeout_ms;
  return j;
}

}  // namespace srt::poller::toolbox::testing
