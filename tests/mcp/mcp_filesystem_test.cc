// SPDX-License-Identifier: Apache-2.0
// End to end: the real @modelcontextprotocol/server-filesystem under srt with the shipped
// policies/mcp-filesystem.json, driven over MCP's stdio transport, as root and as nobody. The
// server is told it may use two directories; the sandbox lets it write only one of them.
#include <dirent.h>
#include <gtest/gtest.h>
#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "mcp_session.h"
#include "srt_fixture.h"
#include "srt_runner.h"

namespace srt::mcp {
namespace {

using it::Identity;
using it::Runner;
using nlohmann::json;

// The protocol revision this client speaks; the pinned server supports it, so it must echo it.
constexpr const char* kProtocolVersion = "2025-06-18";

// examples/mcp.json names installed locations; the example test maps them to this tree.
constexpr const char* kExampleSrtPolicies = "/usr/local/share/srt/policies/";
constexpr const char* kExampleNodeModules = "/opt/mcp/node_modules/";

bool MustWork() {
  const char* must = std::getenv("SRT_MUST_WORK");
  return must && std::string(must) == "1";
}

std::string NodeModules() {
  const char* dir = std::getenv("SRT_MCP_NODE_MODULES");
  return dir && *dir ? dir : SRT_MCP_NODE_MODULES;
}

std::string ServerScript() {
  return NodeModules() + "/@modelcontextprotocol/server-filesystem/dist/index.js";
}

// The absolute path of `node` on the test's PATH, or "" if there is none.
std::string FindNode() {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path && *path ? path : "/usr/local/bin:/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    std::string candidate = (dir.empty() ? "." : dir) + "/node";
    if (dir.starts_with("/") && access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
  }
  return "";
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool ExistsOnHost(const std::string& path) {
  struct stat st;
  return lstat(path.c_str(), &st) == 0;
}

std::vector<std::string> Entries(const std::string& dir) {
  std::vector<std::string> out;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      std::string n = e->d_name;
      if (n != "." && n != "..") {
        out.push_back(n);
      }
    }
    closedir(d);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Why this host cannot run the test, or "" if it can.
std::string MissingPrerequisite(Identity who, const std::string& node) {
  if (!it::SandboxingWorks()) {
    return "bwrap sandboxes do not work on this host";
  }
  if (node.empty()) {
    return "node is not on PATH";
  }
  if (access(ServerScript().c_str(), R_OK) != 0) {
    return "the MCP server is not installed at '" + ServerScript() +
           "' (run: npm ci --prefix tests/mcp --ignore-scripts)";
  }
  if (who == Identity::kUnprivileged) {
    // nobody runs node on the installed package and reads the shipped policy.
    const passwd* pw = getpwnam("nobody");
    if (!pw) {
      return "there is no user 'nobody' on this host";
    }
    std::string cmd =
        "setpriv --reuid=" + std::to_string(pw->pw_uid) + " --regid=" + std::to_string(pw->pw_gid) +
        " --clear-groups -- test -x '" + node + "' -a -r '" + ServerScript() +
        "' -a -r '" SRT_POLICIES_DIR "/mcp-filesystem.json' -a -r '" SRT_EXAMPLES_DIR "/mcp.json'";
    if (std::system(cmd.c_str()) != 0) {
      return "user nobody cannot run '" + node + "' on '" + ServerScript() +
             "' (or read the policies and examples); put the tree where nobody can read it";
    }
  }
  return "";
}

class McpFilesystemTest : public ::testing::TestWithParam<Identity> {
 protected:
  void SetUp() override {
    node_ = FindNode();
    std::string why = MissingPrerequisite(GetParam(), node_);
    if (!why.empty()) {
      if (MustWork()) {
        FAIL() << why << " (SRT_MUST_WORK=1)";
      }
      GTEST_SKIP() << why << " (set SRT_MUST_WORK=1 to fail instead)";
    }
    run_ = std::make_unique<Runner>(GetParam());
    run_->MakeDir("project");
    project_ = run_->Path("project");
    home_ = run_->home();
    policy_ = Slurp(SRT_POLICIES_DIR "/mcp-filesystem.json");
    ASSERT_FALSE(policy_.empty()) << "cannot read " SRT_POLICIES_DIR "/mcp-filesystem.json";
  }

  void TearDown() override {
    session_.reset();  // kills whatever is still running
    if (run_) {
      // Nothing that ran under the scratch tree survives the session.
      EXPECT_TRUE(it::Eventually([&] { return it::ProcessesMatching(run_->root()).empty(); }))
          << "processes left behind";
    }
  }

  // srt -s <shipped policy> node <server> <project> <home>, started in the project: the server
  // may use both directories, the sandbox lets it write only the project.
  McpSession& StartServer() {
    std::vector<std::string> argv = {
        it::SrtBinary(), "-s", run_->SettingsFile(policy_), node_, ServerScript(), project_, home_};
    session_ = std::make_unique<McpSession>(GetParam(), argv, project_, home_);
    return *session_;
  }

  // initialize + notifications/initialized; returns the initialize result.
  json Initialize(McpSession& s) {
    json params = {{"protocolVersion", kProtocolVersion},
                   {"capabilities", json::object()},
                   {"clientInfo", {{"name", "srt-mcp-test"}, {"version", "1"}}}};
    // The first answer waits for node to start inside the sandbox.
    std::optional<json> r = s.Call("initialize", params, std::chrono::seconds(30));
    EXPECT_TRUE(r.has_value()) << s.failure() << "\nstderr:\n" << s.err();
    if (!r) {
      return json();
    }
    EXPECT_TRUE(r->contains("result")) << r->dump();
    s.Notify("notifications/initialized");
    return r->value("result", json());
  }

  // tools/call; returns the result (an MCP tool error is a result with isError: true).
  json CallTool(McpSession& s, const std::string& name, const json& arguments) {
    std::optional<json> r = s.Call("tools/call", {{"name", name}, {"arguments", arguments}});
    EXPECT_TRUE(r.has_value()) << s.failure() << "\nstderr:\n" << s.err();
    if (!r) {
      return json();
    }
    EXPECT_TRUE(r->contains("result")) << name << ": " << r->dump();
    return r->value("result", json());
  }

  static bool IsError(const json& result) { return result.value("isError", false); }

  // EOF on stdin ends the server, node, the sandbox and srt, with status 0 and a clean stdout.
  void Finish(McpSession& s) {
    EXPECT_EQ(s.CloseAndWait(), 0) << s.failure() << "\nstderr:\n" << s.err();
    EXPECT_TRUE(s.stray_lines().empty())
        << "non-JSON-RPC output on stdout: " << s.stray_lines().front();
    EXPECT_TRUE(s.unexpected().empty()) << s.unexpected().front().dump();
  }

  uid_t RunUid() const {
    const passwd* pw = getpwnam("nobody");
    return GetParam() == Identity::kRoot || !pw ? 0 : pw->pw_uid;
  }

  std::unique_ptr<Runner> run_;
  std::unique_ptr<McpSession> session_;
  std::string node_;
  std::string project_;
  std::string home_;
  std::string policy_;
};

TEST_P(McpFilesystemTest, InitializesAndListsItsTools) {
  McpSession& s = StartServer();
  json init = Initialize(s);
  EXPECT_EQ(init.value("protocolVersion", ""), kProtocolVersion) << init.dump();
  ASSERT_TRUE(init.contains("serverInfo")) << init.dump();
  EXPECT_EQ(init["serverInfo"].value("name", ""), "secure-filesystem-server") << init.dump();
  EXPECT_FALSE(init["serverInfo"].value("version", "").empty()) << init.dump();
  EXPECT_TRUE(init.contains("capabilities") && init["capabilities"].contains("tools"))
      << init.dump();

  std::optional<json> list = s.Call("tools/list", json::object());
  ASSERT_TRUE(list.has_value()) << s.failure() << "\nstderr:\n" << s.err();
  std::vector<std::string> names;
  for (const json& tool : list->at("result").at("tools")) {
    names.push_back(tool.at("name").get<std::string>());
  }
  auto has = [&](const char* n) { return std::find(names.begin(), names.end(), n) != names.end(); };
  EXPECT_TRUE(has("write_file")) << list->dump();
  EXPECT_TRUE(has("read_text_file") || has("read_file")) << list->dump();
  EXPECT_TRUE(has("list_allowed_directories")) << list->dump();

  std::optional<json> pong = s.Call("ping", json::object());
  ASSERT_TRUE(pong.has_value()) << s.failure();
  EXPECT_EQ(pong->value("result", json()), json::object());

  // The server itself believes it may use both directories; only the sandbox says otherwise.
  std::string dirs = ToolText(CallTool(s, "list_allowed_directories", json::object()));
  EXPECT_NE(dirs.find(project_), std::string::npos) << dirs;
  EXPECT_NE(dirs.find(home_), std::string::npos) << dirs;
  Finish(s);
}

TEST_P(McpFilesystemTest, WritesLandInTheServedDirectoryOnly) {
  McpSession& s = StartServer();
  Initialize(s);

  const std::string file = project_ + "/hello.txt";
  json ok = CallTool(s, "write_file", {{"path", file}, {"content", "hello from MCP\n"}});
  EXPECT_FALSE(IsError(ok)) << ok.dump() << "\nstderr:\n" << s.err();
  EXPECT_EQ(Slurp(file), "hello from MCP\n");
  struct stat st;
  ASSERT_EQ(stat(file.c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, RunUid()) << "the file belongs to the user who ran srt";

  // Overwriting goes through a temporary file and rename(2) in the same directory.
  json again = CallTool(s, "write_file", {{"path", file}, {"content", "second\n"}});
  EXPECT_FALSE(IsError(again)) << again.dump();
  EXPECT_EQ(Slurp(file), "second\n");
  json back = CallTool(s, "read_text_file", {{"path", file}});
  EXPECT_EQ(ToolText(back), "second\n") << back.dump();

  // The home directory is one of the server's directories but not writable in the sandbox.
  const std::string planted = home_ + "/planted.txt";
  json refused = CallTool(s, "write_file", {{"path", planted}, {"content", "x"}});
  EXPECT_TRUE(IsError(refused)) << refused.dump();
  EXPECT_NE(ToolText(refused).find("EROFS: read-only file system"), std::string::npos)
      << refused.dump();
  EXPECT_FALSE(ExistsOnHost(planted));
  json mkdir = CallTool(s, "create_directory", {{"path", home_ + "/newdir"}});
  EXPECT_TRUE(IsError(mkdir)) << mkdir.dump();
  EXPECT_FALSE(ExistsOnHost(home_ + "/newdir"));

  Finish(s);
  // srt's deny placeholders in the write root are gone; only the written file is left.
  EXPECT_EQ(Entries(project_), std::vector<std::string>{"hello.txt"});
  EXPECT_EQ(Entries(home_), std::vector<std::string>{});
}

TEST_P(McpFilesystemTest, CredentialStoresAreUnreadable) {
  run_->WriteFile("../home/.ssh/id_ed25519", "PRIVATE KEY MATERIAL");
  run_->WriteFile("../home/.netrc", "machine example.com password NETRC-SECRET\n");
  run_->WriteFile("../home/notes.txt", "visible\n");
  McpSession& s = StartServer();
  Initialize(s);

  // Control: the server can read its directories, so a failure below is the sandbox's doing.
  json notes = CallTool(s, "read_text_file", {{"path", home_ + "/notes.txt"}});
  EXPECT_FALSE(IsError(notes)) << notes.dump();
  EXPECT_EQ(ToolText(notes), "visible\n");

  // A denied file reads as EACCES; a denied directory is empty.
  json netrc = CallTool(s, "read_text_file", {{"path", home_ + "/.netrc"}});
  EXPECT_TRUE(IsError(netrc)) << netrc.dump();
  EXPECT_NE(ToolText(netrc).find("EACCES"), std::string::npos) << netrc.dump();
  EXPECT_EQ(netrc.dump().find("NETRC-SECRET"), std::string::npos);

  json key = CallTool(s, "read_text_file", {{"path", home_ + "/.ssh/id_ed25519"}});
  EXPECT_TRUE(IsError(key)) << key.dump();
  EXPECT_NE(ToolText(key).find("ENOENT"), std::string::npos) << key.dump();
  EXPECT_EQ(key.dump().find("PRIVATE KEY"), std::string::npos);
  json ssh = CallTool(s, "list_directory", {{"path", home_ + "/.ssh"}});
  EXPECT_EQ(ssh.dump().find("id_ed25519"), std::string::npos) << ssh.dump();

  Finish(s);
  EXPECT_EQ(Slurp(home_ + "/.ssh/id_ed25519"), "PRIVATE KEY MATERIAL");
}

TEST_P(McpFilesystemTest, AClientThatDiesTakesTheSandboxWithIt) {
  McpSession& s = StartServer();
  Initialize(s);
  ASSERT_FALSE(it::ProcessesMatching(project_).empty()) << "the server is not running";
  session_.reset();  // SIGKILL to srt's process group, as when the MCP client is killed
  EXPECT_TRUE(it::Eventually([&] { return it::ProcessesMatching(run_->root()).empty(); }))
      << "the sandboxed server outlived srt";
  // ...and srt's deny placeholders in the write root went with it.
  EXPECT_TRUE(it::Eventually([&] { return Entries(project_).empty(); }))
      << ::testing::PrintToString(Entries(project_));
}

// Claude Code and other clients stop a stdio server with SIGTERM (then SIGKILL): srt relays it,
// the server dies of it, srt reports 128+15 and the sandbox is gone.
TEST_P(McpFilesystemTest, SigtermFromTheClientStopsTheServer) {
  McpSession& s = StartServer();
  Initialize(s);
  s.Signal(SIGTERM);
  EXPECT_EQ(s.WaitForExit(), 128 + SIGTERM) << s.failure() << "\nstderr:\n" << s.err();
  EXPECT_TRUE(it::Eventually([&] { return it::ProcessesMatching(run_->root()).empty(); }));
  EXPECT_EQ(Entries(project_), std::vector<std::string>{});
}

// examples/mcp.json, with its installed locations mapped to this tree, serves the directory it is
// started in: writes there work, writes elsewhere do not.
TEST_P(McpFilesystemTest, TheExampleMcpJsonWorks) {
  json config = json::parse(Slurp(SRT_EXAMPLES_DIR "/mcp.json"), nullptr, false);
  ASSERT_FALSE(config.is_discarded()) << SRT_EXAMPLES_DIR "/mcp.json is not valid JSON";
  const json& server = config.at("mcpServers").at("filesystem");
  EXPECT_EQ(server.at("command"), "srt");
  std::vector<std::string> argv = {it::SrtBinary()};
  const std::vector<std::pair<std::string, std::string>> installed_to_tree = {
      {kExampleSrtPolicies, SRT_POLICIES_DIR "/"}, {kExampleNodeModules, NodeModules() + "/"}};
  for (const json& a : server.at("args")) {
    std::string arg = a.get<std::string>();
    for (const auto& [from, to] : installed_to_tree) {
      if (arg.starts_with(from)) {
        arg = to + arg.substr(from.size());
      }
    }
    argv.push_back(arg == "node" ? node_ : arg);
  }
  ASSERT_NE(std::find(argv.begin(), argv.end(), ServerScript()), argv.end())
      << "examples/mcp.json no longer runs " << kExampleNodeModules
      << "@modelcontextprotocol/server-filesystem/dist/index.js";
  session_ = std::make_unique<McpSession>(GetParam(), argv, project_, home_);
  McpSession& s = *session_;
  Initialize(s);
  json ok = CallTool(s, "write_file", {{"path", project_ + "/example.txt"}, {"content", "ok"}});
  EXPECT_FALSE(IsError(ok)) << ok.dump() << "\nstderr:\n" << s.err();
  EXPECT_EQ(Slurp(project_ + "/example.txt"), "ok");
  // Outside the served directory the server itself says no, before the sandbox is asked.
  json outside = CallTool(s, "write_file", {{"path", home_ + "/x.txt"}, {"content", "x"}});
  EXPECT_TRUE(IsError(outside)) << outside.dump();
  EXPECT_FALSE(ExistsOnHost(home_ + "/x.txt"));
  Finish(s);
  EXPECT_EQ(Entries(project_), std::vector<std::string>{"example.txt"});
}

INSTANTIATE_TEST_SUITE_P(AsRootAndUnprivileged, McpFilesystemTest,
                         ::testing::Values(Identity::kRoot, Identity::kUnprivileged),
                         it::IdentityName);

}  // namespace
}  // namespace srt::mcp
