// SPDX-License-Identifier: Apache-2.0
// The toolbox protocol, in process (Serve on pipes) and end to end (the srt-toolbox binary).
#include "toolbox/server.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "toolbox_test_support.h"

extern char** environ;

namespace srt::poller::toolbox::testing {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// Serve() on a thread, talking over two pipes.
class ServeTest : public ToolboxTest {
 protected:
  void StartServer(ServeOptions options = {}) {
    int in[2], out[2];
    ASSERT_EQ(pipe2(in, O_CLOEXEC), 0);
    ASSERT_EQ(pipe2(out, O_CLOEXEC), 0);
    to_server_ = in[1];
    from_server_ = out[0];
    server_ = std::thread([this, r = in[0], w = out[1], options] {
      served_ = Serve(r, w, *tb_, options).has_value();
      close(r);
      close(w);
    });
    client_ = std::make_unique<LineClient>(to_server_, from_server_);
    EXPECT_EQ(client_->ReadLine(), R"({"ready":true,"version":1})");
  }
  void CloseInput() {
    if (to_server_ >= 0) close(to_server_);
    to_server_ = -1;
  }
  void TearDown() override {
    CloseInput();
    if (server_.joinable()) server_.join();
    if (from_server_ >= 0) close(from_server_);
  }

  int to_server_ = -1;
  int from_server_ = -1;
  std::thread server_;
  bool served_ = false;
  std::unique_ptr<LineClient> client_;
};

TEST_F(ServeTest, AnswersCallsInOrder) {
  StartServer();
  client_->SendJson(Request(1, "write", {{"file_path", "a.txt"}, {"content", "hello"}}));
  client_->SendJson(Request(2, "read", {{"file_path", "a.txt"}}));
  client_->SendJson(
      nlohmann::json{{"id", "s"}, {"tool", "bash"}, {"input", {{"command", "cat a.txt"}}}});
  client_->SendJson(Request(4, "frobnicate", nlohmann::json::object()));
  nlohmann::json r = client_->ReadJson();
  EXPECT_EQ(r["id"], 1);
  EXPECT_EQ(r["is_error"], false);
  EXPECT_EQ(Text(r), "wrote 5 bytes to a.txt");
  r = client_->ReadJson();
  EXPECT_EQ(r["id"], 2);
  EXPECT_EQ(Text(r), "hello");
  r = client_->ReadJson();
  EXPECT_EQ(r["id"], "s");
  EXPECT_EQ(Text(r), "hello\n");
  r = client_->ReadJson();
  EXPECT_EQ(r["id"], 4);
  EXPECT_EQ(r["is_error"], true);
  EXPECT_EQ(Text(r), "unknown tool \"frobnicate\"");
}

TEST_F(ServeTest, BadLinesAreAnsweredAndIgnored) {
  StartServer();
  client_->Send(std::string("this is not json"));
  nlohmann::json r = client_->ReadJson();
  EXPECT_TRUE(r["id"].is_null());
  EXPECT_EQ(r["is_error"], true);
  EXPECT_EQ(Text(r), "invalid request: not a JSON object");
  client_->Send(std::string(R"({"id":9})"));
  r = client_->ReadJson();
  EXPECT_EQ(r["id"], 9);
  EXPECT_EQ(Text(r), "invalid request: tool must be a non-empty string");
  client_->Send(std::string());  // blank lines are skipped
  client_->SendJson(Request(10, "bash", {{"command", 5}}));
  r = client_->ReadJson();
  EXPECT_EQ(r["id"], 10);
  EXPECT_EQ(Text(r), "invalid bash input: command must be a string");
  client_->SendJson(Request(11, "read", "not an object"));
  EXPECT_EQ(Text(client_->ReadJson()), "invalid read input: input must be a JSON object");
}

TEST_F(ServeTest, OversizedLinesAreRefused) {
  ServeOptions options;
  options.max_line_bytes = 1000;
  StartServer(options);
  client_->SendJson(Request(1, "write", {{"file_path", "x"}, {"content", std::string(5000, 'a')}}));
  nlohmann::json r = client_->ReadJson();
  EXPECT_TRUE(r["id"].is_null());
  EXPECT_EQ(Text(r), "invalid request: line exceeds 1000 bytes, ignoring");
  EXPECT_FALSE(fs::exists(In("x")));
  client_->SendJson(Request(2, "write", {{"file_path", "x"}, {"content", "small"}}));
  r = client_->ReadJson();
  EXPECT_EQ(r["id"], 2);
  EXPECT_EQ(r["is_error"], false);
}

TEST_F(ServeTest, CancelStopsTheRunningCallAndTheShellRestarts) {
  StartServer();
  client_->SendJson(Request(1, "bash", {{"command", "export MARK=old"}}));
  EXPECT_EQ(client_->ReadJson()["id"], 1);
  client_->SendJson(Request(2, "bash", {{"command", "sleep 30"}}));
  client_->SendJson(Request(3, "read", {{"file_path", "nothing"}}));
  client_->SendJson(Request(4, "bash", {{"command", "echo [$MARK]"}}));
  std::this_thread::sleep_for(milliseconds(300));
  auto start = Clock::now();
  client_->SendJson(nlohmann::json{{"cancel", 3}});   // queued: answered at once, never run
  client_->SendJson(nlohmann::json{{"cancel", 2}});   // running: stopped
  client_->SendJson(nlohmann::json{{"cancel", 99}});  // unknown: ignored
  nlohmann::json r = client_->ReadJson();
  EXPECT_EQ(r["id"], 3);
  EXPECT_EQ(Text(r), "tool cancelled");
  EXPECT_EQ(r["is_error"], true);
  r = client_->ReadJson();
  EXPECT_EQ(r["id"], 2);
  EXPECT_EQ(Text(r), "tool cancelled");
  EXPECT_EQ(r["is_error"], true);
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(5));
  r = client_->ReadJson();
  EXPECT_EQ(r["id"], 4);
  EXPECT_EQ(Text(r), "[]\n\n");
}

TEST_F(ServeTest, TheCallDeadlineComesFromTimeoutMs) {
  StartServer();
  client_->SendJson(Request(1, "bash", {{"command", "sleep 30"}}, /*timeout_ms=*/400));
  nlohmann::json r = client_->ReadJson();
  EXPECT_EQ(Text(r), "tool \"bash\" timed out after 400ms");
  EXPECT_EQ(r["is_error"], true);
}

TEST_F(ServeTest, EofStopsTheRunningCallAndKillsTheShell) {
  StartServer();
  client_->SendJson(Request(1, "bash", {{"command", "echo $$"}}));
  pid_t shell = std::stoi(Text(client_->ReadJson()));
  client_->SendJson(Request(2, "bash", {{"command", "sleep 30"}}));
  std::this_thread::sleep_for(milliseconds(300));
  auto start = Clock::now();
  CloseInput();
  server_.join();
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(5));
  EXPECT_TRUE(served_);
  EXPECT_NE(kill(shell, 0), 0);
  EXPECT_EQ(client_->ReadLine(milliseconds(2000)), "");  // nothing more, then EOF
  EXPECT_TRUE(client_->eof());
}

TEST_F(ServeTest, TheQueueIsLimited) {
  ServeOptions options;
  options.max_queued = 2;
  StartServer(options);
  client_->SendJson(Request(1, "bash", {{"command", "sleep 1"}}));
  std::this_thread::sleep_for(milliseconds(200));
  for (int id = 2; id <= 4; ++id) client_->SendJson(Request(id, "read", {{"file_path", "x"}}));
  nlohmann::json r = client_->ReadJson();
  EXPECT_EQ(r["id"], 4);
  EXPECT_EQ(Text(r), "invalid request: more than 2 calls queued");
  EXPECT_EQ(client_->ReadJson()["id"], 1);
  EXPECT_EQ(client_->ReadJson()["id"], 2);
  EXPECT_EQ(client_->ReadJson()["id"], 3);
}

// --- the binary ----------------------------------------------------------------------------

class BinaryTest : public ::testing::Test {
 protected:
  void Start(const std::vector<std::string>& args, const std::vector<std::string>& extra_env) {
    int in[2], out[2];
    ASSERT_EQ(pipe2(in, O_CLOEXEC), 0);
    ASSERT_EQ(pipe2(out, O_CLOEXEC), 0);
    std::vector<std::string> argv_s = {SRT_TOOLBOX_BINARY};
    argv_s.insert(argv_s.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : argv_s) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::vector<std::string> env_s;
    for (char** e = environ; *e; ++e) env_s.emplace_back(*e);
    env_s.insert(env_s.end(), extra_env.begin(), extra_env.end());
    std::vector<char*> envp;
    for (auto& e : env_s) envp.push_back(e.data());
    envp.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, in[0], 0);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    ASSERT_EQ(posix_spawn(&pid_, argv[0], &fa, nullptr, argv.data(), envp.data()), 0);
    posix_spawn_file_actions_destroy(&fa);
    close(in[0]);
    close(out[1]);
    to_ = in[1];
    from_ = out[0];
    client_ = std::make_unique<LineClient>(to_, from_);
  }
  // Closes stdin and returns the exit status.
  int Finish() {
    if (to_ >= 0) close(to_);
    to_ = -1;
    int st = 0;
    auto deadline = Clock::now() + std::chrono::seconds(10);
    while (waitpid(pid_, &st, WNOHANG) == 0) {
      if (Clock::now() > deadline) {
        kill(pid_, SIGKILL);
        waitpid(pid_, &st, 0);
        ADD_FAILURE() << "srt-toolbox did not exit after EOF";
        break;
      }
      usleep(10'000);
    }
    pid_ = -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  }
  void TearDown() override {
    if (pid_ > 0) Finish();
    if (from_ >= 0) close(from_);
  }

  TempDir dir_;
  pid_t pid_ = -1;
  int to_ = -1;
  int from_ = -1;
  std::unique_ptr<LineClient> client_;
};

TEST_F(BinaryTest, EndToEnd) {
  Start({"--root", dir_.path()}, {"ANTHROPIC_API_KEY=sk-secret"});
  EXPECT_EQ(client_->ReadLine(), R"({"ready":true,"version":1})");
  client_->SendJson(
      Request(1, "write", {{"file_path", "src/main.go"}, {"content", "package main\n"}}));
  EXPECT_EQ(Text(client_->ReadJson()), "wrote 13 bytes to src/main.go");
  client_->SendJson(Request(
      2, "edit", {{"file_path", "src/main.go"}, {"old_string", "main"}, {"new_string", "app"}}));
  EXPECT_EQ(Text(client_->ReadJson()), "edited src/main.go (1 replacement(s))");
  client_->SendJson(Request(3, "read", {{"file_path", dir_ / "src/main.go"}}));
  EXPECT_EQ(Text(client_->ReadJson()), "package app\n");
  client_->SendJson(Request(4, "glob", {{"pattern", "**/*.go"}}));
  EXPECT_EQ(Text(client_->ReadJson()), dir_ / "src/main.go");
  client_->SendJson(Request(5, "grep", {{"pattern", "package"}}));
  std::string grep = Text(client_->ReadJson());
  EXPECT_EQ(grep.rfind(dir_ / "src/main.go:1:package app", 0), 0u) << grep;
  client_->SendJson(Request(6, "bash", {{"command", "cd src && echo \"[$ANTHROPIC_API_KEY]\""}}));
  EXPECT_EQ(Text(client_->ReadJson()), "[]\n\n");
  client_->SendJson(
      Request(7, "bash", {{"command", "pwd; exit_code_test() { return 4; }; exit_code_test"}}));
  nlohmann::json r = client_->ReadJson();
  EXPECT_EQ(Text(r), dir_ / "src\n\n\nexit code: 4");
  EXPECT_EQ(r["is_error"], true);
  client_->SendJson(Request(8, "bash", {{"command", "sleep 30"}}));
  std::this_thread::sleep_for(milliseconds(200));
  client_->SendJson(nlohmann::json{{"cancel", 8}});
  r = client_->ReadJson();
  EXPECT_EQ(r["id"], 8);
  EXPECT_EQ(Text(r), "tool cancelled");
  client_->SendJson(Request(9, "read", {{"file_path", "/etc/passwd"}}));
  EXPECT_EQ(Text(client_->ReadJson()), "read: path \"/etc/passwd\" escapes workdir");
  EXPECT_EQ(Finish(), 0);
}

TEST_F(BinaryTest, EofWhileBashRunsExitsZero) {
  Start({"--root", dir_.path()}, {});
  EXPECT_EQ(client_->ReadLine(), R"({"ready":true,"version":1})");
  client_->SendJson(Request(1, "bash", {{"command", "sleep 60"}}));
  std::this_thread::sleep_for(milliseconds(200));
  auto start = Clock::now();
  EXPECT_EQ(Finish(), 0);
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(5));
}

TEST_F(BinaryTest, ABadRootFails) {
  Start({"--root", dir_ / "missing"}, {});
  EXPECT_EQ(client_->ReadLine(milliseconds(5000)), "");
  EXPECT_EQ(Finish(), 1);
}

}  // namespace
}  // namespace srt::poller::toolbox::testing
