// SPDX-License-Identifier: Apache-2.0
// srt-init `connect HOST PORT`: an ssh ProxyCommand for sandboxed commands (GIT_SSH_COMMAND).
// Opens an authenticated HTTP CONNECT tunnel through srt's proxy, whose address and token it
// takes from $HTTP_PROXY (http://USER:TOKEN@127.0.0.1:PORT), and relays stdin/stdout through it,
// so ssh works through the proxy without socat or nc. Exit 0 when the tunnel closes; 1 with a
// message on stderr when it cannot be opened.
#include <linux/errno.h>

#include "rt.h"

namespace srt::init {

namespace {

using rt::Failed;

constexpr int kAfInet = 2, kSockStream = 1, kSockCloexec = 02000000, kShutWr = 1;
constexpr short kPollOut = 0x004, kPollHup = 0x010, kPollErr = 0x008;

[[noreturn]] void Fail(const char* what, long err = 0) {
  char scratch[32];
  rt::WriteStr(2, "srt-init connect: ");
  rt::WriteStr(2, what);
  if (err) {
    rt::WriteStr(2, ": ");
    rt::WriteStr(2, rt::ErrnoName(static_cast<int>(-err), scratch));
  }
  rt::WriteStr(2, "\n");
  rt::Exit(1);
}

const char* FindEnv(char** envp, const char* name) {
  size_t n = strlen(name);
  for (char** e = envp; *e; ++e) {
    if (memcmp(*e, name, n) == 0 && (*e)[n] == '=') return *e + n + 1;
  }
  return nullptr;
}

size_t Base64(const char* in, size_t n, char* out) {
  static const char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  size_t o = 0;
  for (size_t i = 0; i < n; i += 3) {
    uint32_t v = static_cast<uint32_t>(static_cast<unsigned char>(in[i])) << 16;
    if (i + 1 < n) v |= static_cast<uint32_t>(static_cast<unsigned char>(in[i + 1])) << 8;
    if (i + 2 < n) v |= static_cast<uint32_t>(static_cast<unsigned char>(in[i + 2]));
    out[o++] = kAlphabet[(v >> 18) & 63];
    out[o++] = kAlphabet[(v >> 12) & 63];
    out[o++] = i + 1 < n ? kAlphabet[(v >> 6) & 63] : '=';
    out[o++] = i + 2 < n ? kAlphabet[v & 63] : '=';
  }
  return o;
}

void Append(char* buf, size_t cap, size_t& len, const char* s, size_t n) {
  if (len + n >= cap) Fail("request too long");
  memcpy(buf + len, s, n);
  len += n;
}
void Append(char* buf, size_t cap, size_t& len, const char* s) {
  Append(buf, cap, len, s, strlen(s));
}

// Copies what is readable on `from` to `to`; false at EOF or on an error.
bool Pump(int from, int to) {
  char buf[65536];
  long n = SRT_SYS(__NR_read, from, buf, sizeof buf);
  if (n == -EINTR || n == -EAGAIN) return true;
  if (n <= 0) return false;
  rt::WriteAll(to, buf, static_cast<size_t>(n));
  return true;
}

}  // namespace

int RunConnect(int argc, char** argv, char** envp) {
  if (argc != 4) Fail("usage: srt-init connect HOST PORT (an ssh ProxyCommand inside srt)");
  const char* host = argv[2];
  const char* port = argv[3];
  int port_number = 0;
  if (!rt::ParseInt(port, port_number) || port_number < 1 || port_number > 65535) {
    Fail("the port is not a number from 1 to 65535");
  }
  for (const char* c = host; *c; ++c) {
    if (*c <= ' ' || *c == 0x7f) Fail("the host contains a space or a control character");
  }
  // $HTTP_PROXY = http://USER:TOKEN@localhost:PORT (or 127.0.0.1), as srt sets it.
  const char* proxy = FindEnv(envp, "HTTP_PROXY");
  const char kScheme[] = "http://";
  if (!proxy || memcmp(proxy, kScheme, sizeof kScheme - 1) != 0)
    Fail("HTTP_PROXY is not srt's proxy");
  const char* userinfo = proxy + sizeof kScheme - 1;
  const char* at = userinfo;
  while (*at && *at != '@') ++at;
  if (!*at) Fail("HTTP_PROXY carries no credentials");
  const char* hostport = at + 1;
  const char* colon = hostport;
  while (*colon && *colon != ':') ++colon;
  int proxy_port = 0;
  char port_text[8] = {};
  size_t pl = 0;
  for (const char* c = colon + 1; *c && *c != '/' && pl < sizeof port_text - 1; ++c)
    port_text[pl++] = *c;
  if (!*colon || !rt::ParseInt(port_text, proxy_port) || proxy_port < 1 || proxy_port > 65535) {
    Fail("HTTP_PROXY has no port");
  }
  uint8_t ip[4] = {127, 0, 0, 1};
  int part = 0, value = 0;
  // srt names its proxy "localhost"; this helper has no resolver, and the proxy listens on
  // 127.0.0.1 whatever /etc/hosts says.
  const char kLocalhost[] = "localhost";
  const bool is_localhost = static_cast<size_t>(colon - hostport) == sizeof kLocalhost - 1 &&
                            memcmp(hostport, kLocalhost, sizeof kLocalhost - 1) == 0;
  if (is_localhost) part = 4;
  for (const char* c = hostport; !is_localhost && c <= colon; ++c) {
    if (c == colon || *c == '.') {
      if (part > 3 || value > 255) Fail("HTTP_PROXY is not an IPv4 address");
      ip[part++] = static_cast<uint8_t>(value);
      value = 0;
    } else if (*c >= '0' && *c <= '9') {
      value = value * 10 + (*c - '0');
    } else {
      Fail("HTTP_PROXY is not an IPv4 address");
    }
  }
  if (part != 4) Fail("HTTP_PROXY is not an IPv4 address");

  long sock = SRT_SYS(__NR_socket, kAfInet, kSockStream | kSockCloexec, 0);
  if (Failed(sock)) Fail("socket", sock);
  uint8_t addr[16] = {2,
                      0,
                      static_cast<uint8_t>(proxy_port >> 8),
                      static_cast<uint8_t>(proxy_port & 0xff),
                      ip[0],
                      ip[1],
                      ip[2],
                      ip[3]};
  long r = SRT_SYS(__NR_connect, sock, addr, sizeof addr);
  if (Failed(r)) Fail("connect to srt's proxy", r);

  char request[1024];
  size_t len = 0;
  char auth[512];
  size_t userinfo_len = static_cast<size_t>(at - userinfo);
  if (userinfo_len > 380) Fail("HTTP_PROXY credentials are too long");
  size_t auth_len = Base64(userinfo, userinfo_len, auth);
  auth[auth_len] = 0;
  Append(request, sizeof request, len, "CONNECT ");
  Append(request, sizeof request, len, host);
  Append(request, sizeof request, len, ":");
  Append(request, sizeof request, len, port);
  Append(request, sizeof request, len, " HTTP/1.1\r\nHost: ");
  Append(request, sizeof request, len, host);
  Append(request, sizeof request, len, ":");
  Append(request, sizeof request, len, port);
  Append(request, sizeof request, len, "\r\nProxy-Authorization: Basic ");
  Append(request, sizeof request, len, auth, auth_len);
  Append(request, sizeof request, len, "\r\n\r\n");
  rt::WriteAll(static_cast<int>(sock), request, len);

  // The response head, byte by byte so nothing of the tunnel is read past it.
  char head[4096];
  size_t got = 0;
  while (got < 4 || memcmp(head + got - 4, "\r\n\r\n", 4) != 0) {
    if (got == sizeof head) Fail("the proxy's answer is too long");
    long n = SRT_SYS(__NR_read, sock, head + got, 1);
    if (n == -EINTR) continue;
    if (n <= 0) Fail("the proxy closed the connection");
    ++got;
  }
  if (got < 12 || memcmp(head, "HTTP/1.", 7) != 0 || memcmp(head + 9, "200", 3) != 0) {
    size_t line = 0;
    while (line < got && head[line] != '\r') ++line;
    rt::WriteStr(2, "srt-init connect: the proxy refused the tunnel: ");
    rt::WriteAll(2, head, line);
    rt::WriteStr(2, "\n");
    return 1;
  }

  rt::PollFd fds[2] = {{0, rt::kPollIn, 0}, {static_cast<int>(sock), rt::kPollIn, 0}};
  bool stdin_open = true;
  for (;;) {
    fds[0].fd = stdin_open ? 0 : -1;
    fds[0].revents = fds[1].revents = 0;
    r = SRT_SYS(__NR_ppoll, fds, 2, 0, 0, 0);
    if (r == -EINTR) continue;
    if (Failed(r)) return 1;
    if (fds[1].revents & (rt::kPollIn | kPollHup | kPollErr)) {
      if (!Pump(static_cast<int>(sock), 1)) return 0;  // the far end closed: done
    }
    if (stdin_open && (fds[0].revents & (rt::kPollIn | kPollHup | kPollErr))) {
      if (!Pump(0, static_cast<int>(sock))) {
        stdin_open = false;  // half-close: the far end still gets to answer
        SRT_SYS(__NR_shutdown, sock, kShutWr);
      }
    }
    (void)kPollOut;
  }
}

}  // namespace srt::init
