// SPDX-License-Identifier: Apache-2.0
// mock_dns_server.cc: the mock DNS server's wire handling (RFC 1035 §4) and its poll(2) thread.
#include "mock_dns_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <list>
#include <optional>

#include "base/address.h"

namespace srt::proxy::testing {
namespace {

using Clock = std::chrono::steady_clock;

constexpr uint16_t kTypeA = 1;
constexpr uint16_t kTypeAaaa = 28;
constexpr uint16_t kTypeOpt = 41;  // RFC 6891 §6.1.1
constexpr size_t kHeaderBytes = 12;
constexpr size_t kClassicUdpLimit = 512;  // RFC 1035 §4.2.1

std::string Key(std::string_view name) {
  std::string key(name);
  if (!key.empty() && key.back() == '.') {
    key.pop_back();
  }
  for (char& c : key) {
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return key;
}

uint16_t Get16(std::string_view s, size_t at) {
  return static_cast<uint16_t>((static_cast<uint8_t>(s[at]) << 8) |
                               static_cast<uint8_t>(s[at + 1]));
}

void Put16(std::string& out, uint16_t v) {
  out.push_back(static_cast<char>(v >> 8));
  out.push_back(static_cast<char>(v & 0xff));
}

void Put32(std::string& out, uint32_t v) {
  Put16(out, static_cast<uint16_t>(v >> 16));
  Put16(out, static_cast<uint16_t>(v & 0xffff));
}

struct Query {
  uint16_t id = 0;
  uint16_t flags = 0;
  std::string name;      // dotted, lower-case, no trailing dot
  std::string question;  // QNAME QTYPE QCLASS as received, echoed back verbatim
  uint16_t qtype = 0;
  size_t udp_limit = kClassicUdpLimit;
};

// Bounds-checked parse of a query with exactly one question (RFC 1035 §4.1.1, §4.1.2) and an
// optional OPT record (RFC 6891 §6.1.2: its CLASS is the requestor's UDP payload size).
std::optional<Query> ParseQuery(std::string_view msg) {
  if (msg.size() < kHeaderBytes) {
    return std::nullopt;
  }
  Query q;
  q.id = Get16(msg, 0);
  q.flags = Get16(msg, 2);
  if (Get16(msg, 4) != 1) {
    return std::nullopt;
  }
  size_t pos = kHeaderBytes;
  std::string name;
  while (true) {
    if (pos >= msg.size()) {
      return std::nullopt;
    }
    auto len = static_cast<uint8_t>(msg[pos]);
    if (len == 0) {
      ++pos;
      break;
    }
    if (len > 63 || pos + 1 + len > msg.size()) {
      return std::nullopt;  // no compression in questions we send; no oversize labels
    }
    if (!name.empty()) {
      name.push_back('.');
    }
    name.append(msg.substr(pos + 1, len));
    pos += 1 + len;
  }
  if (pos + 4 > msg.size()) {
    return std::nullopt;
  }
  q.qtype = Get16(msg, pos);
  q.question = std::string(msg.substr(kHeaderBytes, pos + 4 - kHeaderBytes));
  q.name = Key(name);
  pos += 4;
  // Additional section: c-ares with ARES_FLAG_EDNS sends one OPT RR with an empty name.
  if (Get16(msg, 10) >= 1 && pos + 11 <= msg.size() && msg[pos] == '\0' &&
      Get16(msg, pos + 1) == kTypeOpt) {
    q.udp_limit = std::max<size_t>(kClassicUdpLimit, Get16(msg, pos + 3));
  }
  return q;
}

std::string BuildReply(const Query& q, const MockDnsReply& r, bool over_tcp) {
  uint16_t rcode = 0;
  switch (r.kind) {
    case MockDnsReply::Kind::kServFail:
      rcode = 2;
      break;
    case MockDnsReply::Kind::kNxDomain:
      rcode = 3;
      break;
    case MockDnsReply::Kind::kRefused:
      rcode = 5;
      break;
    default:
      break;
  }
  std::vector<std::string> rdatas;
  const std::vector<std::string>* records = q.qtype == kTypeA      ? &r.a
                                            : q.qtype == kTypeAaaa ? &r.aaaa
                                                                   : nullptr;
  if (rcode == 0 && records != nullptr && (over_tcp || r.kind != MockDnsReply::Kind::kTruncate)) {
    for (const std::string& text : *records) {
      auto ip = ParseIpAddress(text);
      if (!ip) {
        continue;
      }
      rdatas.emplace_back(reinterpret_cast<const char*>(ip->bytes.data()),
                          ip->family == IpAddress::Family::kIpv4 ? 4 : 16);
    }
  }
  auto header = [&](bool truncated, size_t answers) {
    std::string h;
    Put16(h, q.id);
    // QR=1, opcode echoed, AA=1, TC, RD echoed, RA=1, RCODE.
    uint16_t flags =
        static_cast<uint16_t>(0x8000 | (q.flags & 0x7800) | 0x0400 | (truncated ? 0x0200 : 0) |
                              (q.flags & 0x0100) | 0x0080 | rcode);
    Put16(h, flags);
    Put16(h, 1);
    Put16(h, static_cast<uint16_t>(answers));
    Put16(h, 0);
    Put16(h, 0);
    return h;
  };
  std::string body = q.question;
  for (const std::string& rdata : rdatas) {
    Put16(body, 0xc000 | kHeaderBytes);  // RFC 1035 §4.1.4: pointer to the question's name
    Put16(body, q.qtype);
    Put16(body, 1);   // IN
    Put32(body, 60);  // TTL
    Put16(body, static_cast<uint16_t>(rdata.size()));
    body += rdata;
  }
  std::string msg = header(false, rdatas.size()) + body;
  bool truncate =
      !over_tcp && (r.kind == MockDnsReply::Kind::kTruncate || msg.size() > q.udp_limit);
  if (truncate) {
    msg = header(true, 0) + q.question;
  }
  return msg;
}

struct TcpConn {
  uint64_t serial;
  UniqueFd fd;
  std::string in;
  std::string out;
};

struct Delayed {
  Clock::time_point due;
  std::string bytes;
  bool tcp;
  sockaddr_in peer;   // UDP
  uint64_t conn = 0;  // TCP
};

}  // namespace

Result<std::unique_ptr<MockDnsServer>> MockDnsServer::Start() {
  for (int attempt = 0; attempt < 20; ++attempt) {
    UniqueFd udp(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    if (!udp) {
      return SysError("socket(UDP)");
    }
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::bind(udp.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
      return SysError("bind(UDP 127.0.0.1:0)");
    }
    socklen_t len = sizeof(addr);
    if (::getsockname(udp.get(), reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      return SysError("getsockname");
    }
    UniqueFd tcp(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    if (!tcp) {
      return SysError("socket(TCP)");
    }
    int one = 1;
    ::setsockopt(tcp.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (::bind(tcp.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
      if (errno == EADDRINUSE) {
        continue;  // the UDP port's TCP twin is taken; try another port
      }
      return SysError("bind(TCP)");
    }
    if (::listen(tcp.get(), 64) != 0) {
      return SysError("listen");
    }
    UniqueFd stop(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
    if (!stop) {
      return SysError("eventfd");
    }
    std::unique_ptr<MockDnsServer> server(
        new MockDnsServer(std::move(udp), std::move(tcp), std::move(stop), ntohs(addr.sin_port)));
    server->thread_ = std::thread([s = server.get()] { s->Serve(); });
    return server;
  }
  return MakeError(Errc::kSystem, "MockDnsServer: no free port for both UDP and TCP");
}

MockDnsServer::MockDnsServer(UniqueFd udp, UniqueFd tcp, UniqueFd stop, uint16_t port)
    : udp_(std::move(udp)), tcp_(std::move(tcp)), stop_(std::move(stop)), port_(port) {
  default_.kind = MockDnsReply::Kind::kNxDomain;
}

MockDnsServer::~MockDnsServer() {
  uint64_t one = 1;
  [[maybe_unused]] ssize_t n = ::write(stop_.get(), &one, sizeof(one));
  if (thread_.joinable()) {
    thread_.join();
  }
}

Endpoint MockDnsServer::endpoint() const { return Endpoint{*ParseIpv4("127.0.0.1"), port_}; }

void MockDnsServer::Set(std::string_view name, MockDnsReply reply) {
  MutexLock lock(mu_);
  table_[Key(name)] = std::move(reply);
}

void MockDnsServer::SetDefault(MockDnsReply reply) {
  MutexLock lock(mu_);
  default_ = std::move(reply);
}

size_t MockDnsServer::queries(std::string_view name) const {
  MutexLock lock(mu_);
  auto it = counts_.find(Key(name));
  return it == counts_.end() ? 0 : it->second;
}

size_t MockDnsServer::total_queries() const {
  MutexLock lock(mu_);
  return total_;
}

size_t MockDnsServer::tcp_queries() const {
  MutexLock lock(mu_);
  return tcp_total_;
}

bool MockDnsServer::WaitForQueries(size_t n, std::chrono::milliseconds timeout) const {
  auto deadline = Clock::now() + timeout;
  while (total_queries() < n) {
    if (Clock::now() >= deadline) {
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

MockDnsServer::Planned MockDnsServer::Plan(std::string_view bytes, bool over_tcp) {
  auto q = ParseQuery(bytes);
  if (!q) {
    return {};  // not worth a FORMERR: tests only send what c-ares sends
  }
  MockDnsReply reply;
  {
    MutexLock lock(mu_);
    ++total_;
    if (over_tcp) {
      ++tcp_total_;
    }
    ++counts_[q->name];
    auto it = table_.find(q->name);
    reply = it != table_.end() ? it->second : default_;
  }
  if (reply.kind == MockDnsReply::Kind::kDrop) {
    return {};
  }
  return Planned{true, BuildReply(*q, reply, over_tcp), reply.delay};
}

void MockDnsServer::Serve() {
  std::list<TcpConn> conns;
  std::vector<Delayed> delayed;
  uint64_t next_serial = 1;

  auto tcp_send = [&](uint64_t serial, const std::string& msg) {
    for (TcpConn& c : conns) {
      if (c.serial == serial) {
        Put16(c.out, static_cast<uint16_t>(msg.size()));  // RFC 1035 §4.2.2 length prefix
        c.out += msg;
        return;
      }
    }
  };

  while (true) {
    std::vector<pollfd> pfds;
    pfds.push_back({stop_.get(), POLLIN, 0});
    pfds.push_back({udp_.get(), POLLIN, 0});
    pfds.push_back({tcp_.get(), POLLIN, 0});
    for (TcpConn& c : conns) {
      pfds.push_back({c.fd.get(), static_cast<short>(POLLIN | (c.out.empty() ? 0 : POLLOUT)), 0});
    }
    int timeout_ms = -1;
    if (!delayed.empty()) {
      auto first =
          std::min_element(delayed.begin(), delayed.end(),
                           [](const Delayed& a, const Delayed& b) { return a.due < b.due; });
      auto wait = std::chrono::ceil<std::chrono::milliseconds>(first->due - Clock::now());
      timeout_ms = static_cast<int>(std::max<int64_t>(0, wait.count()));
    }
    if (::poll(pfds.data(), pfds.size(), timeout_ms) < 0 && errno != EINTR) {
      return;
    }
    if (pfds[0].revents != 0) {
      return;  // stop
    }
    // Due delayed replies.
    auto now = Clock::now();
    for (auto it = delayed.begin(); it != delayed.end();) {
      if (it->due > now) {
        ++it;
        continue;
      }
      if (it->tcp) {
        tcp_send(it->conn, it->bytes);
      } else {
        ::sendto(udp_.get(), it->bytes.data(), it->bytes.size(), 0,
                 reinterpret_cast<const sockaddr*>(&it->peer), sizeof(it->peer));
      }
      it = delayed.erase(it);
    }
    // UDP: drain every datagram waiting.
    if (pfds[1].revents & POLLIN) {
      while (true) {
        char buf[4096];
        sockaddr_in peer{};
        socklen_t peer_len = sizeof(peer);
        ssize_t n = ::recvfrom(udp_.get(), buf, sizeof(buf), 0, reinterpret_cast<sockaddr*>(&peer),
                               &peer_len);
        if (n < 0) {
          break;
        }
        Planned p = Plan(std::string_view(buf, static_cast<size_t>(n)), /*over_tcp=*/false);
        if (!p.send) {
          continue;
        }
        if (p.delay.count() > 0) {
          delayed.push_back(Delayed{Clock::now() + p.delay, std::move(p.bytes), false, peer, 0});
        } else {
          ::sendto(udp_.get(), p.bytes.data(), p.bytes.size(), 0,
                   reinterpret_cast<const sockaddr*>(&peer), sizeof(peer));
        }
      }
    }
    // TCP: new connections.
    if (pfds[2].revents & POLLIN) {
      while (true) {
        int fd = ::accept4(tcp_.get(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0) {
          break;
        }
        conns.push_back(TcpConn{next_serial++, UniqueFd(fd), {}, {}});
      }
    }
    // TCP: traffic on existing connections (only those that were polled this round).
    size_t index = 3;
    for (auto it = conns.begin(); it != conns.end() && index < pfds.size(); ++index) {
      TcpConn& c = *it;
      short revents = pfds[index].revents;
      bool closed = false;
      if (revents & (POLLIN | POLLHUP | POLLERR)) {
        char buf[4096];
        ssize_t n = ::read(c.fd.get(), buf, sizeof(buf));
        if (n <= 0) {
          closed = !(n < 0 && errno == EAGAIN);
        } else {
          c.in.append(buf, static_cast<size_t>(n));
        }
        while (c.in.size() >= 2) {
          size_t len = Get16(c.in, 0);
          if (c.in.size() < 2 + len) {
            break;
          }
          Planned p = Plan(std::string_view(c.in).substr(2, len), /*over_tcp=*/true);
          c.in.erase(0, 2 + len);
          if (!p.send) {
            continue;
          }
          if (p.delay.count() > 0) {
            delayed.push_back(
                Delayed{Clock::now() + p.delay, std::move(p.bytes), true, {}, c.serial});
          } else {
            Put16(c.out, static_cast<uint16_t>(p.bytes.size()));
            c.out += p.bytes;
          }
        }
      }
      if (!closed && !c.out.empty()) {
        ssize_t n = ::send(c.fd.get(), c.out.data(), c.out.size(), MSG_NOSIGNAL);
        if (n > 0) {
          c.out.erase(0, static_cast<size_t>(n));
        } else if (n < 0 && errno != EAGAIN) {
          closed = true;
        }
      }
      it = closed ? conns.erase(it) : std::next(it);
    }
  }
}

}  // namespace srt::proxy::testing
