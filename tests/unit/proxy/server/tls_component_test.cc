// SPDX-License-Identifier: Apache-2.0
// Component tests of TLS termination (network.tlsTerminate): a ProxyServer with a TlsEngine, an
// in-test HTTPS origin whose certificate comes from a CA the test makes (passed to the proxy as
// an extra CA), and curl as the client trusting the proxy's bundle. Covers the terminated
// exchange and its records, keep-alive, an untrusted origin (502 with the reason), Host and SNI
// mismatches (421), TRACE (405), excludeDomains and non-TLS tunnels (opaque), maxTunnels (503),
// the handshake timeout and the rewriter seam.
#include <gtest/gtest.h>
#include <malloc.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "mitm/certs.h"
#include "mitm/tls_engine.h"
#include "proxy_fixture.h"
#include "server/credential_rewriter.h"
#include "support/dnsmasq.h"

namespace srt::proxy::testing {
namespace {

constexpr const char* kCurl = "/usr/bin/curl";

std::string WriteTemp(const std::string& dir, const std::string& name, const std::string& text) {
  const std::string path = dir + "/" + name;
  std::ofstream(path) << text;
  return path;
}

// An HTTPS/1.1 origin on 127.0.0.1 with a leaf for `name` from its own CA. Each connection runs
// on a thread with blocking OpenSSL I/O (a 3 s receive timeout ends idle keep-alive
// connections, so Stop() never waits long). Answers "hello <path>" with X-Host and, echoed,
// X-Injected; records every request head.
class TlsOrigin {
 public:
  bool Start(const std::string& name) {
    Result<mitm::CaMaterial> ca = mitm::MakeEphemeralCa();
    Result<mitm::PkeyPtr> key = mitm::NewEcKey();
    if (!ca || !key) return false;
    Result<mitm::X509Ptr> leaf =
        mitm::MintLeaf(*ca, key->get(), name, false, std::chrono::hours(1));
    if (!leaf) return false;
    ca_pem_ = mitm::CertificatePem(ca->cert.get());
    ctx_.reset(SSL_CTX_new(TLS_server_method()));
    SSL_CTX_use_certificate(ctx_.get(), leaf->get());
    SSL_CTX_use_PrivateKey(ctx_.get(), key->get());
    return server_.Start("127.0.0.1", [this](Stream& s, int c) { Serve(s, c); });
  }
  void Stop() { server_.Stop(); }
  uint16_t port() const { return server_.port(); }
  int accepted() const { return server_.accepted(); }
  const std::string& ca_pem() const { return ca_pem_; }
  std::vector<std::string> heads() const {
    std::lock_guard<std::mutex> lock(mu_);
    return heads_;
  }
  std::vector<std::string> bodies() const {
    std::lock_guard<std::mutex> lock(mu_);
    return bodies_;
  }

 private:
  void Serve(Stream& stream, int) {
    timeval tv{3, 0};
    setsockopt(stream.fd(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    mitm::SslPtr ssl(SSL_new(ctx_.get()));
    SSL_set_fd(ssl.get(), stream.fd());
    if (SSL_accept(ssl.get()) != 1) {
      ERR_clear_error();  // e.g. a tunnel that never started TLS
      return;
    }
    std::string in;
    for (;;) {
      size_t end;
      while ((end = in.find("\r\n\r\n")) == std::string::npos) {
        char buf[4096];
        const int n = SSL_read(ssl.get(), buf, sizeof buf);
        if (n <= 0) return;
        in.append(buf, static_cast<size_t>(n));
      }
      std::string head = in.substr(0, end + 4);
      in.erase(0, end + 4);
      {
        std::lock_guard<std::mutex> lock(mu_);
        heads_.push_back(head);
      }
      const size_t sp = head.find(' ');
      std::string path = head.substr(sp + 1, head.find(' ', sp + 1) - sp - 1);
      auto header = [&](const std::string& name) -> std::string {
        const size_t at = head.find("\r\n" + name + ": ");
        if (at == std::string::npos) return "";
        const size_t from = at + name.size() + 4;
        return head.substr(from, head.find("\r\n", from) - from);
      };
      // A request body (Content-Length, or chunked without trailers) is read and counted.
      auto more = [&] {
        char buf[16384];
        const int n = SSL_read(ssl.get(), buf, sizeof buf);
        if (n <= 0) return false;
        in.append(buf, static_cast<size_t>(n));
        return true;
      };
      std::string request_body;
      if (header("Transfer-Encoding") == "chunked") {
        for (;;) {
          size_t eol;
          while ((eol = in.find("\r\n")) == std::string::npos) {
            if (!more()) return;
          }
          const size_t chunk = std::strtoull(in.c_str(), nullptr, 16);
          while (in.size() < eol + 2 + chunk + 2) {
            if (!more()) return;
          }
          request_body += in.substr(eol + 2, chunk);
          in.erase(0, eol + 2 + chunk + 2);
          if (chunk == 0) break;
        }
      } else {
        const size_t length = std::strtoull(header("Content-Length").c_str(), nullptr, 10);
        while (in.size() < length) {
          if (!more()) return;
        }
        request_body = in.substr(0, length);
        in.erase(0, length);
      }
      const size_t length = request_body.size();
      {
        std::lock_guard<std::mutex> lock(mu_);
        bodies_.push_back(request_body);
      }
      std::string body = "hello " + path;
      if (length > 0) body += " got " + std::to_string(length);
      if (path == "/echo") body = request_body;
      if (path.starts_with("/big/")) body.assign(std::strtoull(path.c_str() + 5, nullptr, 10), 'b');
      if (path == "/leak") {
        // The injected value echoed where a head has more than field values: an interim 103
        // head, the reason phrase, a field name.
        const std::string v = header("X-Injected");
        const std::string leak = "HTTP/1.1 103 Early Hints\r\nLink: <" + v +
                                 ">\r\n\r\nHTTP/1.1 200 " + v + "\r\n" + v +
                                 ": x\r\nContent-Length: 2\r\n\r\nok";
        if (SSL_write(ssl.get(), leak.data(), static_cast<int>(leak.size())) <= 0) return;
        continue;
      }
      const std::string response = "HTTP/1.1 200 OK\r\nX-Host: " + header("Host") +
                                   "\r\nX-Injected: " + header("X-Injected") +
                                   "\r\nContent-Length: " + std::to_string(body.size()) +
                                   "\r\n\r\n" + body;
      if (SSL_write(ssl.get(), response.data(), static_cast<int>(response.size())) <= 0) return;
    }
  }

  TcpServer server_;
  mitm::SslCtxPtr ctx_;
  std::string ca_pem_;
  mutable std::mutex mu_;
  std::vector<std::string> heads_;
  std::vector<std::string> bodies_;
};

class TlsTerminationTest : public ProxyComponentTest {
 protected:
  void SetUp() override {
    ProxyComponentTest::SetUp();
    if (!Executable(kCurl) && !srt::testing::MustWork()) GTEST_SKIP() << kCurl << " missing";
    char dir[] = "/tmp/srt-tls-test-XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    dir_ = dir;
    ASSERT_TRUE(tls_origin_.Start("origin.test"));
    ASSERT_TRUE(rogue_origin_.Start("origin.test"));  // its CA is trusted by nobody
    origin_ca_ = WriteTemp(dir_, "origin-ca.pem", tls_origin_.ca_pem());
  }
  void TearDown() override {
    ProxyComponentTest::TearDown();
    tls_origin_.Stop();
    rogue_origin_.Stop();
    if (!dir_.empty()) std::system(("rm -rf '" + dir_ + "'").c_str());
  }

  NetworkSettings Network() const {
    NetworkSettings n = DefaultNetwork();
    for (uint16_t port : {tls_origin_.port(), rogue_origin_.port()}) {
      n.allowed_domains.push_back("127.0.0.1:" + Port(port));
    }
    return n;
  }

  // Starts the proxy terminating TLS; the engine's bundle goes to bundle_.
  // network.tlsTerminate's live keys, as a settings document has them.
  NetworkSettings Terminating(size_t max_tunnels = 256,
                              std::chrono::milliseconds handshake = std::chrono::seconds(10),
                              std::vector<std::string> exclude = {}) const {
    NetworkSettings n = Network();
    TlsTerminateSettings tls;
    tls.exclude_domains = std::move(exclude);
    tls.max_tunnels = static_cast<uint32_t>(max_tunnels);
    tls.handshake_timeout_ms = static_cast<uint32_t>(handshake.count());
    n.tls_terminate = tls;
    return n;
  }

  // Starts the proxy terminating TLS; the engine's bundle goes to bundle_.
  void StartTerminating(size_t max_tunnels = 256,
                        std::chrono::milliseconds handshake = std::chrono::seconds(10),
                        std::vector<std::string> exclude = {}, RewriterFactory rewriter = {},
                        std::shared_ptr<const inject::Injector> injector = {}) {
    mitm::TlsEngine::Options engine_options;
    engine_options.extra_ca_cert_paths = {origin_ca_};
    Result<std::unique_ptr<mitm::TlsEngine>> engine = mitm::TlsEngine::Create(engine_options);
    ASSERT_TRUE(engine.has_value()) << engine.error().message();
    bundle_ = WriteTemp(dir_, "bundle.pem", (*engine)->trust_bundle());
    proxy_ca_ = WriteTemp(dir_, "proxy-ca.pem", (*engine)->ca_pem());
    ProxyOptions options = DefaultOptions();
    TlsTermination tls;
    tls.engine = std::move(*engine);
    options.tls = std::move(tls);
    options.rewriter = std::move(rewriter);
    options.injector = std::move(injector);
    if (tweak_options_) tweak_options_(options);
    StartProxy(Terminating(max_tunnels, handshake, std::move(exclude)), std::move(options));
  }

  std::string Url(uint16_t port, std::string_view path) const {
    return "https://origin.test:" + Port(port) + std::string(path);
  }
  ProcessResult Curl(std::vector<std::string> args) {
    std::vector<std::string> argv = {
        kCurl,       "-q",      "-sS",
        "--noproxy", "",        "--max-time",
        "30",        "--proxy", "http://srt:tok@127.0.0.1:" + Port(proxy_port_),
        "--cacert",  bundle_};
    argv.insert(argv.end(), args.begin(), args.end());
    return RunProcess(argv);
  }
  std::vector<ConnectionRecord> HttpsRecords(size_t n) {
    std::vector<ConnectionRecord> out;
    for (const ConnectionRecord& r : records_.WaitFor(n)) {
      if (r.protocol == Protocol::kHttps) out.push_back(r);
    }
    return out;
  }

  // Changes the options StartTerminating starts with (request filtering).
  std::function<void(ProxyOptions&)> tweak_options_;
  std::string dir_;
  std::string origin_ca_;
  std::string bundle_;
  std::string proxy_ca_;
  TlsOrigin tls_origin_;
  TlsOrigin rogue_origin_;
};

// Inside a terminated tunnel too, what the client's Connection names stays on its hop.
TEST_F(TlsTerminationTest, FieldsTheClientsConnectionNamesAreNotForwarded) {
  StartTerminating();
  const uint16_t port = tls_origin_.port();
  ProcessResult r = Curl({"-H", "Connection: keep-alive, X-Tag", "-H", "X-Tag: client", "-H",
                          "X-Custom: yes", Url(port, "/c")});
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  std::vector<std::string> heads = tls_origin_.heads();
  ASSERT_EQ(heads.size(), 1u);
  EXPECT_EQ(heads[0].find("X-Tag"), std::string::npos) << heads[0];
  EXPECT_NE(heads[0].find("\r\nX-Custom: yes\r\n"), std::string::npos) << heads[0];
  EXPECT_NE(heads[0].find("\r\nConnection: keep-alive\r\n"), std::string::npos) << heads[0];
}

TEST_F(TlsTerminationTest, CurlGetsTheOriginThroughATerminatedTunnelWithKeepAlive) {
  StartTerminating();
  const uint16_t port = tls_origin_.port();
  ProcessResult r = Curl(
      {"-D", "-", "--suppress-connect-headers", Url(port, "/one?secret=1"), Url(port, "/two")});
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  EXPECT_NE(r.out.find("hello /one?secret=1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("hello /two"), std::string::npos) << r.out;
  // The origin saw both requests, on one connection (keep-alive on both sides), with the
  // client's Host and no proxy credentials.
  EXPECT_EQ(tls_origin_.accepted(), 1);
  std::vector<std::string> heads = tls_origin_.heads();
  ASSERT_EQ(heads.size(), 2u);
  EXPECT_TRUE(heads[0].starts_with("GET /one?secret=1 HTTP/1.1\r\n")) << heads[0];
  EXPECT_NE(heads[0].find("\r\nHost: origin.test:" + Port(port) + "\r\n"), std::string::npos);
  EXPECT_EQ(heads[0].find("Proxy-Authorization"), std::string::npos);
  std::vector<ConnectionRecord> https = HttpsRecords(2);
  ASSERT_EQ(https.size(), 2u);
  EXPECT_EQ(https[0].method, "GET");
  EXPECT_EQ(https[0].path, "/one");  // no query: it may carry secrets
  EXPECT_EQ(https[0].status, 200);
  EXPECT_EQ(https[0].host, "origin.test");
  EXPECT_TRUE(https[0].allowed);
  EXPECT_EQ(https[1].path, "/two");
  const std::string json = FormatRecordJson(https[0], "s");
  EXPECT_NE(json.find("\"protocol\":\"https\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"method\":\"GET\",\"path\":\"/one\",\"status\":200}"), std::string::npos)
      << json;
}

TEST_F(TlsTerminationTest, AClientThatDoesNotTrustTheCaLeavesOneRecordForItsTunnel) {
  StartTerminating();
  ProcessResult r = Curl({"--cacert", origin_ca_, Url(tls_origin_.port(), "/never")});
  EXPECT_EQ(r.exit_code, 60) << r.Describe();  // curl: peer certificate cannot be authenticated
  std::vector<ConnectionRecord> records = records_.WaitFor(1);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].protocol, Protocol::kConnect);
  EXPECT_TRUE(records[0].allowed);
  EXPECT_EQ(records[0].end, "error");
  EXPECT_NE(records[0].error.find("TLS handshake with the client failed"), std::string::npos)
      << records[0].error;
  EXPECT_TRUE(tls_origin_.heads().empty());
}

TEST_F(TlsTerminationTest, LargeBodiesStreamBothWays) {
  StartTerminating();
  const std::string upload = dir_ + "/upload";
  std::ofstream(upload) << std::string(size_t{6} << 20, 'u');
  ProcessResult up = Curl({"--data-binary", "@" + upload, Url(tls_origin_.port(), "/up")});
  ASSERT_EQ(up.exit_code, 0) << up.Describe();
  EXPECT_EQ(up.out, "hello /up got 6291456");
  ProcessResult down =
      Curl({"-o", "/dev/null", "-w", "%{size_download}", Url(tls_origin_.port(), "/big/31457280")});
  ASSERT_EQ(down.exit_code, 0) << down.Describe();
  EXPECT_EQ(down.out, "31457280");
  std::vector<ConnectionRecord> https = HttpsRecords(2);
  ASSERT_EQ(https.size(), 2u);
  EXPECT_EQ(https[0].method, "POST");
  EXPECT_GT(https[0].bytes_up, uint64_t{6} << 20);
  EXPECT_GT(https[1].bytes_down, uint64_t{30} << 20);
}

// A blocking TLS client of the test's own (on `fd`, already connected or tunnelled), trusting
// the CA in `ca_file`, that GETs `path` from origin.test and reads the whole answer; the
// connection stays open (idle) until it is destroyed. (The proxy's CA alone, not its bundle: the
// system roots in every client's store would hold far more than what is measured.)
class IdleClient {
 public:
  IdleClient(UniqueFd fd, const std::string& ca_file) : fd_(std::move(fd)) {
    ctx_.reset(SSL_CTX_new(TLS_client_method()));
    SSL_CTX_load_verify_locations(ctx_.get(), ca_file.c_str(), nullptr);
    SSL_CTX_set_verify(ctx_.get(), SSL_VERIFY_PEER, nullptr);
    ssl_.reset(SSL_new(ctx_.get()));
    SSL_set_tlsext_host_name(ssl_.get(), "origin.test");
    SSL_set_fd(ssl_.get(), fd_.get());
  }
  // The body's size, or -1.
  long Get(uint16_t port, const std::string& path) {  // NOLINT(google-runtime-int)
    if (SSL_connect(ssl_.get()) != 1) return -1;
    const std::string req =
        "GET " + path + " HTTP/1.1\r\nHost: origin.test:" + Port(port) + "\r\n\r\n";
    if (SSL_write(ssl_.get(), req.data(), static_cast<int>(req.size())) <= 0) return -1;
    std::string in;
    size_t end;
    char buf[16384];
    while ((end = in.find("\r\n\r\n")) == std::string::npos) {
      const int n = SSL_read(ssl_.get(), buf, sizeof buf);
      if (n <= 0) return -1;
      in.append(buf, static_cast<size_t>(n));
    }
    const size_t at = in.find("Content-Length: ");
    if (at == std::string::npos) return -1;
    const size_t size = std::strtoull(in.c_str() + at + 16, nullptr, 10);
    size_t have = in.size() - end - 4;
    while (have < size) {
      const int n = SSL_read(ssl_.get(), buf, sizeof buf);
      if (n <= 0) return -1;
      have += static_cast<size_t>(n);
    }
    return static_cast<long>(size);  // NOLINT(google-runtime-int)
  }

 private:
  UniqueFd fd_;
  mitm::SslCtxPtr ctx_;
  mitm::SslPtr ssl_;
};

double HeapInUse() { return static_cast<double>(mallinfo2().uordblks); }

// Issue 11: an idle terminated tunnel costs the proxy at most 64 KiB, even after a response
// that filled its buffers. Measured as the heap held by N idle connections through the proxy
// minus N idle direct ones (the test's client and the origin hold the same in both).
TEST_F(TlsTerminationTest, AnIdleTerminatedTunnelHoldsAtMost64KiB) {
  StartTerminating();
  const uint16_t port = tls_origin_.port();
  constexpr int kTunnels = 8;
  const std::string big = "/big/" + std::to_string(size_t{1} << 20);
  auto held = [&](bool through_proxy) {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // earlier connections gone
    const double before = HeapInUse();
    std::vector<std::unique_ptr<IdleClient>> open;
    for (int i = 0; i < kTunnels; ++i) {
      UniqueFd fd;
      if (through_proxy) {
        Stream s = ConnectProxy();
        EXPECT_TRUE(OpenTunnel(s, "origin.test:" + Port(port)));
        fd.reset(dup(s.fd()));
      } else {
        fd = ConnectTcp("127.0.0.1", port);
      }
      open.push_back(
          std::make_unique<IdleClient>(std::move(fd), through_proxy ? proxy_ca_ : origin_ca_));
      EXPECT_EQ(open.back()->Get(port, big), 1 << 20);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the proxy goes idle
    return (HeapInUse() - before) / kTunnels;
  };
  const double direct = held(false);
  const double terminated = held(true);
  EXPECT_LE(terminated - direct, 64.0 * 1024)
      << "direct " << direct / 1024 << " KiB, terminated " << terminated / 1024 << " KiB";
}

TEST_F(TlsTerminationTest, Socks5TunnelsAreTerminatedToo) {
  StartTerminating();
  std::vector<std::string> argv = {
      kCurl,       "-q",      "-sS",
      "--noproxy", "",        "--max-time",
      "30",        "--proxy", "socks5h://srt:tok@127.0.0.1:" + Port(proxy_port_),
      "--cacert",  proxy_ca_, Url(tls_origin_.port(), "/socks")};
  ProcessResult r = RunProcess(argv);
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  EXPECT_EQ(r.out, "hello /socks");
  std::vector<ConnectionRecord> https = HttpsRecords(1);
  ASSERT_EQ(https.size(), 1u);
  EXPECT_EQ(https[0].path, "/socks");
}

TEST_F(TlsTerminationTest, AnOriginWithAnUntrustedCertificateIsRefusedWithTheReason) {
  StartTerminating();
  ProcessResult r =
      Curl({"-D", "-", "--suppress-connect-headers", Url(rogue_origin_.port(), "/x")});
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  EXPECT_TRUE(r.out.starts_with("HTTP/1.1 502 Bad Gateway\r\n")) << r.out;
  EXPECT_NE(r.out.find("certificate verify failed: unable to get local issuer certificate"),
            std::string::npos)
      << r.out;
  std::vector<ConnectionRecord> https = HttpsRecords(1);
  ASSERT_EQ(https.size(), 1u);
  EXPECT_EQ(https[0].status, 502);
  EXPECT_NE(https[0].error.find("certificate verify failed"), std::string::npos);
}

TEST_F(TlsTerminationTest, HostOrServerNameForAnotherHostIs421AndTraceIs405) {
  StartTerminating();
  const uint16_t port = tls_origin_.port();
  ProcessResult host =
      Curl({"-D", "-", "--suppress-connect-headers", "-H", "Host: other.test", Url(port, "/h")});
  ASSERT_EQ(host.exit_code, 0) << host.Describe();
  EXPECT_TRUE(host.out.starts_with("HTTP/1.1 421 Misdirected Request\r\n")) << host.out;
  EXPECT_NE(host.out.find("X-Proxy-Error: blocked-by-sandbox-runtime"), std::string::npos);
  EXPECT_NE(host.out.find("Host header does not match the request target\n"), std::string::npos);
  // SNI other.test through a CONNECT to origin.test: the leaf names origin.test (so -k), and
  // the request is refused.
  ProcessResult sni = Curl({"-k", "-D", "-", "--suppress-connect-headers", "--connect-to",
                            "other.test:" + Port(port) + ":origin.test:" + Port(port),
                            "https://other.test:" + Port(port) + "/s"});
  ASSERT_EQ(sni.exit_code, 0) << sni.Describe();
  EXPECT_TRUE(sni.out.starts_with("HTTP/1.1 421 Misdirected Request\r\n")) << sni.out;
  EXPECT_NE(sni.out.find("TLS server name does not match the request target\n"), std::string::npos);
  ProcessResult trace =
      Curl({"-D", "-", "--suppress-connect-headers", "-X", "TRACE", Url(port, "/t")});
  ASSERT_EQ(trace.exit_code, 0) << trace.Describe();
  EXPECT_TRUE(trace.out.starts_with("HTTP/1.1 405 Method Not Allowed\r\n")) << trace.out;
  EXPECT_NE(trace.out.find("the TRACE method is not forwarded\n"), std::string::npos);
  EXPECT_TRUE(tls_origin_.heads().empty());
  std::vector<ConnectionRecord> https = HttpsRecords(3);
  ASSERT_EQ(https.size(), 3u);
  EXPECT_EQ(https[0].status, 421);
  EXPECT_FALSE(https[0].allowed);
  EXPECT_EQ(https[0].reason, "Host header does not match the request target");
  EXPECT_EQ(https[2].status, 405);
}

TEST_F(TlsTerminationTest, ExcludedHostsAndNonTlsBytesStayOpaque) {
  StartTerminating(256, std::chrono::seconds(10), {"origin.test"});
  // The client sees the origin's own certificate: the proxy's CA does not verify it, the
  // origin's CA does.
  ProcessResult proxied = Curl({"--cacert", proxy_ca_, Url(tls_origin_.port(), "/x")});
  EXPECT_NE(proxied.exit_code, 0) << proxied.Describe();
  std::vector<std::string> argv = {
      kCurl,       "-q",       "-sS",
      "--noproxy", "",         "--max-time",
      "30",        "--proxy",  "http://srt:tok@127.0.0.1:" + Port(proxy_port_),
      "--cacert",  origin_ca_, Url(tls_origin_.port(), "/excluded")};
  ProcessResult direct = RunProcess(argv);
  ASSERT_EQ(direct.exit_code, 0) << direct.Describe();
  EXPECT_EQ(direct.out, "hello /excluded");

  // Non-TLS bytes after a CONNECT to a terminated host: an opaque tunnel.
  Stream client = ConnectProxy();
  ASSERT_TRUE(OpenTunnel(client, "echo.test:" + Port(echo_.port())));
  ASSERT_TRUE(client.SendAll("plain bytes"));
  EXPECT_EQ(client.ReadExactly(11), "plain bytes");
}

TEST_F(TlsTerminationTest, RefuseOpaqueTunnelsClosesATerminatedTunnelWithoutTls) {
  tweak_options_ = [](ProxyOptions& o) { o.refuse_opaque_tunnels = true; };
  StartTerminating();
  Stream client = ConnectProxy();
  ASSERT_TRUE(OpenTunnel(client, "echo.test:" + Port(echo_.port())));
  ASSERT_TRUE(client.SendAll("plain bytes"));
  EXPECT_TRUE(client.WaitClosed());
  EXPECT_EQ(client.buffer(), "");
  ExpectOnlyRecord(
      {.protocol = Protocol::kConnect,
       .host = "echo.test",
       .port = echo_.port(),
       .allowed = false,
       .reason = "tunnel carries no TLS and cannot be inspected (refuseOpaqueTunnels)"});
}

TEST_F(TlsTerminationTest, StripResponseHeadersDropsFoldedNamesFromTerminatedResponses) {
  tweak_options_ = [](ProxyOptions& o) { o.strip_response_headers = {"x-host"}; };
  StartTerminating();
  ProcessResult r = Curl({"-D", "-", "--suppress-connect-headers", Url(tls_origin_.port(), "/h")});
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  EXPECT_EQ(r.out.find("X-Host"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("hello /h"), std::string::npos) << r.out;
}

TEST_F(TlsTerminationTest, MaxTunnelsIsHonouredAndTheHandshakeIsBounded) {
  StartTerminating(/*max_tunnels=*/1, std::chrono::milliseconds(300));
  Stream first = ConnectProxy();
  ASSERT_TRUE(OpenTunnel(first, "origin.test:" + Port(tls_origin_.port())));
  Stream second = ConnectProxy();
  ASSERT_TRUE(second.SendAll("CONNECT origin.test:" + Port(tls_origin_.port()) + " HTTP/1.1\r\n" +
                             std::string(kAuthHeader) + "\r\n"));
  EXPECT_EQ(second.ReadToEnd(),
            "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\nX-Proxy-Error: "
            "too-many-tunnels\r\nConnection: close\r\nContent-Length: 39\r\n\r\ntoo many "
            "TLS-terminated tunnels at once");
  // The first never starts TLS: closed once the handshake time is up, and its slot is free.
  EXPECT_TRUE(first.WaitClosed());
  Stream third = ConnectProxy();
  EXPECT_TRUE(OpenTunnel(third, "origin.test:" + Port(tls_origin_.port())));
  std::vector<ConnectionRecord> records = records_.WaitFor(2);
  ASSERT_GE(records.size(), 2u);
  EXPECT_EQ(records[0].reason, "too many TLS-terminated tunnels at once");
  EXPECT_EQ(records[1].end, "idle");
  EXPECT_EQ(records[1].error, "TLS handshake not done in time");
}

// A live update (--control-fd) changes excludeDomains, maxTunnels and handshakeTimeoutMs for
// the next connection (upstream-srt.md §2.2); tunnels already open keep what they started with.
TEST_F(TlsTerminationTest, LiveUpdatesChangeExclusionsTheTunnelCapAndTheHandshakeTime) {
  StartTerminating();
  Stream first = ConnectProxy();
  ASSERT_TRUE(OpenTunnel(first, "origin.test:" + Port(tls_origin_.port())));

  UpdateRules(Terminating(/*max_tunnels=*/1, std::chrono::milliseconds(300)));
  Stream second = ConnectProxy();
  ASSERT_TRUE(second.SendAll("CONNECT origin.test:" + Port(tls_origin_.port()) + " HTTP/1.1\r\n" +
                             std::string(kAuthHeader) + "\r\n"));
  EXPECT_NE(second.ReadToEnd().find("too many TLS-terminated tunnels at once"), std::string::npos);
  // The first tunnel keeps the 10 s it was opened under.
  EXPECT_FALSE(first.WaitClosed(Clock::now() + std::chrono::seconds(1)));
  { Stream done = std::move(first); }

  UpdateRules(Terminating(256, std::chrono::milliseconds(300)));
  Stream third = ConnectProxy();
  ASSERT_TRUE(OpenTunnel(third, "origin.test:" + Port(tls_origin_.port())));
  EXPECT_TRUE(third.WaitClosed());

  // Excluded from now on: the client sees the origin's own certificate.
  UpdateRules(Terminating(256, std::chrono::seconds(10), {"origin.test"}));
  std::vector<std::string> argv = {
      kCurl,       "-q",       "-sS",
      "--noproxy", "",         "--max-time",
      "30",        "--proxy",  "http://srt:tok@127.0.0.1:" + Port(proxy_port_),
      "--cacert",  origin_ca_, Url(tls_origin_.port(), "/excluded")};
  ProcessResult direct = RunProcess(argv);
  EXPECT_EQ(direct.exit_code, 0) << direct.Describe();
  EXPECT_EQ(direct.out, "hello /excluded");
  // And terminated again once the exclusion is gone.
  UpdateRules(Terminating());
  ProcessResult terminated = Curl({Url(tls_origin_.port(), "/terminated")});
  EXPECT_EQ(terminated.exit_code, 0) << terminated.Describe();
  EXPECT_EQ(terminated.out, "hello /terminated");
}

class AddHeader final : public ExchangeRewriter {
 public:
  Result<void> OnRequestHead(RequestHead& head) override {
    if (head.target == "/refuse") return MakeError(Errc::kDenied, "refused by the rewriter");
    head.headers.push_back({"X-Injected", "secret-for-" + head.host});
    head.headers.push_back({"Host", "evil.test"});  // the proxy keeps the client's Host
    return Ok();
  }
  void OnResponseHead(ResponseHead& head) override {
    for (HeaderField& f : head.headers) {
      if (f.name == "X-Injected") f.value = "masked";
    }
  }
};

// Swaps a sentinel for a secret in request bodies and back in response bodies (what the
// credential injector will do), one piece at a time.
class Substitute final : public ExchangeRewriter {
 public:
  Result<void> OnRequestHead(RequestHead&) override { return Ok(); }
  void OnResponseHead(ResponseHead&) override {}
  bool RewritesBodies() const override { return true; }
  std::string OnRequestBody(std::string_view piece, bool) override {
    return Replace(piece, "SENTINEL", "secret-value-123");
  }
  std::string OnResponseBody(std::string_view piece, bool) override {
    return Replace(piece, "secret-value-123", "SENTINEL");
  }

 private:
  static std::string Replace(std::string_view in, std::string_view from, std::string_view to) {
    std::string out(in);
    for (size_t at = out.find(from); at != std::string::npos; at = out.find(from, at + to.size())) {
      out.replace(at, from.size(), to);
    }
    return out;
  }
};

TEST_F(TlsTerminationTest, ARewriterThatRewritesBodiesGetsThemDecodedAndReframed) {
  StartTerminating(256, std::chrono::seconds(10), {},
                   [](const RequestHead&) { return std::make_unique<Substitute>(); });
  ProcessResult plain = Curl({"-D", "-", "--suppress-connect-headers", "--data-binary",
                              "token=SENTINEL&x=1", Url(tls_origin_.port(), "/echo")});
  ASSERT_EQ(plain.exit_code, 0) << plain.Describe();
  EXPECT_NE(plain.out.find("Transfer-Encoding: chunked\r\n"), std::string::npos) << plain.out;
  EXPECT_TRUE(plain.out.ends_with("\r\n\r\ntoken=SENTINEL&x=1")) << plain.out;
  ProcessResult chunked = Curl({"-H", "Transfer-Encoding: chunked", "--data-binary", "a=SENTINEL",
                                Url(tls_origin_.port(), "/echo")});
  ASSERT_EQ(chunked.exit_code, 0) << chunked.Describe();
  EXPECT_EQ(chunked.out, "a=SENTINEL");
  std::vector<std::string> bodies = tls_origin_.bodies();
  ASSERT_EQ(bodies.size(), 2u);
  EXPECT_EQ(bodies[0], "token=secret-value-123&x=1");
  EXPECT_EQ(bodies[1], "a=secret-value-123");
  std::vector<std::string> heads = tls_origin_.heads();
  EXPECT_NE(heads[0].find("Transfer-Encoding: chunked\r\n"), std::string::npos) << heads[0];
  EXPECT_EQ(heads[0].find("Content-Length"), std::string::npos) << heads[0];
}

// A masked credential's real value echoed by the origin in any part of any response head (an
// interim 103, the reason phrase, a field name) reaches the client as the sentinel (a hostile
// review found only field values masked, and interim heads forwarded raw).
TEST_F(TlsTerminationTest, NoPartOfAResponseHeadCarriesARealValue) {
  const std::string sentinel = "fake_value_0123456789abcdefghijklmnopqrstu";
  const std::string real = "ghp_REALrealREALrealREALrealREALrealREALre";
  std::shared_ptr<const inject::Injector> injector = inject::Injector::Build(
      {{"env T", sentinel, real, {*ParseDomainPattern("origin.test", PatternList::kAllow)}}});
  StartTerminating(256, std::chrono::seconds(10), {}, CredentialRewriterFactory(injector),
                   injector);
  ProcessResult r = Curl({"-D", "-", "--suppress-connect-headers", "-H", "X-Injected: " + sentinel,
                          Url(tls_origin_.port(), "/leak")});
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  std::vector<std::string> heads = tls_origin_.heads();
  ASSERT_EQ(heads.size(), 1u);
  EXPECT_NE(heads[0].find("X-Injected: " + real), std::string::npos) << heads[0];  // injected
  EXPECT_EQ(r.out.find(real), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("HTTP/1.1 200 " + sentinel + "\r\n"), std::string::npos) << r.out;
}

TEST_F(TlsTerminationTest, TheRewriterSeamSeesEveryRequestAndResponseHead) {
  StartTerminating(256, std::chrono::seconds(10), {},
                   [](const RequestHead&) { return std::make_unique<AddHeader>(); });
  ProcessResult r = Curl({"-D", "-", "--suppress-connect-headers", Url(tls_origin_.port(), "/r")});
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  std::vector<std::string> heads = tls_origin_.heads();
  ASSERT_EQ(heads.size(), 1u);
  EXPECT_NE(heads[0].find("\r\nX-Injected: secret-for-origin.test\r\n"), std::string::npos)
      << heads[0];
  EXPECT_EQ(heads[0].find("evil.test"), std::string::npos) << heads[0];
  EXPECT_NE(r.out.find("X-Injected: masked\r\n"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("secret-for"), std::string::npos) << r.out;
  ProcessResult refused =
      Curl({"-D", "-", "--suppress-connect-headers", Url(tls_origin_.port(), "/refuse")});
  EXPECT_TRUE(refused.out.starts_with("HTTP/1.1 403 Forbidden\r\n")) << refused.out;
  EXPECT_NE(refused.out.find("refused by the rewriter\n"), std::string::npos);
}

// Holds the request body (at most 32 bytes) and signs it into the head, as the SigV4 re-signer
// does with a body's hash; swaps a sentinel in the body on the way.
class HoldBody final : public ExchangeRewriter {
 public:
  Result<void> OnRequestHead(RequestHead&) override { return Ok(); }
  void OnResponseHead(ResponseHead&) override {}
  bool RewritesBodies() const override { return true; }
  uint64_t HoldsRequestBody() const override { return 32; }
  Result<void> OnRequestBodyHeld(RequestHead& head, std::string_view body) override {
    if (body == "refuse") return MakeError(Errc::kDenied, "refused with the body in");
    std::string length;
    for (const HeaderField& f : head.headers) {
      if (f.name == "Content-Length") length = f.value;
    }
    head.headers.push_back({"X-Held", std::string(body) + " length=" + length});
    return Ok();
  }
  std::string HeldBodyTooLarge() const override { return "held body over 32 bytes"; }
  std::string OnRequestBody(std::string_view piece, bool) override {
    std::string out(piece);
    if (size_t at = out.find("SENTINEL"); at != std::string::npos) out.replace(at, 8, "SECRET");
    return out;
  }
};

// A rewriter that holds the body gets it whole (decoded, through OnRequestBody) before the head
// goes out, and the body goes with a Content-Length; a request without a body is finished at
// once; past the limit the request is refused 403 with the rewriter's reason and not sent.
TEST_F(TlsTerminationTest, ARewriterCanHoldTheRequestBodyBeforeTheHead) {
  StartTerminating(256, std::chrono::seconds(10), {},
                   [](const RequestHead&) { return std::make_unique<HoldBody>(); });
  ProcessResult chunked = Curl({"-H", "Transfer-Encoding: chunked", "--data-binary",
                                "a=SENTINEL&b=1", Url(tls_origin_.port(), "/echo")});
  ASSERT_EQ(chunked.exit_code, 0) << chunked.Describe();
  ProcessResult get = Curl({Url(tls_origin_.port(), "/get")});
  ASSERT_EQ(get.exit_code, 0) << get.Describe();
  // A client that waits for 100 Continue gets it from the proxy (curl's max-time, 30 s, would
  // end the wait first otherwise).
  ProcessResult expect = Curl({"-H", "Expect: 100-continue", "--expect100-timeout", "60",
                               "--data-binary", "c=SENTINEL", Url(tls_origin_.port(), "/echo")});
  ASSERT_EQ(expect.exit_code, 0) << expect.Describe();
  EXPECT_EQ(expect.out, "c=SECRET");
  std::vector<std::string> heads = tls_origin_.heads();
  ASSERT_EQ(heads.size(), 3u);
  EXPECT_NE(heads[0].find("\r\nContent-Length: 12\r\n"), std::string::npos) << heads[0];
  EXPECT_EQ(heads[0].find("Transfer-Encoding"), std::string::npos) << heads[0];
  EXPECT_NE(heads[0].find("\r\nX-Held: a=SECRET&b=1 length=12\r\n"), std::string::npos) << heads[0];
  EXPECT_NE(heads[1].find("\r\nX-Held:  length=\r\n"), std::string::npos) << heads[1];
  EXPECT_EQ(heads[1].find("Content-Length"), std::string::npos) << heads[1];
  ASSERT_EQ(tls_origin_.bodies().size(), 3u);
  EXPECT_EQ(tls_origin_.bodies()[0], "a=SECRET&b=1");

  ProcessResult large = Curl({"-D", "-", "--suppress-connect-headers", "--data-binary",
                              std::string(40, 'x'), Url(tls_origin_.port(), "/echo")});
  EXPECT_TRUE(large.out.starts_with("HTTP/1.1 403 Forbidden\r\n")) << large.Describe();
  EXPECT_NE(large.out.find("held body over 32 bytes"), std::string::npos) << large.out;
  ProcessResult refused = Curl({"-D", "-", "--suppress-connect-headers", "--data-binary", "refuse",
                                Url(tls_origin_.port(), "/echo")});
  EXPECT_TRUE(refused.out.starts_with("HTTP/1.1 403 Forbidden\r\n")) << refused.Describe();
  EXPECT_NE(refused.out.find("refused with the body in"), std::string::npos) << refused.out;
  EXPECT_EQ(tls_origin_.heads().size(), 3u);
  bool logged = false;
  for (const ConnectionRecord& r : HttpsRecords(5)) {
    logged = logged || (r.status == 403 && r.reason == "held body over 32 bytes");
  }
  EXPECT_TRUE(logged);
}

}  // namespace
}  // namespace srt::proxy::testing
