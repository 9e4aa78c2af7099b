// SPDX-License-Identifier: Apache-2.0
// support/dnsmasq.h: a real dnsmasq on 127.0.0.1:<free port> for tests that want a DNS server
// that is not ours (the mock DNS server shares our assumptions; dnsmasq does not).
//
// Usage:
//   auto dns = srt::testing::Dnsmasq::Start({.args = {"--address=/test.example/127.0.0.2"}});
//   if (!dns && dns.error().code() == srt::Errc::kNotFound && !srt::testing::MustWork())
//     GTEST_SKIP() << dns.error().message();
//   ASSERT_TRUE(dns.has_value()) << dns.error().message();
//   options.servers = {(*dns)->address()};
//
// dnsmasq runs in the foreground as our child, with no configuration file, no resolv.conf, no
// /etc/hosts, no pid file and no upstream server, answering only what `args` say; it logs to a
// memfd (log()). Start() returns once it answers a query. The destructor stops it by pid
// (SIGTERM, then SIGKILL after 2 s) and reaps it; if the test process dies first, the kernel
// sends dnsmasq SIGTERM (PR_SET_PDEATHSIG; it tracks the thread that called Start(), so start
// it from the test's main thread). Nothing is left behind on disk.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/address.h"
#include "base/unique_fd.h"
#include "srt/result.h"

namespace srt::testing {

// True when SRT_MUST_WORK=1: a missing dnsmasq then fails tests instead of skipping them.
[[nodiscard]] bool MustWork();

class Dnsmasq {
 public:
  struct Options {
    // Extra dnsmasq options, e.g. "--address=/test.example/127.0.0.2", "--local=/example/".
    std::vector<std::string> args;
    // How long dnsmasq has to answer its first query.
    std::chrono::milliseconds startup_timeout{5000};
    // The binary; empty: "dnsmasq" from PATH, then /usr/sbin and /sbin.
    std::string binary;
  };

  // The dnsmasq binary that Start() would run, if any.
  [[nodiscard]] static std::optional<std::string> Find(const std::string& binary = {});
  // Errc::kNotFound if dnsmasq is not installed (skip); anything else is a real failure and its
  // message ends with dnsmasq's own log.
  [[nodiscard]] static Result<std::unique_ptr<Dnsmasq>> Start(const Options& options);
  ~Dnsmasq();
  Dnsmasq(const Dnsmasq&) = delete;
  Dnsmasq& operator=(const Dnsmasq&) = delete;

  [[nodiscard]] uint16_t port() const { return port_; }
  // "127.0.0.1:<port>", the form ResolverOptions::servers takes.
  [[nodiscard]] std::string address() const;
  // The same, for ResolverOptions::servers.
  [[nodiscard]] Endpoint endpoint() const;
  [[nodiscard]] pid_t pid() const { return pid_; }
  // What dnsmasq wrote to stdout and stderr so far.
  [[nodiscard]] std::string log() const;

 private:
  Dnsmasq(pid_t pid, uint16_t port, UniqueFd log) : pid_(pid), port_(port), log_(std::move(log)) {}
  void Stop();

  pid_t pid_;
  uint16_t port_;
  UniqueFd log_;  // memfd shared with the child's stdout/stderr
};

}  // namespace srt::testing
