// SPDX-License-Identifier: Apache-2.0
// Network access through the real srt: every client path (HTTP proxy, CONNECT, SOCKS5,
// transparent capture with the DNS stub, raw sockets, TLS SNI, git over ssh), every refusal a
// sandboxed client can see, the decision log (--log-file, --log-fd, -d), live updates through
// --control-fd, and refusals by the proxy when nothing is allowed.
//
// Names resolve through a dnsmasq started for this binary (origin.test, denied.test and
// blocked.test are all 127.0.0.1), the origin is an HTTP server in this process on
// 127.0.0.1:<ephemeral>, and the settings carve that address out of the loopback refusal.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "network_support.h"
#include "srt_fixture.h"
#include "support/dnsmasq.h"

namespace srt::it {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

constexpr char kCurl[] = "curl -sS --max-time 5 ";
constexpr char kBlockedReason[] = "blocked by the network test";
constexpr char kNotAllowed[] = "host is not on the allow list";
constexpr char kBlockedBody[] = "Connection blocked by network allowlist\n";
// Port that no allow entry or carve-out names: nothing is ever dialed on it.
constexpr int kUnlistedPort = 9;

// Helpers the sandboxed commands run (python3 is on every host that has these tools).
constexpr char kConnectPy[] = R"(# CONNECT <target> with srt's credentials; prints the status line.
import base64, os, socket, sys, urllib.parse
u = urllib.parse.urlsplit(os.environ["HTTP_PROXY"])
cred = urllib.parse.unquote(u.username) + ":" + urllib.parse.unquote(u.password)
s = socket.create_connection((u.hostname, u.port), timeout=5)
s.sendall(("CONNECT " + sys.argv[1] + " HTTP/1.1\r\nProxy-Authorization: Basic " +
           base64.b64encode(cred.encode()).decode() + "\r\n\r\n").encode())
print(s.recv(4096).decode(errors="replace").split("\r\n")[0])
)";
constexpr char kRawPy[] = R"(# A plain TCP client: connect, send GET, print what came back.
import socket, sys
host, port = sys.argv[1], int(sys.argv[2])
try:
    s = socket.create_connection((host, port), timeout=5)
    s.sendall(b"GET /raw HTTP/1.0\r\nHost: " + host.encode() + b"\r\n\r\n")
    data = b""
    while True:
        chunk = s.recv(4096)
        if not chunk:
            break
        data += chunk
    print("data" if data else "closed")
    print(data.decode(errors="replace").split("\r\n\r\n", 1)[-1], end="")
except OSError as e:
    print("error", type(e).__name__)
)";
constexpr char kUdpPy[] =
    R"(# One DNS query to 8.8.8.8:53 over UDP; says whether anything answered within 0.5 s.
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(0.5)
query = bytes.fromhex("5e1101000001000000000000076578616d706c6503636f6d0000010001")
try:
    s.sendto(query, ("8.8.8.8", 53))
    s.recvfrom(512)
    print("answer")
except OSError as e:
    print("no answer", type(e).__name__)
)";
constexpr char kUrllibPy[] = R"(# urllib with every proxy variable removed: DNS stub + capture.
import os, sys, urllib.request
for k in list(os.environ):
    if k.lower().endswith("_proxy"):
        del os.environ[k]
print("proxies:", urllib.request.getproxies())
print(urllib.request.urlopen(sys.argv[1], timeout=5).read().decode(), end="")
)";

constexpr char kMitmProxyPy[] = R"(# A stand-in for a MITM proxy on a unix socket: it answers
# every request itself, saying what it was asked, and logs each request line to argv[2].
import os, socket, sys, threading
path, log = sys.argv[1], sys.argv[2]
srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
srv.bind(path)
os.chmod(path, 0o666)
srv.listen(16)
lock = threading.Lock()
def head(f):
    first = f.readline().decode(errors="replace").rstrip("\r\n")
    while f.readline() not in (b"\r\n", b"\n", b""):
        pass
    return first
def serve(c):
    f = c.makefile("rb")
    first = head(f)
    with lock, open(log, "a") as out:
        out.write(first + "\n")
    if first.startswith("CONNECT "):
        c.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
        body = "mitm tunnel " + first.split()[1] + ": " + head(f) + "\n"
    else:
        body = "mitm: " + first + "\n"
    c.sendall(("HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n" % len(body)
               + body).encode())
    c.close()
while True:
    c, _ = srv.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
)";

constexpr char kFetchJava[] = R"(// GET with Java's two built-in HTTP clients; one line each.
import java.net.HttpURLConnection;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

public class Fetch {
  public static void main(String[] args) {
    String url = args[0];
    try {
      HttpURLConnection c = (HttpURLConnection) URI.create(url + "/urlconnection").toURL().openConnection();
      c.setConnectTimeout(5000);
      c.setReadTimeout(5000);
      int code = c.getResponseCode();
      System.out.print("urlconnection " + code + " " + new String(c.getInputStream().readAllBytes()));
    } catch (Exception e) {
      System.out.println("urlconnection " + e.getClass().getSimpleName());
    }
    try {
      HttpClient h = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
      HttpResponse<String> r = h.send(
          HttpRequest.newBuilder(URI.create(url + "/httpclient")).timeout(Duration.ofSeconds(5)).build(),
          HttpResponse.BodyHandlers.ofString());
      System.out.print("httpclient " + r.statusCode() + " " + r.body());
    } catch (Exception e) {
      System.out.println("httpclient " + e.getClass().getSimpleName());
    }
  }
}
)";

bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// Resources shared by every test in this binary, started once on the main thread (dnsmasq's
// parent-death signal follows the thread that started it).
class NetworkEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    auto dns = srt::testing::Dnsmasq::Start(
        {.args = {"--address=/origin.test/127.0.0.1", "--address=/denied.test/127.0.0.1",
                  "--address=/blocked.test/127.0.0.1", "--address=/other.test/127.0.0.1"}});
    if (!dns) {
      problem_ = "dnsmasq: " + dns.error().message();
      missing_tool_ = dns.error().code() == Errc::kNotFound;
      return;
    }
    dns_ = std::move(*dns);
    for (const char* tool : {"curl", "python3", "getent"}) {
      if (FindTool({std::string("/usr/bin/") + tool, std::string("/bin/") + tool}).empty()) {
        problem_ = std::string(tool) + " is not installed in /usr/bin";
        missing_tool_ = true;
        return;
      }
    }
    origin_ = std::make_unique<OriginServer>();
    dead_port_ = FreeTcpPort();
  }
  void TearDown() override {
    pid_t dns_pid = dns_ ? dns_->pid() : 0;
    dns_.reset();
    origin_.reset();
    if (dns_pid > 0) {
      EXPECT_NE(::kill(dns_pid, 0), 0) << "dnsmasq " << dns_pid << " is still there";
    }
  }

  // "" when everything started; else why not.
  const std::string& problem() const { return problem_; }
  bool missing_tool() const { return missing_tool_; }
  std::string dns() const { return dns_->address(); }
  OriginServer& origin() { return *origin_; }
  uint16_t port() const { return origin_->port(); }
  // Allowed by a carve-out, but nothing listens there.
  uint16_t dead_port() const { return dead_port_; }

 private:
  std::string problem_;
  bool missing_tool_ = false;
  std::unique_ptr<srt::testing::Dnsmasq> dns_;
  std::unique_ptr<OriginServer> origin_;
  uint16_t dead_port_ = 0;
};

NetworkEnvironment* const g_net =
    static_cast<NetworkEnvironment*>(::testing::AddGlobalTestEnvironment(new NetworkEnvironment));

std::string Carve(int port) { return "127.0.0.1:" + std::to_string(port); }
// http://origin.test:<origin port><path>
std::string Origin(const std::string& path) {
  return "http://origin.test:" + std::to_string(g_net->port()) + path;
}

// A settings document with these allow entries and the shared deny list and resolver.
json NetworkSettings(const std::vector<std::string>& allowed) {
  json s;
  s["network"]["allowedDomains"] = allowed;
  s["network"]["deniedDomains"] = {"blocked.test"};
  s["network"]["deniedDomainReasons"] = {{"blocked.test", kBlockedReason}};
  s["network"]["dnsServers"] = {g_net->dns()};
  s["filesystem"]["allowWrite"] = {"."};
  return s;
}
json DefaultSettings() {
  return NetworkSettings({"origin.test", Carve(g_net->port()), Carve(g_net->dead_port())});
}

// Skips (or fails under SRT_MUST_WORK=1) when the shared resources could not start.
#define SRT_REQUIRE_NETWORK_ENVIRONMENT()                                                 \
  do {                                                                                    \
    if (!g_net->problem().empty()) {                                                      \
      if (!g_net->missing_tool() || srt::testing::MustWork()) FAIL() << g_net->problem(); \
      GTEST_SKIP() << g_net->problem() << " (set SRT_MUST_WORK=1 to fail instead)";       \
    }                                                                                     \
  } while (0)

// Runs srt with a decision log and reads it back; shared by the fixtures below.
class LoggedRun {
 public:
  explicit LoggedRun(Runner& runner) : runner_(runner) {}

  // srt -s SETTINGS --log-file LOG [extra] -c SCRIPT, from the scratch root.
  RunResult Sh(const std::string& script, const json& settings = DefaultSettings(),
               const std::vector<std::string>& extra = {}) {
    std::string log = runner_.Path("decisions-" + std::to_string(counter_++) + ".jsonl");
    std::vector<std::string> args = {"--log-file", log};
    args.insert(args.end(), extra.begin(), extra.end());
    args.insert(args.end(), {"-c", script});
    RunResult r = runner_.Srt(settings.dump(), args);
    log_text_ = runner_.ReadFile(log.substr(runner_.root().size() + 1));
    records_ = Parse(log_text_);
    return r;
  }

  // The JSON lines of `text`; a line that is not a JSON object fails the test.
  static std::vector<json> Parse(const std::string& text) {
    std::vector<json> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
      json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
      EXPECT_TRUE(j.is_object()) << "not a JSON object: " << line;
      if (j.is_object()) out.push_back(std::move(j));
    }
    return out;
  }

  // The records whose fields equal every field of `want`.
  std::vector<json> Matching(const json& want) const {
    std::vector<json> out;
    for (const json& r : records_) {
      bool all = true;
      for (const auto& [key, value] : want.items()) {
        all = all && r.contains(key) && r[key] == value;
      }
      if (all) out.push_back(r);
    }
    return out;
  }
  // The one record that matches `want` (an empty object, and a test failure, if not exactly one).
  json One(const json& want) const {
    std::vector<json> found = Matching(want);
    EXPECT_EQ(found.size(), 1u) << "records matching " << want.dump() << " in:\n" << log_text_;
    return found.size() == 1 ? found[0] : json::object();
  }

  const std::vector<json>& records() const { return records_; }
  const std::string& log_text() const { return log_text_; }

 private:
  Runner& runner_;
  int counter_ = 0;
  std::string log_text_;
  std::vector<json> records_;
};

// Every process of one scratch tree (srt's command line names its settings file there) is gone.
void ExpectNothingLeftBehind(const Runner& runner) {
  const std::string base = runner.root().substr(0, runner.root().rfind('/'));
  EXPECT_TRUE(Eventually([&] { return ProcessesMatching(base).empty(); }))
      << ProcessesMatching(base).size() << " processes of " << base << " are still running";
}

class NetworkTest : public SrtTest {
 protected:
  void SetUp() override {
    SrtTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    SRT_REQUIRE_NETWORK_ENVIRONMENT();
    run().WriteFile("connect.py", kConnectPy);
    run().WriteFile("raw.py", kRawPy);
    run().WriteFile("udp.py", kUdpPy);
    run().WriteFile("fetch_urllib.py", kUrllibPy);
    log_ = std::make_unique<LoggedRun>(run());
  }
  void TearDown() override {
    if (log_) ExpectNothingLeftBehind(run());
  }

  RunResult Sh(const std::string& script, const json& settings = DefaultSettings(),
               const std::vector<std::string>& extra = {}) {
    return log_->Sh(script, settings, extra);
  }
  json One(const json& want) const { return log_->One(want); }
  int port() const { return g_net->port(); }

  // An allowed connection to the origin that carried `target`, with its log record checked.
  void ExpectReachedOrigin(const RunResult& r, const std::string& protocol,
                           const std::string& target) {
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, "origin: GET " + target + "\n") << r.err;
    json rec = One({{"protocol", protocol}, {"host", "origin.test"}, {"decision", "allow"}});
    if (rec.empty()) return;
    EXPECT_EQ(rec["port"], port());
    EXPECT_EQ(rec["address"], Carve(port()));
    EXPECT_EQ(rec["via"], "direct");
    EXPECT_NE(rec["entry"], "");
    // The client ended the exchange; whether srt's proxy saw its EOF go through before the
    // sandbox's end stopped it is a race on a loaded machine ("shutdown" then; the proxy's own
    // tests pin down which is which). Anything else is a failure.
    EXPECT_TRUE(rec["end"] == "closed" || rec["end"] == "shutdown") << rec.dump();
    EXPECT_EQ(rec["error"], "");
    EXPECT_GT(rec["bytes_up"].get<int64_t>(), 0);
    EXPECT_GT(rec["bytes_down"].get<int64_t>(), 0);
  }

  std::unique_ptr<LoggedRun> log_;
};

// --- Credential masking and plain-HTTP injection (credentials.allowPlaintextInject) ----------

// A GitHub-style token (40 bytes), random per run so no file on the host holds it by chance.
std::string RandomToken() {
  static constexpr char kAlnum[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  std::random_device rd;
  std::string t = "ghp_";
  while (t.size() < 40) t += kAlnum[rd() % (sizeof kAlnum - 1)];
  return t;
}

TEST_P(NetworkTest, MaskedTokenIsInjectedOnlyForItsHostAndNeverSeenInside) {
  // The token is new in this run, so only a file changed since now can hold it: the search
  // below looks at those alone (a status change time, which no one can set back; 2 s early,
  // for its 1 s granularity). Reading all of the host's /tmp took up to 30 s of the test's
  // budget when srt-poller's tests, running beside it, held 10 GiB workspace images there.
  const std::string since = "@" + std::to_string(time(nullptr) - 2);
  const std::string real_token = RandomToken();
  // A pattern for a token that does not match itself in a command line (grep's, sh's).
  const auto pattern_for = [](const std::string& token) {
    return token.substr(0, 6) + "[" + token[6] + "]" + token.substr(7);
  };
  const std::string pattern = pattern_for(real_token);
  // A file the search must find, so that a search that finds nothing (a find that fails, a
  // file it skips) fails the test rather than passes it.
  const std::string control = RandomToken();
  run().WriteFile("control.txt", control);
  json s = NetworkSettings({"origin.test", "other.test", Carve(port())});
  s["credentials"] = {
      {"allowPlaintextInject", true},
      {"envVars",
       {{{"name", "GITHUB_TOKEN"}, {"mode", "mask"}, {"injectHosts", {"origin.test"}}},
        {{"name", "DENIED_SECRET"}, {"mode", "deny"}}}}};
  const std::string p = std::to_string(port());
  const std::string script =
      "printf '%s\\n' \"$GITHUB_TOKEN\"; printf '%s' \"$GITHUB_TOKEN\" | wc -c; "
      "echo denied=${DENIED_SECRET-unset}; "
      "cat /proc/*/environ /proc/*/cmdline 2>/dev/null | grep -c '" +
      pattern +
      "'; "
      "find /tmp \"$TMPDIR\" /etc \"$HOME\" . -type f -newerct " +
      since + " -size -64M -exec grep -ls -e '" + pattern + "' -e '" + pattern_for(control) +
      "' {} + 2>/dev/null | sort | tr '\\n' ' '; echo; "
      "curl -sS --max-time 5 -H \"Authorization: token $GITHUB_TOKEN\" --data "
      "\"t=$GITHUB_TOKEN\" http://origin.test:" +
      p +
      "/echo-injected; echo; "
      "curl -sS --max-time 5 -H \"Authorization: token $GITHUB_TOKEN\" "
      "http://other.test:" +
      p + "/echo-other";
  const std::string log = run().Path("cred.jsonl");
  RunResult r =
      run().SrtRaw({"-s", run().SettingsFile(s.dump()), "--log-file", log, "-c", script}, "",
                   std::chrono::seconds(30), {"GITHUB_TOKEN=" + real_token, "DENIED_SECRET=x"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // Inside: a sentinel of the same length, never the real value (environ, cmdline, responses).
  std::istringstream lines(r.out);
  std::string sentinel, length, denied, found, files;
  std::getline(lines, sentinel);
  std::getline(lines, length);
  std::getline(lines, denied);
  std::getline(lines, found);
  std::getline(lines, files);
  EXPECT_TRUE(sentinel.starts_with("fake_value_")) << r.out;
  EXPECT_EQ(sentinel.size(), real_token.size());
  EXPECT_EQ(length, "40");
  EXPECT_EQ(denied, "denied=unset");
  EXPECT_EQ(found, "0");  // no process's environment or command line
  // No file changed during the run, where files are usually written, holds it (disk images,
  // 64 MiB and up, left out); the control file does.
  EXPECT_EQ(files, "./control.txt ");
  EXPECT_FALSE(Contains(r.out, real_token)) << r.out;  // the echo came back masked
  EXPECT_TRUE(Contains(r.out, "Authorization: token " + sentinel)) << r.out;
  // At the origin: the real value in the header and the body for origin.test, the sentinel
  // for other.test.
  std::vector<std::string> got = g_net->origin().requests();
  ASSERT_GE(got.size(), 2u);
  const std::string& injected = got[got.size() - 2];
  const std::string& other = got.back();
  EXPECT_TRUE(Contains(injected, "Authorization: token " + real_token)) << injected;
  EXPECT_TRUE(Contains(injected, "\r\n\r\nt=" + real_token)) << injected;
  EXPECT_TRUE(Contains(other, "Authorization: token " + sentinel)) << other;
  EXPECT_FALSE(Contains(other, real_token)) << other;
  // The decision log names the credential and counts, never the value.
  const std::string log_text = run().ReadFile("cred.jsonl");
  EXPECT_FALSE(Contains(log_text, real_token)) << log_text;
  EXPECT_FALSE(Contains(log_text, sentinel)) << log_text;
  EXPECT_TRUE(Contains(
      log_text, R"("credentials":[{"name":"env GITHUB_TOKEN","injected":2,"kept":0,"masked":2}])"))
      << log_text;
  EXPECT_TRUE(Contains(
      log_text, R"("credentials":[{"name":"env GITHUB_TOKEN","injected":0,"kept":1,"masked":0}])"))
      << log_text;
}

// --- Allowed traffic, one client path per test ---------------------------------------------

TEST_P(NetworkTest, CurlThroughHttpProxyReachesAnAllowedName) {
  RunResult r = Sh(kCurl + Origin("/via-http-proxy"));
  ExpectReachedOrigin(r, "http", "/via-http-proxy");
  // The proxy forwards origin-form with the Host header and keeps its credentials to itself.
  std::vector<std::string> heads = g_net->origin().requests();
  ASSERT_FALSE(heads.empty());
  const std::string& head = heads.back();
  EXPECT_TRUE(Contains(head, "GET /via-http-proxy HTTP/1.1\r\n")) << head;
  EXPECT_TRUE(Contains(head, "\r\nHost: origin.test:" + std::to_string(port()))) << head;
  EXPECT_FALSE(Contains(head, "Proxy-Authorization")) << head;
}

TEST_P(NetworkTest, CurlWithoutProxyIsCapturedTransparently) {
  ExpectReachedOrigin(Sh(kCurl + std::string("--noproxy '*' ") + Origin("/captured")), "capture",
                      "/captured");
}

TEST_P(NetworkTest, CurlThroughSocks5hReachesAnAllowedName) {
  ExpectReachedOrigin(Sh(kCurl + std::string("-x \"$FTP_PROXY\" ") + Origin("/via-socks5")),
                      "socks5", "/via-socks5");
}

TEST_P(NetworkTest, CurlConnectTunnelReachesAnAllowedName) {
  ExpectReachedOrigin(Sh(kCurl + std::string("-p ") + Origin("/via-connect")), "connect",
                      "/via-connect");
}

TEST_P(NetworkTest, PythonUrllibWithoutProxyVariablesUsesTheDnsStubAndCapture) {
  RunResult r = Sh("python3 fetch_urllib.py " + Origin("/via-urllib"));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "proxies: {}\norigin: GET /via-urllib\n") << r.err;
  One({{"protocol", "capture"}, {"host", "origin.test"}, {"decision", "allow"}});
}

// Java's HttpURLConnection and java.net.http.HttpClient, unchanged, in the sandbox: the allowed
// name is fetched (and each request logged), a denied one and one not on the list are refused.
// They used to get JAVA_TOOL_OPTIONS proxy properties, and then the proxy's 407, which neither
// client answers without an Authenticator.
TEST_P(NetworkTest, JavasBuiltInClientsReachAnAllowedNameAndNothingElse) {
  if (access("/usr/bin/java", X_OK) != 0) GTEST_SKIP() << "java is not installed in /usr/bin";
  run().WriteFile("Fetch.java", kFetchJava);
  const std::string java = "java -XX:-UsePerfData -Xshare:auto Fetch.java ";
  const std::string suffix = ":" + std::to_string(port());
  RunResult r =
      run().Srt(DefaultSettings().dump(),
                {"-c", java + "http://origin.test" + suffix + "; " + java + "http://blocked.test" +
                           suffix + "; " + java + "http://other.test" + suffix},
                "", std::chrono::seconds(120));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "urlconnection 200 origin: GET /urlconnection\n"
            "httpclient 200 origin: GET /httpclient\n"
            "urlconnection UnknownHostException\nhttpclient ConnectException\n"
            "urlconnection UnknownHostException\nhttpclient ConnectException\n")
      << r.err;
}

// javaAgentJarPath: every JVM loads the agent (its path has a space, so it is quoted), before
// an inherited JAVA_TOOL_OPTIONS; one that is a denied credential is dropped.
TEST_P(NetworkTest, JavaAgentJarPathIsLoadedByEveryJvm) {
  if (access("/usr/bin/java", X_OK) != 0 || access("/usr/bin/javac", X_OK) != 0 ||
      access("/usr/bin/jar", X_OK) != 0) {
    GTEST_SKIP() << "java, javac or jar is not installed in /usr/bin";
  }
  run().WriteFile("agent/Agent.java",
                  "public class Agent { public static void premain(String a) { "
                  "System.out.println(\"agent \" + System.getProperty(\"srt.test\")); } }\n");
  run().WriteFile("agent/manifest.txt", "Premain-Class: Agent\n");
  run().MakeDir("my agents");
  RunResult built = run().Host({"sh", "-c",
                                "cd agent && javac -d . Agent.java && jar cfm '../my agents/a.jar' "
                                "manifest.txt Agent.class"});
  ASSERT_EQ(built.exit_code, 0) << built.err;
  json settings = DefaultSettings();
  settings["javaAgentJarPath"] = run().Path("my agents/a.jar");
  const std::string file = run().SettingsFile(settings.dump());
  const std::string show = "printenv JAVA_TOOL_OPTIONS; java -XX:-UsePerfData -version 2>/dev/null";
  RunResult r = run().SrtRaw({"-s", file, "-c", show}, "", std::chrono::seconds(120),
                             {"JAVA_TOOL_OPTIONS=-Dsrt.test=inherited"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "\"-javaagent:" + run().Path("my agents/a.jar") +
                       "\" -Dsrt.test=inherited\nagent inherited\n")
      << r.err;

  settings["credentials"]["envVars"] = {{{"name", "JAVA_TOOL_OPTIONS"}, {"mode", "deny"}}};
  RunResult denied =
      run().SrtRaw({"-s", run().SettingsFile(settings.dump()), "-c", show}, "",
                   std::chrono::seconds(120), {"JAVA_TOOL_OPTIONS=-Dsrt.test=inherited"});
  EXPECT_EQ(denied.exit_code, 0) << denied.err;
  EXPECT_EQ(denied.out, "\"-javaagent:" + run().Path("my agents/a.jar") + "\"\nagent null\n")
      << denied.err;

  // A jar that is not there is skipped, with a warning.
  settings["javaAgentJarPath"] = run().Path("missing.jar");
  RunResult missing =
      run().Srt(settings.dump(), {"-c", "printenv JAVA_TOOL_OPTIONS || echo unset"});
  EXPECT_EQ(missing.out, "unset\n") << missing.err;
  EXPECT_NE(missing.err.find("javaAgentJarPath: '" + run().Path("missing.jar") + "' is not a file"),
            std::string::npos)
      << missing.err;
}

// network.mitmProxy: allowed hosts it names go to the proxy on its unix socket, by every path
// (plain HTTP in absolute form, CONNECT, SOCKS5, capture as a CONNECT); a denied host it names
// is still refused, and never reaches it.
TEST_P(NetworkTest, MitmProxyTakesTheHostsItNamesAfterTheAllowAndDenyLists) {
  char dir_template[] = "/tmp/srt-mitm-XXXXXX";
  ASSERT_NE(mkdtemp(dir_template), nullptr);
  const std::string dir = dir_template;
  chmod(dir.c_str(), 0755);
  const std::string socket_path = dir + "/proxy.sock";
  const std::string seen = dir + "/seen.txt";
  run().WriteFile("mitm_proxy.py", kMitmProxyPy);
  {
    Daemon mitm({"/usr/bin/python3", run().Path("mitm_proxy.py"), socket_path, seen});
    ASSERT_TRUE(Eventually([&] { return access(socket_path.c_str(), F_OK) == 0; },
                           std::chrono::seconds(10)))
        << mitm.log();
    json s = DefaultSettings();
    s["network"]["mitmProxy"] = {{"socketPath", socket_path},
                                 {"domains", {"origin.test", "blocked.test"}}};
    const std::string p = std::to_string(port());
    RunResult r = Sh(kCurl + Origin("/mitm-plain") + "; " + kCurl + "-p " + Origin("/mitm-tunnel") +
                         "; " + kCurl + "-x \"$FTP_PROXY\" " + Origin("/mitm-socks") + "; " +
                         kCurl + "--noproxy '*' " + Origin("/mitm-captured") + "; " + kCurl +
                         "-o /dev/null -w '%{http_code}\\n' http://blocked.test:" + p + "/denied",
                     s);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, "mitm: GET http://origin.test:" + p + "/mitm-plain HTTP/1.1\n" +
                         "mitm tunnel origin.test:" + p + ": GET /mitm-tunnel HTTP/1.1\n" +
                         "mitm tunnel origin.test:" + p + ": GET /mitm-socks HTTP/1.1\n" +
                         "mitm tunnel origin.test:" + p + ": GET /mitm-captured HTTP/1.1\n403\n")
        << r.err << mitm.log();
    std::ifstream in(seen);
    std::stringstream lines;
    lines << in.rdbuf();
    EXPECT_EQ(lines.str(), "GET http://origin.test:" + p +
                               "/mitm-plain HTTP/1.1\nCONNECT origin.test:" + p +
                               " HTTP/1.1\nCONNECT origin.test:" + p +
                               " HTTP/1.1\nCONNECT origin.test:" + p + " HTTP/1.1\n");
    json rec = One({{"protocol", "http"}, {"host", "origin.test"}, {"decision", "allow"}});
    EXPECT_EQ(rec["address"], "unix:" + socket_path);
    for (const std::string& head : g_net->origin().requests()) {
      EXPECT_FALSE(Contains(head, "/mitm-plain") || Contains(head, "/mitm-tunnel") ||
                   Contains(head, "/mitm-socks") || Contains(head, "/mitm-captured"))
          << head;
    }
  }
  unlink(socket_path.c_str());
  unlink(seen.c_str());
  rmdir(dir.c_str());
}

// The socket is host configuration, but not one the sandbox could replace: inside a write root
// it is refused, saying why, before the command runs.
TEST_P(NetworkTest, AMitmProxySocketTheSandboxCouldReplaceIsRefused) {
  json s = DefaultSettings();
  s["network"]["mitmProxy"] = {{"socketPath", run().Path("proxy.sock")},
                               {"domains", {"origin.test"}}};
  RunResult r = run().Srt(s.dump(), {"-c", "echo ran"});
  EXPECT_EQ(r.exit_code, 125) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_TRUE(Contains(r.err, "network.mitmProxy.socketPath '" + run().Path("proxy.sock") +
                                  "' lies inside the write root '" + run().root() +
                                  "': a sandboxed command could replace the socket"))
      << r.err;
}

TEST_P(NetworkTest, RawSocketReachesAnAllowedName) {
  RunResult r = Sh("python3 raw.py origin.test " + std::to_string(port()));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "data\norigin: GET /raw\n") << r.err;
  json rec = One({{"protocol", "capture"}, {"host", "origin.test"}, {"decision", "allow"}});
  EXPECT_EQ(rec["address"], Carve(port()));
}

TEST_P(NetworkTest, AllowedNamesResolveToSyntheticAddressesAndTheEnvironmentPointsAtTheProxy) {
  RunResult r =
      Sh("getent ahosts origin.test | head -1; cat /etc/resolv.conf; "
         "for v in HTTP_PROXY HTTPS_PROXY ALL_PROXY http_proxy https_proxy all_proxy FTP_PROXY "
         "NO_PROXY GIT_SSH_COMMAND NODE_USE_ENV_PROXY SANDBOX_RUNTIME JAVA_TOOL_OPTIONS; "
         "do printf '%s=%s\\n' \"$v\" \"$(printenv $v)\"; done");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // RFC 2544's benchmarking range 198.18.0.0/15 holds the synthetic addresses.
  EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(^198\.1[89]\.\d+\.\d+ +STREAM origin\.test)")))
      << r.out;
  EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(\nnameserver 127\.0\.0\.1\n)"))) << r.out;
  const std::string http = R"(http://srt\.[^:@/]+:[0-9a-zA-Z%._~-]+@localhost:3128)";
  for (const char* v :
       {"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"}) {
    EXPECT_TRUE(std::regex_search(r.out, std::regex("\n" + std::string(v) + "=" + http + "\n")))
        << v << " in\n"
        << r.out;
  }
  EXPECT_TRUE(std::regex_search(
      r.out, std::regex(R"(\nFTP_PROXY=socks5h://srt\.[^:@/]+:[^@]+@localhost:1080\n)")))
      << r.out;
  EXPECT_TRUE(Contains(r.out, "\nNO_PROXY=localhost,127.0.0.1,::1,")) << r.out;
  EXPECT_TRUE(std::regex_search(
      r.out, std::regex(R"(\nGIT_SSH_COMMAND=ssh -o ControlMaster=no -o ControlPath=none -o )"
                        R"(ProxyCommand='[^']*srt-init connect %h %p'\n)")))
      << r.out;
  EXPECT_TRUE(Contains(r.out, "\nNODE_USE_ENV_PROXY=1\n")) << r.out;
  EXPECT_TRUE(Contains(r.out, "\nSANDBOX_RUNTIME=1\n")) << r.out;
  // With capture a JVM needs no proxy properties (see JavasBuiltInClients... below).
  EXPECT_TRUE(Contains(r.out, "\nJAVA_TOOL_OPTIONS=\n")) << r.out;
}

// glibc's getaddrinfo(AF_INET, AI_ADDRCONFIG) answers only when an IPv4 address other than
// 127.0.0.1 is configured (check_pf.c); getent ahostsv4 and many daemons ask exactly that.
TEST_P(NetworkTest, Ipv4LookupWithAddrconfigFindsAllowedNames) {
  RunResult r =
      Sh("a=$(getent ahostsv4 origin.test); echo getent=$?; printf '%s\\n' \"$a\" | head -1; "
         "python3 -c 'import socket; print(socket.getaddrinfo(\"origin.test\", 80, socket.AF_INET, "
         "socket.SOCK_STREAM, 0, socket.AI_ADDRCONFIG)[0][4][0])'");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(std::regex_match(
      r.out,
      std::regex(R"(getent=0\n198\.1[89]\.\d+\.\d+ +STREAM origin\.test\n198\.1[89]\.\d+\.\d+\n)")))
      << r.out << r.err;
}

// --- What a refused client sees ----------------------------------------------------------

TEST_P(NetworkTest, DeniedNameGetsPlain403FromTheHttpProxy) {
  RunResult r = Sh(kCurl + std::string("-i http://denied.test/"));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Contains(r.out, "HTTP/1.1 403 Forbidden\r\n")) << r.out;
  EXPECT_TRUE(Contains(r.out, "\r\nX-Proxy-Error: blocked-by-allowlist\r\n")) << r.out;
  EXPECT_TRUE(Contains(r.out, "\r\nContent-Type: text/plain\r\n")) << r.out;
  EXPECT_EQ(r.out.substr(r.out.find("\r\n\r\n") + 4), kBlockedBody);
  json rec = One({{"protocol", "http"}, {"host", "denied.test"}, {"decision", "deny"}});
  EXPECT_EQ(rec["reason"], kNotAllowed);
  EXPECT_EQ(rec["port"], 80);
  EXPECT_EQ(rec["address"], "");
}

TEST_P(NetworkTest, DeniedConnectCarriesTheReasonInTheStatusLine) {
  RunResult r = Sh(kCurl + std::string("-v -p http://denied.test/; echo rc=$?; ") + kCurl +
                   "-v -p http://blocked.test/; echo rc=$?");
  EXPECT_TRUE(Contains(r.err, "< HTTP/1.1 403 host is not on the allow list\r\n")) << r.err;
  EXPECT_TRUE(Contains(r.err, "< X-Proxy-Error: blocked-by-allowlist\r\n")) << r.err;
  // deniedDomainReasons: the configured text is the reason phrase.
  EXPECT_TRUE(Contains(r.err, "< HTTP/1.1 403 blocked by the network test\r\n")) << r.err;
  EXPECT_EQ(r.out, "rc=56\nrc=56\n") << r.err;  // CURLE_RECV_ERROR: the tunnel was refused
  EXPECT_EQ(One({{"protocol", "connect"}, {"host", "denied.test"}})["reason"], kNotAllowed);
  EXPECT_EQ(One({{"protocol", "connect"}, {"host", "blocked.test"}})["reason"], kBlockedReason);
}

// Without --debug, srt still says once per destination what it refused, so that a command that
// fails for want of the network (a bare reset, a client's retry loop) is explained; a hostile
// name cannot put a control character on the terminal through it.
TEST_P(NetworkTest, EachDeniedDestinationIsSaidOnceOnStderrWithoutDebug) {
  RunResult r = Sh(kCurl + std::string("-p http://denied.test/; ") + kCurl +
                   "-p http://denied.test/; " + kCurl + "-p http://blocked.test/; " +
                   "python3 connect.py $'\\e]0;t\\a:80'; getent hosts denied.test; true");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  auto count = [&](const std::string& line) {
    size_t n = 0;
    for (size_t at = r.err.find(line); at != std::string::npos; at = r.err.find(line, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count("srt: network: denied denied.test:80 (host is not on the allow list)\n"), 1u)
      << r.err;
  EXPECT_EQ(count("srt: network: denied blocked.test:80 (blocked by the network test)\n"), 1u)
      << r.err;
  EXPECT_EQ(count("srt: network: denied denied.test (host is not on the allow list)\n"), 1u)
      << r.err;  // the DNS stub's refusal: the name alone
  for (char c : r.err) EXPECT_FALSE(c == '\x1b' || c == '\x07') << r.err;
  // An allowed destination is not mentioned.
  RunResult ok = Sh(kCurl + Origin("/allowed"));
  EXPECT_EQ(ok.err.find("srt: network:"), std::string::npos) << ok.err;
}

TEST_P(NetworkTest, DeniedDomainReasonIsNotShownToPlainHttpClients) {
  RunResult r = Sh(kCurl + std::string("-i http://blocked.test/"));
  EXPECT_TRUE(Contains(r.out, "HTTP/1.1 403 Forbidden\r\n")) << r.out;
  EXPECT_EQ(r.out.substr(r.out.find("\r\n\r\n") + 4), kBlockedBody);
  json rec = One({{"protocol", "http"}, {"host", "blocked.test"}, {"decision", "deny"}});
  EXPECT_EQ(rec["reason"], kBlockedReason);
  EXPECT_EQ(rec["entry"], "blocked.test");
}

TEST_P(NetworkTest, NameResolvingToLoopbackWithoutCarveOutIsRefused) {
  const std::string url = "http://origin.test:" + std::to_string(kUnlistedPort) + "/";
  RunResult r = Sh(kCurl + ("-i " + url + "; ") + kCurl + "-v -p " + url);
  EXPECT_TRUE(Contains(r.out, "HTTP/1.1 403 Forbidden\r\n")) << r.out;
  EXPECT_TRUE(Contains(r.out, "\r\nX-Proxy-Error: blocked-by-sandbox-runtime\r\n")) << r.out;
  EXPECT_TRUE(Contains(
      r.out, "\r\n\r\nConnection to origin.test blocked: resolved to a loopback address\n"))
      << r.out;
  EXPECT_TRUE(Contains(r.err, "< HTTP/1.1 403 resolved to a loopback address\r\n")) << r.err;
  EXPECT_TRUE(Contains(r.err, "< X-Proxy-Error: blocked-by-sandbox-runtime\r\n")) << r.err;
  for (const char* protocol : {"http", "connect"}) {
    json rec = One({{"protocol", protocol}, {"host", "origin.test"}, {"port", kUnlistedPort}});
    EXPECT_EQ(rec["decision"], "deny");
    EXPECT_EQ(rec["reason"], "resolved to a loopback address");
  }
}

TEST_P(NetworkTest, DialFailureIs502OrSocksRep4) {
  const std::string url = "http://origin.test:" + std::to_string(g_net->dead_port()) + "/";
  RunResult r = Sh(kCurl + ("-i " + url + "; ") + kCurl + "-v -p " + url + "; " + kCurl +
                   "-x \"$FTP_PROXY\" " + url + "; echo rc=$?");
  EXPECT_TRUE(Contains(r.out, "HTTP/1.1 502 Bad Gateway\r\n")) << r.out;
  EXPECT_TRUE(Contains(r.out, "\r\n\r\nBad Gateway")) << r.out;
  EXPECT_TRUE(Contains(r.err, "< HTTP/1.1 502 Bad Gateway\r\n")) << r.err;
  // RFC 1928 §6: REP 0x04 host unreachable.
  EXPECT_TRUE(Contains(r.err, "Can't complete SOCKS5 connection to origin.test. (4)")) << r.err;
  EXPECT_TRUE(Contains(r.out, "rc=97\n")) << r.out;
  for (const char* protocol : {"http", "connect", "socks5"}) {
    json rec = One({{"protocol", protocol}, {"port", g_net->dead_port()}});
    EXPECT_EQ(rec["decision"], "allow");
    EXPECT_EQ(rec["end"], "dial-failed");
    EXPECT_TRUE(Contains(rec.value("error", ""), "Connection refused")) << rec.dump();
  }
}

TEST_P(NetworkTest, BadConnectTargetIs400) {
  RunResult r =
      Sh("python3 connect.py no-port-here; python3 connect.py origin.test:99999; "
         "python3 connect.py 'a b:80'");
  EXPECT_EQ(r.out, "HTTP/1.1 400 Bad Request\nHTTP/1.1 400 Bad Request\nHTTP/1.1 400 Bad Request\n")
      << r.err;
  std::vector<json> recs = log_->Matching({{"protocol", "connect"}, {"decision", "deny"}});
  ASSERT_EQ(recs.size(), 3u) << log_->log_text();
  EXPECT_TRUE(Contains(recs[0].value("reason", ""), "a port is required")) << recs[0].dump();
  EXPECT_TRUE(Contains(recs[1].value("reason", ""), "port out of range")) << recs[1].dump();
}

// decision_log.h: "host" is "the raw text (as the client sent it) when malformed".
TEST_P(NetworkTest, MalformedConnectTargetIsLoggedAsTheClientSentIt) {
  RunResult r = Sh("python3 connect.py no-port-here");
  EXPECT_EQ(r.out, "HTTP/1.1 400 Bad Request\n") << r.err;
  json rec = One({{"protocol", "connect"}, {"decision", "deny"}});
  EXPECT_EQ(rec["host"], std::string("no-port-here")) << rec.dump();
}

// Targets come from the sandbox: what the log holds of them cannot run when a shell reads the
// log (an operator's `eval`, a script that pastes a line into a command), nor drive the terminal
// that --debug prints to. JSON parsers still read the target exactly as it was sent.
TEST_P(NetworkTest, LoggedTargetsCannotRunInAShellOrTheTerminal) {
  const std::string marker = run().Path("PWNED");
  const std::string target = "$(touch${IFS}" + marker + ")`touch${IFS}" + marker + "`;x|y&z:80";
  RunResult r = Sh("python3 connect.py '" + target + "'; python3 connect.py $'\\e]0;t\\a:80'",
                   DefaultSettings(), {"--debug"});
  std::vector<json> recs = log_->Matching({{"protocol", "connect"}});
  ASSERT_EQ(recs.size(), 2u) << log_->log_text();
  EXPECT_EQ(recs[0]["host"], target) << recs[0].dump();  // malformed: kept as it was sent
  for (char c : std::string("$`;|&\x1b\x07")) {
    EXPECT_EQ(log_->log_text().find(c), std::string::npos)
        << "raw '" << c << "' in the log: " << log_->log_text();
  }
  // The log, fed to a shell line by line, runs nothing.
  run().Host({"sh", "-c",
              "while read -r line; do eval \"echo $line\" >/dev/null; done < " +
                  run().Path("decisions-0.jsonl")});
  EXPECT_NE(access(marker.c_str(), F_OK), 0) << "a logged target ran in a shell";
  // --debug's summary lines carry no control characters.
  for (char c : r.err) EXPECT_FALSE(c == '\x1b' || c == '\x07') << r.err;
}

TEST_P(NetworkTest, MissingCredentialsGet407OrSocksRefusal) {
  const std::string url = Origin("/no-credentials");
  RunResult r = Sh(kCurl + ("-i -x http://localhost:3128 " + url + "; ") + kCurl +
                   "-v -p -x http://localhost:3128 " + url + "; " + kCurl +
                   "-x socks5h://localhost:1080 " + url + "; echo rc=$?; " + kCurl +
                   "-x socks5h://srt.nobody:wrong@localhost:1080 " + url + "; echo rc=$?");
  EXPECT_TRUE(Contains(r.out, "HTTP/1.1 407 Proxy Authentication Required\r\n")) << r.out;
  EXPECT_TRUE(Contains(r.out, "\r\nProxy-Authenticate: Basic realm=\"srt\"\r\n")) << r.out;
  EXPECT_TRUE(Contains(r.err, "< HTTP/1.1 407 Proxy Authentication Required\r\n")) << r.err;
  // No credentials offered: the request is refused with REP 0x02; wrong ones fail RFC 1929.
  EXPECT_TRUE(Contains(r.err, "Can't complete SOCKS5 connection to origin.test. (2)")) << r.err;
  EXPECT_TRUE(Contains(r.err, "User was rejected by the SOCKS5 server (1 1).")) << r.err;
  EXPECT_TRUE(Contains(r.out, "rc=97\nrc=97\n")) << r.out;
  for (const char* protocol : {"http", "connect", "socks5"}) {
    json rec = One({{"protocol", protocol}, {"reason", "missing proxy credentials"}});
    EXPECT_EQ(rec["decision"], "deny");
  }
  One({{"protocol", "socks5"}, {"reason", "wrong proxy credentials"}});
  for (const std::string& head : g_net->origin().requests()) {
    EXPECT_FALSE(Contains(head, "/no-credentials")) << head;
  }
}

TEST_P(NetworkTest, DeniedNameGetsSocksRep2) {
  RunResult r = Sh(kCurl + std::string("-x \"$FTP_PROXY\" http://denied.test/; echo rc=$?"));
  EXPECT_TRUE(Contains(r.err, "Can't complete SOCKS5 connection to denied.test. (2)")) << r.err;
  EXPECT_EQ(r.out, "rc=97\n");
  EXPECT_EQ(One({{"protocol", "socks5"}, {"host", "denied.test"}})["reason"], kNotAllowed);
}

// --- Request filtering (network.refuseOpaqueTunnels, requireHostMatch) -------------------

TEST_P(NetworkTest, RefuseOpaqueTunnelsRefusesConnectAndSocks5) {
  json settings = DefaultSettings();
  settings["network"]["refuseOpaqueTunnels"] = true;
  RunResult r = Sh(kCurl + std::string("-p -o /dev/null -w '%{http_connect}\\n' ") +
                       Origin("/tunnel") + "; echo rc=$?; " + kCurl + "-x \"$FTP_PROXY\" " +
                       Origin("/socks") + "; echo rc=$?; " + kCurl + Origin("/plain"),
                   settings);
  // CONNECT: 403 (curl 56: the proxy refused the tunnel); SOCKS5: REP 1 (curl 97); plain HTTP
  // is still served.
  EXPECT_EQ(r.out, "403\nrc=56\nrc=97\norigin: GET /plain\n") << r.err;
  EXPECT_EQ(One({{"protocol", "connect"}, {"host", "origin.test"}})["reason"],
            "this proxy does not tunnel CONNECTs it cannot inspect (refuseOpaqueTunnels)");
  EXPECT_EQ(One({{"protocol", "socks5"}, {"host", "origin.test"}})["reason"],
            "refuseOpaqueTunnels");
  for (const std::string& head : g_net->origin().requests()) {
    EXPECT_FALSE(Contains(head, "/tunnel") || Contains(head, "/socks")) << head;
  }
}

TEST_P(NetworkTest, RequireHostMatchClosesATunnelWhoseHostNamesAnotherHost) {
  json settings = DefaultSettings();
  settings["network"]["requireHostMatch"] = true;
  // Through a CONNECT tunnel to the allowed origin, a request for another virtual host (as a
  // front end shared by many names would serve it): the tunnel is closed before it reaches the
  // origin. The same request naming the origin goes through.
  RunResult r = Sh(kCurl + std::string("-p -H 'Host: denied.test' ") + Origin("/fronted") +
                       "; echo rc=$?; " + kCurl + "-p " + Origin("/matching"),
                   settings);
  EXPECT_EQ(r.out, "rc=56\norigin: GET /matching\n") << r.err;  // 56: reset by the proxy
  EXPECT_EQ(One({{"protocol", "connect"}, {"decision", "deny"}})["reason"],
            "Host header does not match the request target (requireHostMatch)");
  for (const std::string& head : g_net->origin().requests()) {
    EXPECT_FALSE(Contains(head, "/fronted")) << head;
  }
}

// --- Names and addresses that lead nowhere -----------------------------------------------

TEST_P(NetworkTest, DeniedNameDoesNotResolve) {
  RunResult r = Sh("getent hosts denied.test; echo getent=$?; " + std::string(kCurl) +
                   "--noproxy '*' http://denied.test/; echo curl=$?");
  EXPECT_EQ(r.out, "getent=2\ncurl=6\n") << r.err;  // NXDOMAIN; CURLE_COULDNT_RESOLVE_HOST
  EXPECT_TRUE(Contains(r.err, "Could not resolve host: denied.test")) << r.err;
  std::vector<json> dns = log_->Matching({{"protocol", "dns"}, {"host", "denied.test"}});
  ASSERT_FALSE(dns.empty()) << log_->log_text();
  for (const json& rec : dns) {
    EXPECT_EQ(rec["decision"], "deny");
    EXPECT_EQ(rec["reason"], kNotAllowed);
    EXPECT_EQ(rec["port"], 53);
  }
}

TEST_P(NetworkTest, ConnectionToAnArbitraryAddressIsRefusedAndLogged) {
  // TEST-NET-1 (RFC 5737): every address is local in the sandbox, so this reaches the capture.
  RunResult r = Sh("python3 raw.py 192.0.2.1 80");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.out == "error ConnectionResetError\n" || r.out == "closed\n" ||
              r.out == "error ConnectionRefusedError\n")
      << r.out;
  json rec = One({{"protocol", "capture"}, {"host", "192.0.2.1"}});
  EXPECT_EQ(rec["decision"], "deny");
  EXPECT_EQ(rec["port"], 80);
  EXPECT_EQ(rec["reason"], kNotAllowed);
}

TEST_P(NetworkTest, UdpGetsNothingOut) {
  RunResult r = Sh("python3 udp.py");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Contains(r.out, "no answer")) << r.out;
}

// Nothing allowed is a policy, not an outage (as upstream): the proxy still runs, says why, and
// records every attempt; the variables point at it, and a control update can open it later.
TEST_P(NetworkTest, NothingAllowedIsRefusedByTheProxyAndLogged) {
  for (const json& settings : {NetworkSettings({}), json::parse(R"({"filesystem": {}})"),
                               json::parse(R"({"network": {"allowedDomains": []}})")}) {
    RunResult r = log_->Sh(
        "env | grep -c "
        "'^\\(HTTP_PROXY\\|HTTPS_PROXY\\|ALL_PROXY\\|NO_PROXY\\|GIT_SSH_COMMAND\\)='; " +
            std::string(kCurl) + "-i " + Origin("/via-proxy") + "; echo; echo curl=$?; " + kCurl +
            "--noproxy '*' http://192.0.2.1/; echo curl=$?",
        settings);
    EXPECT_EQ(r.exit_code, 0) << settings.dump() << r.err;
    EXPECT_TRUE(Contains(r.out, "5\n")) << r.out;
    EXPECT_TRUE(Contains(r.out, "HTTP/1.1 403 Forbidden\r\n")) << r.out;
    EXPECT_TRUE(Contains(r.out, std::string(kBlockedBody) + "\ncurl=0\n")) << r.out;
    EXPECT_FALSE(Contains(r.err, "Could not resolve host")) << r.err;
    EXPECT_EQ(One({{"protocol", "http"}, {"host", "origin.test"}})["decision"], "deny");
    // TEST-NET-1 (RFC 5737) on port 80: every address is local in the sandbox, so the capture.
    EXPECT_EQ(One({{"protocol", "capture"}, {"host", "192.0.2.1"}})["decision"], "deny");
    EXPECT_TRUE(g_net->origin().requests().empty() ||
                !Contains(g_net->origin().requests().back(), "/via-proxy"));
  }
}

TEST_P(NetworkTest, WithoutTransparentCaptureOnlyTheProxyReachesTheOrigin) {
  json settings = DefaultSettings();
  settings["network"]["transparentCapture"] = false;
  RunResult r =
      Sh(kCurl + Origin("/proxied") + "; " + kCurl + "--noproxy '*' " + Origin("/direct") +
             "; echo rc=$?; " + kCurl + "--noproxy '*' http://192.0.2.1/; echo rc=$?",
         settings);
  // No DNS stub (CURLE_COULDNT_RESOLVE_HOST) and no routes (CURLE_COULDNT_CONNECT).
  EXPECT_EQ(r.out, "origin: GET /proxied\nrc=6\nrc=7\n") << r.err;
  EXPECT_EQ(log_->records().size(), 1u) << log_->log_text();
  One({{"protocol", "http"}, {"host", "origin.test"}, {"decision", "allow"}});
}

// --- TLS on the captured port 443 -------------------------------------------------------

TEST_P(NetworkTest, TlsServerNameMustMatchTheCapturedName) {
  RunResult r =
      Sh(kCurl + std::string("-k --noproxy '*' --connect-to other.test:443:origin.test:443 "
                             "https://other.test/; echo rc=$?"));
  EXPECT_NE(r.out, "rc=0\n") << r.err;
  json rec = One({{"protocol", "capture"}, {"port", 443}});
  EXPECT_EQ(rec["decision"], "deny");
  EXPECT_TRUE(Contains(rec.value("reason", ""), "TLS server name 'other.test' does not match"))
      << rec.dump();
}

// --- The decision log ----------------------------------------------------------------------

TEST_P(NetworkTest, LogFileHasOneJsonLinePerConnection) {
  RunResult r = Sh(kCurl + Origin("/one") + "; " + kCurl + "--noproxy '*' " + Origin("/two") +
                   "; " + kCurl + "-o /dev/null http://denied.test/; getent hosts denied.test");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  const std::string& text = log_->log_text();
  ASSERT_FALSE(text.empty());
  EXPECT_EQ(text.back(), '\n');

  const std::vector<std::string> keys = {
      "time",   "sandbox", "protocol", "host",       "port",        "address", "via",  "decision",
      "reason", "entry",   "bytes_up", "bytes_down", "duration_ms", "end",     "error"};
  std::istringstream in(text);
  std::string sandbox;
  int lines = 0;
  for (std::string line; std::getline(in, line); ++lines) {
    ordered_json j = ordered_json::parse(line, nullptr, /*allow_exceptions=*/false);
    ASSERT_TRUE(j.is_object()) << line;
    std::vector<std::string> got;
    for (const auto& [key, value] : j.items()) got.push_back(key);
    EXPECT_EQ(got, keys) << line;
    EXPECT_TRUE(std::regex_match(j.value("time", ""),
                                 std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)")))
        << line;
    if (sandbox.empty()) sandbox = j.value("sandbox", "");
    EXPECT_EQ(j["sandbox"], sandbox) << line;
    EXPECT_TRUE(j["port"].is_number_unsigned()) << line;
    EXPECT_TRUE(j["bytes_up"].is_number_unsigned()) << line;
    EXPECT_TRUE(j["bytes_down"].is_number_unsigned()) << line;
    EXPECT_TRUE(j["duration_ms"].is_number() && j["duration_ms"].get<double>() >= 0) << line;
    EXPECT_EQ(j["via"], "direct") << line;
  }
  EXPECT_FALSE(sandbox.empty());

  One({{"protocol", "http"}, {"host", "origin.test"}, {"decision", "allow"}});
  json capture = One({{"protocol", "capture"}, {"host", "origin.test"}, {"decision", "allow"}});
  json denied = One({{"protocol", "http"}, {"host", "denied.test"}, {"decision", "deny"}});
  size_t dns = log_->Matching({{"protocol", "dns"}, {"host", "denied.test"}}).size();
  EXPECT_GE(dns, 1u);
  EXPECT_EQ(static_cast<size_t>(lines), 3 + dns) << text;

  // The capture relays bytes untouched, so its counts are exact.
  std::string head;
  for (const std::string& h : g_net->origin().requests()) {
    if (Contains(h, "GET /two ")) head = h;
  }
  ASSERT_FALSE(head.empty());
  EXPECT_EQ(capture["bytes_up"], head.size() + 4);  // + the blank line
  EXPECT_EQ(capture["bytes_down"], OriginServer::Response("GET", "/two").size());
  EXPECT_EQ(denied["bytes_up"], 0);
  EXPECT_EQ(denied["bytes_down"], 0);
  EXPECT_EQ(denied["address"], "");
}

TEST_P(NetworkTest, LogFdWritesTheSameLinesToAPipe) {
  int p[2];
  ASSERT_EQ(pipe2(p, O_CLOEXEC), 0);
  UniqueFd read_end(p[0]), write_end(p[1]);
  pid_t pid =
      run().StartWithFds(DefaultSettings().dump(),
                         {"--log-fd", "50", "-c",
                          kCurl + Origin("/logged") +
                              "; [ -e /proc/self/fd/50 ] && echo fd50-open || echo fd50-closed"},
                         {{50, write_end.get()}});
  write_end.reset();
  RunResult r = run().Finish(pid);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "origin: GET /logged\nfd50-closed\n") << r.err;
  // srt has exited, so the pipe reaches EOF unless something else kept the write end.
  std::string text;
  ASSERT_EQ(fcntl(read_end.get(), F_SETFL, O_NONBLOCK), 0);
  pollfd pfd{read_end.get(), POLLIN, 0};
  for (;;) {
    ASSERT_EQ(poll(&pfd, 1, 5000), 1) << "the log pipe never reached EOF";
    char buf[4096];
    ssize_t n = read(read_end.get(), buf, sizeof buf);
    if (n <= 0) break;
    text.append(buf, static_cast<size_t>(n));
  }
  std::vector<json> recs = LoggedRun::Parse(text);
  ASSERT_EQ(recs.size(), 1u) << text;
  EXPECT_EQ(recs[0]["protocol"], "http");
  EXPECT_EQ(recs[0]["host"], "origin.test");
  EXPECT_EQ(recs[0]["decision"], "allow");
}

TEST_P(NetworkTest, DebugPrintsOneSummaryPerDecision) {
  RunResult r = Sh(kCurl + Origin("/debug") + "; " + kCurl +
                       "-o /dev/null http://denied.test/; getent hosts denied.test",
                   DefaultSettings(), {"-d"});
  const std::string p = std::to_string(port());
  EXPECT_TRUE(
      Contains(r.err, "\nsrt: network: allow http origin.test:" + p + " -> 127.0.0.1:" + p + " ("))
      << r.err;
  EXPECT_TRUE(Contains(
      r.err, "\nsrt: network: deny http denied.test:80 (" + std::string(kNotAllowed) + ")\n"))
      << r.err;
  EXPECT_TRUE(Contains(
      r.err, "\nsrt: network: deny dns denied.test:53 (" + std::string(kNotAllowed) + ")\n"))
      << r.err;
  EXPECT_TRUE(std::regex_search(
      r.err,
      std::regex(R"(srt: network: allow http [^\n]*\(\d+ B up, \d+ B down, \d+ ms, closed\))")))
      << r.err;
}

// srt serves the proxy's sockets while srt-agent is still mounting (it makes them first), not
// after it: the command waits for both, so they overlap. The network works all the same.
TEST_P(NetworkTest, TheProxysSocketsAreServedBeforeTheAgentHasMounted) {
  RunResult r = Sh(kCurl + Origin("/early"), DefaultSettings(), {"-d"});
  ExpectReachedOrigin(r, "http", "/early");
  const size_t init = r.err.find("] srt-init is running as the sandbox's PID 1\n");
  const size_t served = r.err.find("] the proxy serves the ");
  const size_t agent = r.err.find("] srt-agent: /proc hidden, ");
  ASSERT_NE(init, std::string::npos) << r.err;
  ASSERT_NE(served, std::string::npos) << r.err;
  ASSERT_NE(agent, std::string::npos) << r.err;
  EXPECT_LT(init, served) << r.err;
  EXPECT_LT(served, agent) << r.err;
  EXPECT_TRUE(std::regex_search(
      r.err,
      std::regex(
          R"(\] the proxy serves the \d+ sockets made in the sandbox's network namespace\n)")))
      << r.err;
}

// The proxy shuts down as soon as srt-init reports the sandbox empty, while bubblewrap and
// srt-agent exit, not once they have: a bwrap that lingers after its sandbox has ended finds the
// proxy's thread gone. The command's connection worked and was logged all the same.
TEST_P(NetworkTest, TheProxyStopsOnceTheSandboxIsEmpty) {
  const std::string bwrap = SystemBwrap();
  if (bwrap.empty()) GTEST_SKIP() << "no bwrap";
  // bwrap, then a wait for the test's go (at most 20 s) before its status is passed on.
  run().WriteFile("lingering-bwrap", "#!/bin/sh\n" + bwrap +
                                         " \"$@\"\nst=$?\n: > bwrap-exited\ni=0\nwhile [ ! -e go ] "
                                         "&& [ $i -lt 2000 ]; do sleep 0.01; i=$((i+1)); "
                                         "done\nexit $st\n");
  ASSERT_EQ(chmod(run().Path("lingering-bwrap").c_str(), 0755), 0);
  // The wrapper outside the write root (srt refuses a bwrap the sandbox could replace).
  run().MakeDir("out");
  json settings = DefaultSettings();
  settings["bwrapPath"] = run().Path("lingering-bwrap");
  settings["filesystem"]["allowWrite"] = {"out"};
  const std::string log = run().Path("lingering.jsonl");
  pid_t pid = run().Start(settings.dump(), {"--log-file", log, "-c", kCurl + Origin("/last")});
  ASSERT_TRUE(Eventually([&] { return run().Exists("bwrap-exited"); }, std::chrono::seconds(20)))
      << run().Finish(pid).err;
  EXPECT_TRUE(Eventually([&] { return ThreadsNamed(pid, "srt-proxy") == 0; }))
      << "the proxy still runs after the sandbox ended";
  run().WriteFile("go", "");
  RunResult r = run().Finish(pid);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "origin: GET /last\n") << r.err;
  EXPECT_NE(run().ReadFile("lingering.jsonl").find("\"origin.test\""), std::string::npos) << r.err;
}

// --- --control-fd --------------------------------------------------------------------------

// The command waits for `go` between its two phases; the test changes the config in between.
TEST_P(NetworkTest, ControlFdUpdateAppliesToNewConnections) {
  int p[2];
  ASSERT_EQ(pipe2(p, O_CLOEXEC), 0);
  UniqueFd read_end(p[0]), write_end(p[1]);
  const std::string script =
      kCurl + Origin("/before") +
      "; : > step1; i=0; while [ ! -e go ]; do i=$((i+1)); [ $i -gt 400 ] && exit 3; "
      "sleep 0.05; done; "
      // Updates apply asynchronously: poll (bounded) until the new lists are in force.
      "i=0; until [ \"$(curl -s --max-time 5 -o /dev/null -w '%{http_code}' " +
      Origin("/after") +
      ")\" = 403 ]; do i=$((i+1)); [ $i -gt 100 ] && { echo still-allowed; exit 4; }; "
      "sleep 0.05; done; echo denied-after-update";
  const std::string log = run().Path("control.jsonl");
  pid_t pid = run().StartWithFds(DefaultSettings().dump(),
                                 {"--log-file", log, "--control-fd", "50", "-c", script},
                                 {{50, read_end.get()}});
  read_end.reset();
  ASSERT_TRUE(Eventually([&] { return run().Exists("step1"); }, std::chrono::seconds(10)))
      << run().Finish(pid).err;
  json update = NetworkSettings({Carve(port())});  // origin.test is no longer allowed
  const std::string lines = "this is not json\n" + update.dump() + "\n";
  ASSERT_EQ(write(write_end.get(), lines.data(), lines.size()), static_cast<ssize_t>(lines.size()));
  write_end.reset();  // EOF: the command keeps running under the last config
  run().WriteFile("go", "");
  RunResult r = run().Finish(pid);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "origin: GET /before\ndenied-after-update\n") << r.err;
  EXPECT_TRUE(Contains(r.err,
                       "srt: invalid config on control fd 50: ignored, previous config still in "
                       "force ("))
      << r.err;
  std::vector<json> recs = LoggedRun::Parse(run().ReadFile("control.jsonl"));
  ASSERT_FALSE(recs.empty());
  EXPECT_EQ(recs.front()["decision"], "allow");
  EXPECT_EQ(recs.back()["decision"], "deny");
  EXPECT_EQ(recs.back()["reason"], kNotAllowed);
}

// A sandbox that terminates TLS keeps doing so whatever an update says, so an update that adds
// mitmProxy is the combination the settings file refuses ("mutually exclusive"): refused the
// same way, naming both keys, and the next valid line still applies.
TEST_P(NetworkTest, ControlFdRefusesMitmProxyWhileTlsIsTerminated) {
  int p[2];
  ASSERT_EQ(pipe2(p, O_CLOEXEC), 0);
  UniqueFd read_end(p[0]), write_end(p[1]);
  const std::string script =
      kCurl + Origin("/before") +
      "; : > step1; i=0; while [ ! -e go ]; do i=$((i+1)); [ $i -gt 400 ] && exit 3; "
      "sleep 0.05; done; "
      "i=0; until [ \"$(curl -s --max-time 5 -o /dev/null -w '%{http_code}' " +
      Origin("/after") +
      ")\" = 403 ]; do i=$((i+1)); [ $i -gt 100 ] && { echo still-allowed; exit 4; }; "
      "sleep 0.05; done; echo denied-after-update";
  json settings = DefaultSettings();
  settings["network"]["tlsTerminate"] = json::object();
  pid_t pid = run().StartWithFds(settings.dump(), {"--control-fd", "50", "-c", script},
                                 {{50, read_end.get()}});
  read_end.reset();
  ASSERT_TRUE(Eventually([&] { return run().Exists("step1"); }, std::chrono::seconds(10)))
      << run().Finish(pid).err;
  json mitm = settings;
  mitm["network"].erase("tlsTerminate");
  mitm["network"]["mitmProxy"] = {{"socketPath", "/run/srt-test-no-such-mitm.sock"},
                                  {"domains", {"origin.test"}}};
  json deny = NetworkSettings({Carve(port())});
  const std::string lines = mitm.dump() + "\n" + deny.dump() + "\n";
  ASSERT_EQ(write(write_end.get(), lines.data(), lines.size()), static_cast<ssize_t>(lines.size()));
  write_end.reset();
  run().WriteFile("go", "");
  RunResult r = run().Finish(pid);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "origin: GET /before\ndenied-after-update\n") << r.err;
  EXPECT_TRUE(Contains(r.err,
                       "srt: invalid config on control fd 50: ignored, previous config still in "
                       "force (network.tlsTerminate and network.mitmProxy are mutually exclusive: "
                       "this sandbox terminates TLS (network.tlsTerminate at its start), so an "
                       "update cannot add network.mitmProxy)"))
      << r.err;
}

TEST_P(NetworkTest, ControlFdThatCannotBeReadStopsSrtBeforeTheCommand) {
  int p[2];
  ASSERT_EQ(pipe2(p, O_CLOEXEC), 0);
  UniqueFd read_end(p[0]), write_end(p[1]);
  pid_t pid = run().StartWithFds(DefaultSettings().dump(), {"--control-fd", "50", "-c", ": > ran"},
                                 {{50, write_end.get()}});
  RunResult write_only = run().Finish(pid);
  EXPECT_EQ(write_only.exit_code, 125);
  EXPECT_TRUE(Contains(write_only.err, "--control-fd 50 is not usable: ")) << write_only.err;
  RunResult closed = run().Srt(DefaultSettings().dump(), {"--control-fd", "57", "-c", ": > ran"});
  EXPECT_EQ(closed.exit_code, 125);
  EXPECT_TRUE(Contains(closed.err, "--control-fd 57 is not usable: Bad file descriptor"))
      << closed.err;
  EXPECT_FALSE(run().Exists("ran"));
}

// srt --serve: every attached command goes through the one proxy, the network lists hold for
// each, and an update on the serve's --control-fd applies to the commands attached after it.
TEST_P(NetworkTest, AWarmSandboxsCommandsShareItsProxyAndItsControlFd) {
  int p[2];
  ASSERT_EQ(pipe2(p, O_CLOEXEC), 0);
  UniqueFd read_end(p[0]), write_end(p[1]);
  run().MakeDir("../run");  // outside the write root "." (srt refuses a socket inside one)
  const std::string socket = run().Path("../run/srt.sock");
  pid_t serve = run().StartWithFds(
      DefaultSettings().dump(), {"--control-fd", "50", "--serve", socket}, {{50, read_end.get()}});
  read_end.reset();
  ASSERT_TRUE(Eventually([&] { return run().Exists("../run/srt.sock"); }, std::chrono::seconds(10)))
      << run().Finish(serve).err;
  auto attach = [&](const std::string& script) {
    return run().SrtRaw({"--attach", socket, "-c", script});
  };
  RunResult allowed = attach(kCurl + Origin("/warm"));
  EXPECT_EQ(allowed.exit_code, 0) << allowed.err;
  EXPECT_EQ(allowed.out, "origin: GET /warm\n") << allowed.err;
  RunResult denied = attach(std::string("curl -s --max-time 5 -o /dev/null -w '%{http_code}' ") +
                            "http://blocked.test:" + std::to_string(port()) + "/");
  EXPECT_EQ(denied.out, "403") << denied.err;
  json update = NetworkSettings({Carve(port())});  // origin.test is no longer allowed
  const std::string line = update.dump() + "\n";
  ASSERT_EQ(write(write_end.get(), line.data(), line.size()), static_cast<ssize_t>(line.size()));
  RunResult after = attach(
      "i=0; until [ \"$(curl -s --max-time 5 -o /dev/null -w '%{http_code}' " + Origin("/after") +
      ")\" = 403 ]; do i=$((i+1)); [ $i -gt 100 ] && { echo still-allowed; exit 4; }; "
      "sleep 0.05; done; echo denied-after-update");
  EXPECT_EQ(after.exit_code, 0) << after.err;
  EXPECT_EQ(after.out, "denied-after-update\n") << after.err;
  kill(serve, SIGTERM);
  RunResult r = run().Finish(serve);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(run().Exists("run/srt.sock"));
}

TEST_P(NetworkTest, ControlFdAtEofKeepsTheStartingConfig) {
  int p[2];
  ASSERT_EQ(pipe2(p, O_CLOEXEC), 0);
  UniqueFd read_end(p[0]), write_end(p[1]);
  write_end.reset();
  pid_t pid = run().StartWithFds(DefaultSettings().dump(),
                                 {"--control-fd", "50", "-c", kCurl + Origin("/after-eof")},
                                 {{50, read_end.get()}});
  RunResult r = run().Finish(pid);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "origin: GET /after-eof\n") << r.err;
  EXPECT_FALSE(Contains(r.err, "control fd")) << r.err;
}

SRT_INSTANTIATE(NetworkTest);

// --- network.tlsTerminate ---------------------------------------------------------------------

// An HTTPS origin on the host: python3 https_origin.py PORT CERT KEY ROOT. GET /repo.git/... are
// files under ROOT (git's dumb HTTP protocol); anything else answers "tls origin: GET <target>
// host=<Host>\n".
constexpr char kHttpsOriginPy[] = R"(import functools, http.server, ssl, sys
port, cert, key, root = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
class H(http.server.SimpleHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_POST(self):
        # Echoes the Authorization header and the body, and keeps what it saw in seen.txt.
        got = self.rfile.read(int(self.headers.get("Content-Length", "0"))).decode()
        seen = "auth=" + self.headers.get("Authorization", "") + " body=" + got
        with open(root + "/seen.txt", "a") as f:
            f.write(seen + "\n")
        body = (seen + "\n").encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def do_GET(self):
        if self.path.startswith("/repo.git/"):
            return super().do_GET()
        body = ("tls origin: GET " + self.path + " host=" + self.headers.get("Host", "") + "\n").encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass
srv = http.server.ThreadingHTTPServer(("127.0.0.1", port), functools.partial(H, directory=root))
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(cert, key)
srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
srv.serve_forever()
)";

// Node without proxy support for fetch (before 24): a CONNECT by hand, then TLS over it,
// verified with Node's roots plus NODE_EXTRA_CA_CERTS.
constexpr char kNodeConnectJs[] = R"(const http = require("http"), tls = require("tls");
const proxy = new URL(process.env.HTTPS_PROXY), target = new URL(process.argv[2]);
const auth = Buffer.from(decodeURIComponent(proxy.username) + ":" +
                         decodeURIComponent(proxy.password)).toString("base64");
const req = http.request({host: proxy.hostname, port: proxy.port, method: "CONNECT",
                          path: target.host, headers: {"Proxy-Authorization": "Basic " + auth}});
req.on("connect", (res, socket) => {
  const s = tls.connect({socket, servername: target.hostname}, () => {
    s.write("GET " + target.pathname + " HTTP/1.1\r\nHost: " + target.host +
            "\r\nConnection: close\r\n\r\n");
  });
  let out = "";
  s.on("data", d => out += d);
  s.on("end", () => { console.log(out.split("\r\n\r\n")[1].trim()); });
  s.on("error", e => { console.log("node: " + e.message); process.exit(1); });
});
req.end();
)";

// Two CONNECTs with srt's credentials; the first is kept open while the second is answered.
constexpr char kTwoConnectsPy[] = R"(import base64, os, socket, sys, urllib.parse
u = urllib.parse.urlsplit(os.environ["HTTP_PROXY"])
cred = urllib.parse.unquote(u.username) + ":" + urllib.parse.unquote(u.password)
def connect():
    s = socket.create_connection((u.hostname, u.port), timeout=5)
    s.sendall(("CONNECT " + sys.argv[1] + " HTTP/1.1\r\nProxy-Authorization: Basic " +
               base64.b64encode(cred.encode()).decode() + "\r\n\r\n").encode())
    return s, s.recv(4096).decode(errors="replace")
first, a = connect()
second, b = connect()
print(a.split("\r\n")[0])
print(b.replace("\r\n", "|"))
)";

class TlsTerminateTest : public NetworkTest {
 protected:
  void SetUp() override {
    NetworkTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    openssl_ = FindTool({"/usr/bin/openssl", "/bin/openssl"});
    python_ = FindTool({"/usr/bin/python3"});
    if (openssl_.empty() || python_.empty()) {
      if (srt::testing::MustWork()) FAIL() << "openssl or python3 missing";
      GTEST_SKIP() << "openssl or python3 missing";
    }
    run().MakeDir("tls");
    run().MakeDir("tls/www");
    run().WriteFile("https_origin.py", kHttpsOriginPy);
    run().WriteFile("node_connect.js", kNodeConnectJs);
    run().WriteFile("two_connects.py", kTwoConnectsPy);
    origin_port_ = StartOrigin("origin");
    rogue_port_ = StartOrigin("rogue");  // its certificate is trusted by nobody
  }
  void TearDown() override {
    daemons_.clear();  // before the check that nothing of this scratch tree still runs
    NetworkTest::TearDown();
  }

  // An HTTPS origin for origin.test with a self-signed certificate tls/<name>-cert.pem.
  uint16_t StartOrigin(const std::string& name) {
    const std::string dir = run().Path("tls");
    ToolResult cert = RunTool(
        {openssl_, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
         "-nodes", "-subj", "/CN=origin.test", "-addext", "subjectAltName=DNS:origin.test", "-days",
         "2", "-keyout", dir + "/" + name + "-key.pem", "-out", dir + "/" + name + "-cert.pem"});
    EXPECT_EQ(cert.status, 0) << cert.output;
    const uint16_t port = FreeTcpPort();
    daemons_.push_back(std::make_unique<Daemon>(
        std::vector<std::string>{python_, run().Path("https_origin.py"), std::to_string(port),
                                 dir + "/" + name + "-cert.pem", dir + "/" + name + "-key.pem",
                                 dir + "/www"},
        dir));
    EXPECT_TRUE(WaitForTcp(port, std::chrono::seconds(10))) << daemons_.back()->log();
    return port;
  }

  std::string Https(uint16_t port, const std::string& path) const {
    return "https://origin.test:" + std::to_string(port) + path;
  }
  json Settings(const json& tls) const {
    json s = NetworkSettings({"origin.test", Carve(origin_port_), Carve(rogue_port_)});
    s["network"]["tlsTerminate"] = tls;
    return s;
  }
  json Trusting() { return {{"extraCaCertPaths", {run().Path("tls/origin-cert.pem")}}}; }

  std::string openssl_;
  std::string python_;
  uint16_t origin_port_ = 0;
  uint16_t rogue_port_ = 0;
  std::vector<std::unique_ptr<Daemon>> daemons_;
};

TEST_P(TlsTerminateTest, CurlAndPythonTrustSrtsCaAndEveryRequestIsLogged) {
  const std::string url = Https(origin_port_, "/hello?token=secret");
  RunResult r =
      Sh("curl -sS --max-time 10 '" + url +
             "' && python3 -c '"
             "import sys, urllib.request; "
             "print(urllib.request.urlopen(sys.argv[1], timeout=10).read().decode(), end=\"\")' " +
             Https(origin_port_, "/py") +
             " && test -r \"$SSL_CERT_FILE\" && "
             "test \"$REQUESTS_CA_BUNDLE\" = \"$SSL_CERT_FILE\" && "
             "grep -c 'BEGIN CERTIFICATE' \"$SSL_CERT_FILE\" >/dev/null",
         Settings(Trusting()));
  const std::string host = "host=origin.test:" + std::to_string(origin_port_);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "tls origin: GET /hello?token=secret " + host + "\ntls origin: GET /py " + host + "\n")
      << r.err;
  json rec = One({{"protocol", "https"}, {"path", "/hello"}});
  EXPECT_EQ(rec["method"], "GET");
  EXPECT_EQ(rec["status"], 200);
  EXPECT_EQ(rec["decision"], "allow");
  EXPECT_EQ(rec["host"], "origin.test");
  EXPECT_EQ(rec["address"], Carve(origin_port_));
  One({{"protocol", "https"}, {"path", "/py"}, {"status", 200}});
  EXPECT_FALSE(Contains(log_->log_text(), "secret"));
}

// Over a terminated, verified TLS connection a masked token is injected without
// allowPlaintextInject: the origin sees the real value in the header and the body, the sandbox
// only ever the sentinel (the origin's echo comes back masked), and the log counts it.
TEST_P(TlsTerminateTest, AMaskedTokenIsInjectedOverTerminatedTls) {
  const std::string real_token = RandomToken();
  json s = Settings(Trusting());
  s["credentials"] = {
      {"envVars",
       {{{"name", "GITHUB_TOKEN"}, {"mode", "mask"}, {"injectHosts", {"origin.test"}}}}}};
  const std::string log = run().Path("tls-cred.jsonl");
  RunResult r = run().SrtRaw(
      {"-s", run().SettingsFile(s.dump()), "--log-file", log, "-c",
       "printf '%s\\n' \"$GITHUB_TOKEN\"; curl -sS --max-time 10 -H \"Authorization: token "
       "$GITHUB_TOKEN\" --data \"t=$GITHUB_TOKEN\" " +
           Https(origin_port_, "/echo")},
      "", std::chrono::seconds(30), {"GITHUB_TOKEN=" + real_token});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::istringstream lines(r.out);
  std::string sentinel, echoed;
  std::getline(lines, sentinel);
  std::getline(lines, echoed);
  EXPECT_TRUE(sentinel.starts_with("fake_value_")) << r.out;
  EXPECT_EQ(echoed, "auth=token " + sentinel + " body=t=" + sentinel) << r.out;
  EXPECT_FALSE(Contains(r.out, real_token)) << r.out;
  EXPECT_EQ(run().ReadFile("tls/www/seen.txt"),
            "auth=token " + real_token + " body=t=" + real_token + "\n");
  const std::string log_text = run().ReadFile("tls-cred.jsonl");
  EXPECT_FALSE(Contains(log_text, real_token)) << log_text;
  EXPECT_TRUE(Contains(
      log_text, R"("credentials":[{"name":"env GITHUB_TOKEN","injected":2,"kept":0,"masked":2}])"))
      << log_text;
}

// An HTTPS origin that checks AWS SigV4 with the real key pair, computed here with hmac and
// hashlib (not srt's code): 200 "verified METHOD PATH" or 403 "bad signature". The pair comes
// in a file it deletes once read, so the sandbox finds it nowhere.
constexpr char kAwsOriginPy[] = R"(import hashlib, hmac, http.server, os, ssl, sys, urllib.parse
port, cert, key, pair_file = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
with open(pair_file) as f:
    akid, secret, token = f.read().split("\n")[:3]
os.unlink(pair_file)
def enc(s):
    return urllib.parse.quote(s, safe="-_.~")
def canonical_query(query):
    pairs = []
    for part in query.split("&"):
        if part:
            k, _, v = part.partition("=")
            pairs.append((enc(urllib.parse.unquote(k)), enc(urllib.parse.unquote(v))))
    return "&".join(k + "=" + v for k, v in sorted(pairs))
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def check(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        auth = self.headers.get("Authorization", "")
        fields = dict(p.strip().split("=", 1) for p in auth.split(" ", 1)[1].split(","))
        cred = fields["Credential"].split("/")
        signed = fields["SignedHeaders"].split(";")
        path, _, query = self.path.partition("?")
        lines = [self.command, path, canonical_query(query)]
        for h in signed:
            lines.append(h + ":" + ",".join(" ".join(v.split()) for v in self.headers.get_all(h, [])))
        body_hash = hashlib.sha256(body).hexdigest()
        payload = self.headers.get("X-Amz-Content-SHA256", body_hash)
        creq = "\n".join(lines) + "\n\n" + ";".join(signed) + "\n" + payload
        to_sign = "\n".join(["AWS4-HMAC-SHA256", self.headers["X-Amz-Date"], "/".join(cred[1:]),
                             hashlib.sha256(creq.encode()).hexdigest()])
        k = ("AWS4" + secret).encode()
        for part in cred[1:]:
            k = hmac.new(k, part.encode(), hashlib.sha256).digest()
        sig = hmac.new(k, to_sign.encode(), hashlib.sha256).hexdigest()
        return (cred[0] == akid and hmac.compare_digest(sig, fields["Signature"]) and
                self.headers.get("X-Amz-Security-Token") == token and
                "x-amz-security-token" in signed and payload in ("UNSIGNED-PAYLOAD", body_hash))
    def answer(self):
        try:
            ok = self.check()
        except Exception as e:
            ok = False
        body = (("verified " + self.command + " " + self.path.split("?")[0]) if ok
                else "bad signature").encode() + b"\n"
        self.send_response(200 if ok else 403)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    do_GET = do_PUT = do_POST = answer
    def log_message(self, *args):
        pass
srv = http.server.ThreadingHTTPServer(("127.0.0.1", port), H)
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(cert, key)
srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
srv.serve_forever()
)";

// The sandboxed client: botocore signs with the (masked) keys in its environment, urllib sends
// through srt's proxy. One line per request: name, status, the origin's (or srt's) answer.
constexpr char kAwsClientPy[] = R"(import os, sys, types, urllib.error, urllib.request
from botocore.auth import SigV4Auth, S3SigV4Auth, S3SigV4QueryAuth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
base = sys.argv[1]
creds = Credentials(os.environ["AWS_ACCESS_KEY_ID"], os.environ["AWS_SECRET_ACCESS_KEY"],
                    os.environ["AWS_SESSION_TOKEN"])
def send(name, req):
    r = urllib.request.Request(req.url, data=req.body or None, method=req.method,
                               headers=dict(req.headers.items()))
    try:
        with urllib.request.urlopen(r, timeout=20) as resp:
            print(name, resp.status, resp.read().decode().strip())
    except urllib.error.HTTPError as e:
        print(name, e.code, e.read().decode().strip().replace("\n", " "))
def s3(method, path, data=None, sign_payload=True):
    req = AWSRequest(method, base + path, data=data)
    req.context["client_config"] = types.SimpleNamespace(s3={"payload_signing_enabled": sign_payload})
    S3SigV4Auth(creds, "s3", "us-east-1").add_auth(req)
    return req
# The body's hash is signed, in no header: srt holds the body to hash it.
req = AWSRequest("POST", base + "/", data=b"Action=GetCallerIdentity&Version=2011-06-15",
                 headers={"Content-Type": "application/x-www-form-urlencoded; charset=utf-8"})
SigV4Auth(creds, "sts", "us-east-1").add_auth(req)
send("sts", req)
send("s3-put", s3("PUT", "/bucket/key.txt", b"an object's bytes"))
send("s3-get", s3("GET", "/bucket/key.txt?list-type=2&prefix=a%20b", sign_payload=False))
req = AWSRequest("GET", base + "/bucket/key.txt")
S3SigV4QueryAuth(creds, "s3", "us-east-1", expires=60).add_auth(req)
send("presigned", req)
req = s3("PUT", "/bucket/big", b"0;chunk-signature=00\r\n\r\n")
req.headers.replace_header("X-Amz-Content-SHA256", "STREAMING-AWS4-HMAC-SHA256-PAYLOAD")
send("streaming", req)
)";

// A botocore client in the sandbox signs with the masked AWS keys; srt re-signs each request
// with the real pair (and session token) over the terminated TLS connection, and an origin that
// checks SigV4 with the real secret accepts them: a signed body hash, a hex
// x-amz-content-sha256, UNSIGNED-PAYLOAD. Presigned and streaming requests are refused 403 with
// the reason under the default credentials.sigv4. The sandbox never sees a real value.
TEST_P(TlsTerminateTest, AwsRequestsAreResignedWithTheMaskedPair) {
  ToolResult boto = RunTool({python_, "-c", "import botocore"});
  if (boto.status != 0) {
    if (srt::testing::MustWork()) FAIL() << "python3-botocore missing: " << boto.output;
    GTEST_SKIP() << "python3-botocore missing";
  }
  const std::string akid = "AKIA" + RandomToken().substr(4, 16);
  const std::string secret = RandomToken();
  const std::string token = "IQoJb3JpZ2luX2VjE" + RandomToken() + RandomToken();
  run().WriteFile("tls/aws-pair", akid + "\n" + secret + "\n" + token + "\n");
  run().WriteFile("aws_origin.py", kAwsOriginPy);
  run().WriteFile("aws_client.py", kAwsClientPy);
  const std::string dir = run().Path("tls");
  const uint16_t port = FreeTcpPort();
  daemons_.push_back(std::make_unique<Daemon>(
      std::vector<std::string>{python_, run().Path("aws_origin.py"), std::to_string(port),
                               dir + "/origin-cert.pem", dir + "/origin-key.pem",
                               dir + "/aws-pair"},
      dir));
  ASSERT_TRUE(WaitForTcp(port, std::chrono::seconds(10))) << daemons_.back()->log();
  json s = NetworkSettings({"origin.test", Carve(port)});
  s["network"]["tlsTerminate"] = Trusting();
  s["credentials"] = {{"envVars",
                       {{{"name", "AWS_ACCESS_KEY_ID"}, {"mode", "mask"}},
                        {{"name", "AWS_SECRET_ACCESS_KEY"}, {"mode", "mask"}},
                        {{"name", "AWS_SESSION_TOKEN"}, {"mode", "mask"}}}}};
  const std::string log = run().Path("aws.jsonl");
  RunResult r =
      run().SrtRaw({"-s", run().SettingsFile(s.dump()), "--log-file", log, "-c",
                    python_ + " aws_client.py https://origin.test:" + std::to_string(port) +
                        "; env; cat /proc/*/environ; cat ./* tls/* 2>/dev/null; true"},
                   "", std::chrono::seconds(60),
                   {"AWS_ACCESS_KEY_ID=" + akid, "AWS_SECRET_ACCESS_KEY=" + secret,
                    "AWS_SESSION_TOKEN=" + token});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Contains(r.out, "sts 200 verified POST /\n")) << r.out << r.err;
  EXPECT_TRUE(Contains(r.out, "s3-put 200 verified PUT /bucket/key.txt\n")) << r.out;
  EXPECT_TRUE(Contains(r.out, "s3-get 200 verified GET /bucket/key.txt\n")) << r.out;
  EXPECT_TRUE(Contains(r.out, "presigned 403 ")) << r.out;
  EXPECT_TRUE(Contains(r.out, "Set credentials.sigv4.presigned to \"passthrough\"")) << r.out;
  EXPECT_TRUE(Contains(r.out, "streaming 403 ")) << r.out;
  EXPECT_TRUE(Contains(r.out, "Set credentials.sigv4.streaming to \"passthrough\"")) << r.out;
  EXPECT_TRUE(Contains(r.out, "AWS_ACCESS_KEY_ID=fake_value_")) << r.out;
  for (const std::string& real : {akid, secret, token}) {
    EXPECT_FALSE(Contains(r.out, real)) << r.out;
    EXPECT_FALSE(Contains(run().ReadFile("aws.jsonl"), real));
  }
  // The decision log: each refusal with its reason, the re-signing by the pair's name.
  std::vector<json> records;
  std::istringstream lines(run().ReadFile("aws.jsonl"));
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty()) records.push_back(json::parse(line));
  }
  auto find = [&](const std::string& method, int status) {
    for (const json& rec : records) {
      if (rec.value("protocol", "") == "https" && rec.value("method", "") == method &&
          rec.value("status", 0) == status) {
        return rec;
      }
    }
    return json::object();
  };
  json rec = find("GET", 403);
  EXPECT_EQ(rec.value("decision", ""), "deny") << rec.dump();
  EXPECT_TRUE(Contains(rec.value("reason", ""), "AWS SigV4 presigned request")) << rec.dump();
  rec = find("PUT", 403);
  EXPECT_TRUE(Contains(rec.value("reason", ""), "AWS SigV4 streaming request")) << rec.dump();
  rec = find("POST", 200);
  EXPECT_TRUE(Contains(
      rec.dump(), R"({"injected":1,"kept":0,"masked":0,"name":"sigv4 env AWS_ACCESS_KEY_ID"})"))
      << rec.dump();
}

TEST_P(TlsTerminateTest, NodeAndGitTrustSrtsCa) {
  // A bare repository served by the origin over git's dumb HTTP protocol.
  const std::string www = run().Path("tls/www");
  run().MakeDir("tls/www/src");
  const std::string git = FindTool({"/usr/bin/git"});
  if (git.empty()) GTEST_SKIP() << "git is not installed";
  for (const std::vector<std::string>& step : std::vector<std::vector<std::string>>{
           {git, "init", "-q", "-b", "main", "."},
           {"/bin/sh", "-c", "echo from-the-origin > README"},
           {git, "-c", "safe.directory=*", "add", "README"},
           {git, "-c", "safe.directory=*", "-c", "user.name=t", "-c", "user.email=t@t", "commit",
            "-qm", "one"},
           {git, "-c", "safe.directory=*", "clone", "-q", "--bare", www + "/src",
            www + "/repo.git"},
           {git, "-c", "safe.directory=*", "-C", www + "/repo.git", "update-server-info"}}) {
    ToolResult t = RunTool(step, www + "/src");
    ASSERT_EQ(t.status, 0) << t.output;
  }
  RunResult r = Sh("node node_connect.js " + Https(origin_port_, "/node") +
                       // Bare: srt refuses to let the sandbox create a .git directory.
                       " && git clone -q --bare " + Https(origin_port_, "/repo.git") +
                       " \"$TMPDIR/cloned.git\" && git --git-dir=\"$TMPDIR/cloned.git\" show "
                       "HEAD:README",
                   Settings(Trusting()));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "tls origin: GET /node host=origin.test:" + std::to_string(origin_port_) +
                       "\nfrom-the-origin\n")
      << r.err;
  One({{"protocol", "https"}, {"path", "/node"}, {"status", 200}});
  EXPECT_FALSE(log_->Matching({{"protocol", "https"}, {"path", "/repo.git/info/refs"}}).empty())
      << log_->log_text();
}

TEST_P(TlsTerminateTest, AnUntrustedOriginAndAMismatchedHostAreRefused) {
  RunResult r = Sh("curl -sS --max-time 10 -w '%{http_code}\\n' " + Https(rogue_port_, "/x") +
                       "; curl -sS --max-time 10 -w '%{http_code}\\n' -H 'Host: other.test' " +
                       Https(origin_port_, "/y"),
                   Settings(Trusting()));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Contains(r.out,
                       "TLS with origin.test: certificate verify failed: self-signed "
                       "certificate\n502\n"))
      << r.out;
  EXPECT_TRUE(Contains(r.out, "Host header does not match the request target\n421\n")) << r.out;
  json bad = One({{"protocol", "https"}, {"path", "/x"}});
  EXPECT_EQ(bad["status"], 502);
  EXPECT_TRUE(Contains(bad["error"].get<std::string>(), "certificate verify failed"));
  json misdirected = One({{"protocol", "https"}, {"path", "/y"}});
  EXPECT_EQ(misdirected["status"], 421);
  EXPECT_EQ(misdirected["decision"], "deny");
}

TEST_P(TlsTerminateTest, ExcludedDomainsStayOpaque) {
  // Trusting only the origin's own certificate works when the tunnel is opaque, and only then.
  const std::string cmd =
      "curl -sS --max-time 10 --cacert tls/origin-cert.pem " + Https(origin_port_, "/opaque");
  RunResult excluded = Sh(cmd, Settings({{"excludeDomains", {"origin.test"}}}));
  EXPECT_EQ(excluded.exit_code, 0) << excluded.err;
  EXPECT_EQ(excluded.out,
            "tls origin: GET /opaque host=origin.test:" + std::to_string(origin_port_) + "\n");
  One({{"protocol", "connect"}, {"host", "origin.test"}, {"decision", "allow"}});
  EXPECT_TRUE(log_->Matching({{"protocol", "https"}}).empty());
  RunResult terminated = Sh(cmd, Settings(Trusting()));
  EXPECT_EQ(terminated.exit_code, 60) << terminated.err;  // curl: the peer's certificate
}

// --control-fd: a new excludeDomains takes effect for the next connection (upstream-srt.md §2.2):
// the same curl, trusting only the origin's own certificate, fails while the tunnel is
// terminated and works once an update excludes the host.
TEST_P(TlsTerminateTest, ControlFdUpdatesExcludeDomainsForTheNextConnection) {
  int p[2];
  ASSERT_EQ(pipe2(p, O_CLOEXEC), 0);
  UniqueFd read_end(p[0]), write_end(p[1]);
  const std::string curl = "curl -sS --max-time 10 --cacert tls/origin-cert.pem " +
                           Https(origin_port_, "/opaque") + " >/dev/null 2>&1";
  const std::string script =
      curl + "; echo before=$?; : > step1; i=0; until " + curl +
      "; do i=$((i+1)); [ $i -gt 100 ] && { echo still-terminated; exit 4; }; sleep 0.05; done; "
      "echo excluded-after-update";
  pid_t pid = run().StartWithFds(Settings(Trusting()).dump(), {"--control-fd", "50", "-c", script},
                                 {{50, read_end.get()}});
  read_end.reset();
  ASSERT_TRUE(Eventually([&] { return run().Exists("step1"); }, std::chrono::seconds(20)))
      << run().Finish(pid).err;
  json tls = Trusting();
  tls["excludeDomains"] = {"origin.test"};
  const std::string line = Settings(tls).dump() + "\n";
  ASSERT_EQ(write(write_end.get(), line.data(), line.size()), static_cast<ssize_t>(line.size()));
  write_end.reset();
  RunResult r = run().Finish(pid);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "before=60\nexcluded-after-update\n") << r.err;
}

TEST_P(TlsTerminateTest, MaxTunnelsIsHonoured) {
  json tls = Trusting();
  tls["maxTunnels"] = 1;
  RunResult r =
      Sh("python3 two_connects.py origin.test:" + std::to_string(origin_port_), Settings(tls));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "HTTP/1.1 200 Connection Established\n"
            "HTTP/1.1 503 Service Unavailable|Content-Type: text/plain|X-Proxy-Error: "
            "too-many-tunnels|Connection: close|Content-Length: 39||too many TLS-terminated "
            "tunnels at once\n")
      << r.err;
}

TEST_P(TlsTerminateTest, ABadCaKeyFileStopsSrtBeforeTheCommand) {
  run().WriteFile("tls/ca.key", "not a key");
  ASSERT_EQ(chmod(run().Path("tls/ca.key").c_str(), 0644), 0);
  RunResult r = Sh("echo ran", Settings({{"caCertPath", run().Path("tls/origin-cert.pem")},
                                         {"caKeyPath", run().Path("tls/ca.key")}}));
  EXPECT_EQ(r.exit_code, 125) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_TRUE(Contains(r.err,
                       "has mode 0644: a CA key must not be accessible to group or "
                       "others (chmod 600 it)"))
      << r.err;
}

SRT_INSTANTIATE(TlsTerminateTest);

// --- Root only: services on privileged ports and an sshd for root ---------------------------

class NetworkRootTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!SandboxingWorks()) {
      if (srt::testing::MustWork()) FAIL() << "bwrap sandboxes do not work on this host";
      GTEST_SKIP() << "bwrap sandboxes do not work on this host (set SRT_MUST_WORK=1 to fail)";
    }
    SRT_REQUIRE_NETWORK_ENVIRONMENT();
    if (geteuid() != 0) GTEST_SKIP() << "needs root (binds port 443, runs sshd)";
    run_ = std::make_unique<Runner>(Identity::kRoot);
    log_ = std::make_unique<LoggedRun>(*run_);
  }
  void TearDown() override {
    if (run_) ExpectNothingLeftBehind(*run_);
  }
  // Skips for a missing tool, or fails under SRT_MUST_WORK=1.
  std::string Tool(const std::vector<std::string>& candidates) {
    std::string found = FindTool(candidates);
    if (found.empty()) {
      missing_ = candidates.front() + " is not installed";
    }
    return found;
  }
  std::string missing_;
  std::unique_ptr<Runner> run_;
  std::unique_ptr<LoggedRun> log_;
};

#define SRT_SKIP_IF_MISSING(test)                                                   \
  do {                                                                              \
    if (!(test)->missing_.empty()) {                                                \
      if (srt::testing::MustWork()) FAIL() << (test)->missing_;                     \
      GTEST_SKIP() << (test)->missing_ << " (set SRT_MUST_WORK=1 to fail instead)"; \
    }                                                                               \
  } while (0)

TEST_F(NetworkRootTest, TlsWithTheRightServerNameReachesAnOriginOn443) {
  const std::string openssl = Tool({"/usr/bin/openssl", "/bin/openssl"});
  SRT_SKIP_IF_MISSING(this);
  if (!TcpPortIsFree(443)) GTEST_SKIP() << "127.0.0.1:443 is in use on this host";
  Runner& run = *run_;
  run.MakeDir("tls");
  const std::string dir = run.Path("tls");
  ToolResult cert =
      RunTool({openssl, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
               "-nodes", "-subj", "/CN=origin.test", "-addext", "subjectAltName=DNS:origin.test",
               "-days", "2", "-keyout", dir + "/key.pem", "-out", dir + "/cert.pem"});
  ASSERT_EQ(cert.status, 0) << cert.output;
  // s_server -HTTP sends the file as is, so the file is the whole response.
  run.WriteFile("tls/hello.txt",
                "HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nhello over tls\n");
  Daemon server({openssl, "s_server", "-accept", "127.0.0.1:443", "-cert", dir + "/cert.pem",
                 "-key", dir + "/key.pem", "-HTTP", "-quiet"},
                dir);
  ASSERT_TRUE(WaitForTcp(443, std::chrono::seconds(5))) << server.log();
  json settings = NetworkSettings({"origin.test", "127.0.0.1:443"});
  RunResult r = log_->Sh(kCurl + std::string("--noproxy '*' --cacert tls/cert.pem "
                                             "https://origin.test/hello.txt"),
                         settings);
  EXPECT_EQ(r.exit_code, 0) << r.err << server.log();
  EXPECT_EQ(r.out, "hello over tls\n") << r.err;
  json rec = log_->One({{"protocol", "capture"}, {"host", "origin.test"}, {"port", 443}});
  EXPECT_EQ(rec["decision"], "allow");
  EXPECT_EQ(rec["address"], "127.0.0.1:443");
  EXPECT_GT(rec["bytes_down"].get<int64_t>(), 0);
}

TEST_F(NetworkRootTest, NodeFetchWithoutProxySupportIsTerminatedThroughCaptureOn443) {
  const std::string openssl = Tool({"/usr/bin/openssl", "/bin/openssl"});
  const std::string python = Tool({"/usr/bin/python3"});
  const std::string node = Tool({"/usr/bin/node", "/usr/local/bin/node"});
  SRT_SKIP_IF_MISSING(this);
  if (!TcpPortIsFree(443)) GTEST_SKIP() << "127.0.0.1:443 is in use on this host";
  Runner& run = *run_;
  run.MakeDir("tls");
  run.MakeDir("tls/www");
  const std::string dir = run.Path("tls");
  ToolResult cert =
      RunTool({openssl, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
               "-nodes", "-subj", "/CN=origin.test", "-addext", "subjectAltName=DNS:origin.test",
               "-days", "2", "-keyout", dir + "/key.pem", "-out", dir + "/cert.pem"});
  ASSERT_EQ(cert.status, 0) << cert.output;
  run.WriteFile("https_origin.py", kHttpsOriginPy);
  Daemon server({python, run.Path("https_origin.py"), "443", dir + "/cert.pem", dir + "/key.pem",
                 dir + "/www"},
                dir);
  ASSERT_TRUE(WaitForTcp(443, std::chrono::seconds(10))) << server.log();
  json settings = NetworkSettings({"origin.test", "127.0.0.1:443"});
  settings["network"]["tlsTerminate"] = {{"extraCaCertPaths", {dir + "/cert.pem"}}};
  // Node 20's fetch ignores the proxy variables: capture takes it to srt, which terminates it.
  RunResult r =
      log_->Sh(node +
                   " -e 'fetch(\"https://origin.test/node-fetch\").then(r => r.text())"
                   ".then(t => process.stdout.write(t), e => { console.log(String(e.cause || e)); "
                   "process.exit(1); })'",
               settings);
  EXPECT_EQ(r.exit_code, 0) << r.err << server.log();
  EXPECT_EQ(r.out, "tls origin: GET /node-fetch host=origin.test\n") << r.err;
  json rec = log_->One({{"protocol", "https"}, {"path", "/node-fetch"}});
  EXPECT_EQ(rec["status"], 200);
  EXPECT_EQ(rec["port"], 443);
}

// Two network namespaces joined by a veth pair, deleted at destruction: "srt" (11.0.0.1) runs
// srt, "origin" (11.0.0.2) runs what it reaches. 11.0.0.0/8 is public address space (no client
// calls it private), and nothing here can reach any host outside the two namespaces.
class TwoNamespaces {
 public:
  // `ip`: the ip(8) binary.
  explicit TwoNamespaces(std::string ip) : ip_(std::move(ip)) {
    const std::string tag = std::to_string(getpid());
    srt_ = "srt-it-srt-" + tag;
    origin_ = "srt-it-origin-" + tag;
    for (const std::vector<std::string>& step : std::vector<std::vector<std::string>>{
             {"netns", "add", srt_},
             {"netns", "add", origin_},
             {"-n", srt_, "link", "add", "veth-srt", "type", "veth", "peer", "name", "veth-origin",
              "netns", origin_},
             {"-n", srt_, "addr", "add", "11.0.0.1/24", "dev", "veth-srt"},
             {"-n", origin_, "addr", "add", "11.0.0.2/24", "dev", "veth-origin"},
             {"-n", srt_, "link", "set", "veth-srt", "up"},
             {"-n", origin_, "link", "set", "veth-origin", "up"},
             {"-n", srt_, "link", "set", "lo", "up"},
             {"-n", origin_, "link", "set", "lo", "up"}}) {
      std::vector<std::string> argv = step;
      argv.insert(argv.begin(), ip_);
      ToolResult r = RunTool(argv);
      if (r.status != 0) {
        problem_ = "ip " + step[0] + " " + step[1] + " ...: " + r.output;
        return;
      }
    }
  }
  ~TwoNamespaces() {
    (void)RunTool({ip_, "netns", "del", srt_});
    (void)RunTool({ip_, "netns", "del", origin_});
  }
  TwoNamespaces(const TwoNamespaces&) = delete;
  TwoNamespaces& operator=(const TwoNamespaces&) = delete;

  const std::string& problem() const { return problem_; }
  // argv run in the namespace.
  std::vector<std::string> InSrt(std::vector<std::string> argv) const { return In(srt_, argv); }
  std::vector<std::string> InOrigin(std::vector<std::string> argv) const {
    return In(origin_, argv);
  }

 private:
  std::vector<std::string> In(const std::string& ns, std::vector<std::string> argv) const {
    argv.insert(argv.begin(), {ip_, "netns", "exec", ns});
    return argv;
  }
  std::string ip_, srt_, origin_, problem_;
};

// A client that guards against SSRF, as MCP fetch servers do: it resolves the name itself,
// refuses a private address, then connects to the address it checked (no proxy).
constexpr char kSsrfGuardPy[] = R"(import http.client, ipaddress, socket, sys
host, port, path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
address = socket.getaddrinfo(host, port, socket.AF_INET, socket.SOCK_STREAM)[0][4][0]
if not ipaddress.ip_address(address).is_global:
    sys.exit("refused: %s resolves to a private address, %s" % (host, address))
c = http.client.HTTPConnection(address, port, timeout=5)
c.request("GET", path, headers={"Host": host})
print(address, c.getresponse().read().decode().strip())
)";

// Names the policy allows resolve to their real addresses inside, not to synthetic ones from
// 198.18.0.0/15, which SSRF-guarding clients refuse as private; capture still takes every
// connection to srt, which maps the address back to the name and decides by the name.
TEST_F(NetworkRootTest, AllowedNamesResolveToTheirRealPublicAddresses) {
  const std::string ip = Tool({"/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"});
  const std::string python = Tool({"/usr/bin/python3"});
  const std::string dnsmasq = Tool({"/usr/sbin/dnsmasq", "/sbin/dnsmasq"});
  const std::string openssl = Tool({"/usr/bin/openssl", "/bin/openssl"});
  SRT_SKIP_IF_MISSING(this);
  TwoNamespaces net(ip);
  ASSERT_EQ(net.problem(), "");
  Runner& run = *run_;
  run.MakeDir("www");
  const std::string www = run.Path("www");
  run.WriteFile("www/hello.txt", "hello from 11.0.0.2\n");
  run.WriteFile("ssrf_guard.py", kSsrfGuardPy);
  ToolResult cert = RunTool({openssl, "req", "-x509", "-newkey", "ec", "-pkeyopt",
                             "ec_paramgen_curve:prime256v1", "-nodes", "-subj", "/CN=cdn.test",
                             "-addext", "subjectAltName=DNS:cdn.test,DNS:public.test", "-days", "2",
                             "-keyout", www + "/key.pem", "-out", www + "/cert.pem"});
  ASSERT_EQ(cert.status, 0) << cert.output;
  run.WriteFile("www/tls.txt", "HTTP/1.0 200 OK\r\n\r\nhello over tls\n");
  // public.test and cdn.test share the origin's address (a CDN); other.test's address has no
  // host behind it; denied.test is not allowed.
  Daemon dns(
      net.InOrigin({dnsmasq, "--keep-in-foreground", "--no-resolv", "--no-hosts",
                    "--conf-file=/dev/null", "--listen-address=11.0.0.2", "--bind-interfaces",
                    "--port=53", "--address=/public.test/11.0.0.2", "--address=/cdn.test/11.0.0.2",
                    "--address=/other.test/11.0.0.3", "--address=/denied.test/11.0.0.2",
                    "--address=/loopback.test/127.0.0.1"}));
  Daemon web(net.InOrigin({python, "-m", "http.server", "--bind", "11.0.0.2", "80"}), www);
  Daemon tls(net.InOrigin({openssl, "s_server", "-accept", "11.0.0.2:443", "-cert",
                           www + "/cert.pem", "-key", www + "/key.pem", "-HTTP", "-quiet"}),
             www);
  for (int port : {80, 443}) {
    ASSERT_TRUE(Eventually([&] {
      return RunTool(net.InSrt({python, "-c",
                                "import socket; socket.create_connection(('11.0.0.2', " +
                                    std::to_string(port) + "), 1)"}))
                 .status == 0;
    })) << web.log()
        << tls.log();
  }

  json settings;
  settings["network"]["allowedDomains"] = {"public.test", "cdn.test", "other.test:443",
                                           "loopback.test"};
  settings["network"]["deniedDomains"] = json::array();
  settings["network"]["dnsServers"] = {"11.0.0.2:53"};
  const std::string log = run.Path("decisions.jsonl");
  RunResult r = run.Host(net.InSrt(
      {SrtBinary(), "-s", run.SettingsFile(settings.dump()), "--log-file", log, "-c",
       "getent ahostsv4 public.test | head -1; getent ahostsv4 loopback.test | head -1; "
       "python3 ssrf_guard.py public.test 80 /hello.txt; "
       "curl -sS --max-time 5 --noproxy '*' --cacert www/cert.pem https://cdn.test/tls.txt; "
       "python3 ssrf_guard.py other.test 80 / 2>/dev/null || echo other.test: refused; "
       "getent hosts denied.test || echo denied.test: no address"}));
  EXPECT_EQ(r.exit_code, 0) << r.err << dns.log() << web.log();
  const std::string& out = r.out;
  EXPECT_TRUE(Contains(out, "11.0.0.2        STREAM public.test\n")) << out;
  // A name whose address srt would refuse to dial still gets a synthetic one (its refusal then
  // comes with a reason in the log).
  EXPECT_TRUE(
      std::regex_search(out, std::regex(R"(\n198\.1[89]\.\d+\.\d+ +STREAM loopback\.test\n)")))
      << out;
  EXPECT_TRUE(Contains(out, "\n11.0.0.2 hello from 11.0.0.2\nhello over tls\n")) << out << r.err;
  // other.test is allowed on 443 only: on 80 its address is judged as itself, which nothing
  // allows, and the refusal names the name.
  EXPECT_TRUE(Contains(out, "\nother.test: refused\ndenied.test: no address\n")) << out;
  const std::string text = run.ReadFile("decisions.jsonl");
  std::vector<std::string> seen;
  for (const json& rec : LoggedRun::Parse(text)) {
    if (rec["protocol"] != "capture") continue;
    seen.push_back(rec["decision"].get<std::string>() + " " + rec["host"].get<std::string>() + ":" +
                   std::to_string(rec["port"].get<int>()));
  }
  // The TLS server name picks among the names sharing the address.
  EXPECT_EQ(seen, (std::vector<std::string>{"allow public.test:80", "allow cdn.test:443",
                                            "deny other.test:80"}))
      << text;
}

// With no network.dnsServers srt resolves through the host's resolv.conf, but never through its
// search list: an allowed name that does not exist (vault.ext.test, allowed by *.ext.test) must
// not be retried as vault.ext.test.corp.test, a name the policy does not allow, whose query would
// leave the host and whose address the sandbox would then be shown and sent to. And an allowed
// name whose address is a deniedDomains IP entry gets a synthetic address, like every name whose
// address srt would refuse to dial.
TEST_F(NetworkRootTest, NoSearchListAndNoDeniedAddressInAnswers) {
  const std::string ip = Tool({"/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"});
  const std::string python = Tool({"/usr/bin/python3"});
  const std::string dnsmasq = Tool({"/usr/sbin/dnsmasq", "/sbin/dnsmasq"});
  const std::string unshare = Tool({"/usr/bin/unshare", "/bin/unshare"});
  SRT_SKIP_IF_MISSING(this);
  TwoNamespaces net(ip);
  ASSERT_EQ(net.problem(), "");
  Runner& run = *run_;
  run.MakeDir("www");
  run.WriteFile("www/index.html", "origin 11.0.0.2\n");
  Daemon dns(net.InOrigin(
      {dnsmasq, "--keep-in-foreground", "--no-resolv", "--no-hosts", "--conf-file=/dev/null",
       "--listen-address=11.0.0.2", "--bind-interfaces", "--port=53", "--local=/ext.test/",
       "--address=/vault.ext.test.corp.test/11.0.0.2", "--address=/other.test/11.0.0.3"}));
  Daemon web(net.InOrigin({python, "-m", "http.server", "--bind", "11.0.0.2", "80"}),
             run.Path("www"));
  ASSERT_TRUE(Eventually([&] {
    return RunTool(net.InSrt({python, "-c",
                              "import socket; socket.create_connection(('11.0.0.2', 80), 1)"}))
               .status == 0;
  })) << web.log();
  // The host's resolver configuration, with a search list (as corporate and Kubernetes hosts
  // have), seen by srt through a mount namespace of the test's own.
  run.WriteFile("resolv.conf", "nameserver 11.0.0.2\nsearch corp.test\noptions ndots:5\n");
  json settings;
  settings["network"]["allowedDomains"] = {"*.ext.test", "other.test"};
  settings["network"]["deniedDomains"] = {"11.0.0.3"};
  const std::string script =
      "mount --bind " + run.Path("resolv.conf") + " /etc/resolv.conf && exec " + SrtBinary() +
      " -s " + run.SettingsFile(settings.dump()) +
      " -c 'getent ahostsv4 vault.ext.test | head -1 || true; echo vault: done; "
      "curl -sf -m 3 http://vault.ext.test/ || echo vault: refused; "
      "getent ahostsv4 other.test | head -1'";
  RunResult r = run.Host(net.InSrt({unshare, "-m", "sh", "-c", script}));
  EXPECT_EQ(r.exit_code, 0) << r.err << dns.log();
  EXPECT_TRUE(Contains(r.out, "vault: done\nvault: refused\n")) << r.out << r.err;
  EXPECT_FALSE(Contains(r.out, "origin 11.0.0.2")) << r.out;
  EXPECT_FALSE(Contains(r.out, "11.0.0.2 ")) << r.out;
  EXPECT_TRUE(
      std::regex_search(r.out, std::regex(R"(\n198\.1[89]\.\d+\.\d+ +STREAM other\.test\n)")))
      << r.out;
}

// git clone over ssh through srt's own GIT_SSH_COMMAND (srt-init connect -> CONNECT).
TEST_F(NetworkRootTest, GitCloneOverSshThroughTheProxy) {
  const std::string sshd = Tool({"/usr/sbin/sshd", "/sbin/sshd"});
  const std::string keygen = Tool({"/usr/bin/ssh-keygen", "/bin/ssh-keygen"});
  const std::string git = Tool({"/usr/bin/git", "/bin/git"});
  Tool({"/usr/bin/ssh", "/bin/ssh"});
  SRT_SKIP_IF_MISSING(this);
  Runner& run = *run_;
  run.MakeDir("ssh");
  const std::string dir = run.Path("ssh");
  for (const char* key : {"host_key", "client_key"}) {
    ToolResult made =
        RunTool({keygen, "-q", "-t", "ed25519", "-N", "", "-C", key, "-f", dir + "/" + key});
    ASSERT_EQ(made.status, 0) << made.output;
  }
  run.WriteFile("ssh/authorized_keys", run.ReadFile("ssh/client_key.pub"));
  const uint16_t port = FreeTcpPort();
  run.WriteFile("ssh/sshd_config", "Port " + std::to_string(port) +
                                       "\nListenAddress 127.0.0.1\nHostKey " + dir +
                                       "/host_key\nAuthorizedKeysFile " + dir +
                                       "/authorized_keys\nPidFile none\nUsePAM no\n"
                                       "StrictModes no\nPermitRootLogin prohibit-password\n"
                                       "PasswordAuthentication no\n"
                                       "KbdInteractiveAuthentication no\nLogLevel VERBOSE\n");
  // sshd insists on its privilege-separation directory.
  bool made_run_sshd = ::mkdir("/run/sshd", 0755) == 0;
  struct RemoveRunSshd {
    bool made;
    ~RemoveRunSshd() {
      if (made) ::rmdir("/run/sshd");
    }
  } remove_run_sshd{made_run_sshd};

  // The repository: one commit, cloned bare.
  const std::string src = run.Path("src");
  for (const std::vector<std::string>& step :
       {std::vector<std::string>{git, "init", "-q", src},
        {git, "-C", src, "-c", "user.name=srt", "-c", "user.email=srt@origin.test", "commit", "-q",
         "--allow-empty", "-m", "hello over ssh"},
        {git, "clone", "-q", "--bare", src, run.Path("repo.git")},
        // The user's own clone in the write root, which the sandbox fetches into.
        {git, "clone", "-q", run.Path("repo.git"), run.Path("work")},
        {git, "-C", src, "-c", "user.name=srt", "-c", "user.email=srt@origin.test", "commit", "-q",
         "--allow-empty", "-m", "second"},
        {git, "-C", src, "push", "-q", run.Path("repo.git"), "HEAD"}}) {
    ToolResult done = RunTool(step);
    ASSERT_EQ(done.status, 0) << step[1] << ": " << done.output;
  }

  Daemon server({sshd, "-D", "-e", "-f", dir + "/sshd_config"});
  ASSERT_TRUE(WaitForTcp(port, std::chrono::seconds(5))) << server.log();

  const std::string p = std::to_string(port);
  // srt's GIT_SSH_COMMAND with client options appended (ssh reads ~/.ssh from the passwd entry,
  // not $HOME, so a config file is no option).
  const std::string ssh_options =
      "GIT_SSH_COMMAND=\"$GIT_SSH_COMMAND -F /dev/null -i " + dir +
      "/client_key -o IdentitiesOnly=yes -o BatchMode=yes -o StrictHostKeyChecking=no "
      "-o UserKnownHostsFile=/dev/null -o LogLevel=ERROR\" ";
  json settings = NetworkSettings({"origin.test:" + p, "127.0.0.1:" + p});
  // A new clone goes to the private TMPDIR (a new repository in a write root is refused, see
  // persistence_test.cc); the user's clone in the write root fetches as usual.
  const std::string url = "ssh://root@origin.test:" + p + run.root() + "/repo.git";
  RunResult r = log_->Sh(ssh_options + "git clone -q " + url +
                             " \"$TMPDIR/clone\" && git -C \"$TMPDIR/clone\" log -1 --format=%s; " +
                             ssh_options + "git -C work fetch -q " + url +
                             " && git -C work log -1 --format=%s FETCH_HEAD; " + ssh_options +
                             "git ls-remote ssh://root@denied.test:" + p + run.root() +
                             "/repo.git; echo ls-remote=$?",
                         settings);
  EXPECT_EQ(r.exit_code, 0) << r.err << server.log();
  EXPECT_EQ(r.out, "second\nsecond\nls-remote=128\n") << r.err << server.log();
  EXPECT_TRUE(Contains(r.err, "srt-init connect: the proxy refused the tunnel: HTTP/1.1 403 " +
                                  std::string(kNotAllowed)))
      << r.err;
  std::vector<json> tunnels = log_->Matching({{"protocol", "connect"}, {"host", "origin.test"}});
  EXPECT_EQ(tunnels.size(), 2u) << log_->log_text();  // the clone and the fetch
  for (const json& rec : tunnels) {
    EXPECT_EQ(rec["decision"], "allow");
    EXPECT_EQ(rec["port"], port);
    EXPECT_EQ(rec["address"], "127.0.0.1:" + p);
    EXPECT_GT(rec["bytes_up"].get<int64_t>(), 0);
    EXPECT_GT(rec["bytes_down"].get<int64_t>(), 0);
  }
  EXPECT_EQ(log_->One({{"protocol", "connect"}, {"host", "denied.test"}})["decision"], "deny");
}

}  // namespace
}  // namespace srt::it
