// SPDX-License-Identifier: Apache-2.0
// http/head_parser.cc: HTTP/1.x request and response heads (RFC 9110, RFC 9112). See the header
// for the usage protocol and the strict/tolerant decisions.
#include "http/head_parser.h"

#include <string>
#include <utility>

#include "http/base64.h"
#include "wire/ascii.h"
#include "wire/byte_reader.h"

namespace srt::proxy::http {
namespace {

using ascii::EqualsIgnoreCase;
using ascii::QuoteForMessage;

enum class Kind { kRequest, kResponse };

constexpr bool IsOws(char c) { return c == ' ' || c == '\t'; }

std::string_view TrimOws(std::string_view s) {
  while (!s.empty() && IsOws(s.front())) {
    s.remove_prefix(1);
  }
  while (!s.empty() && IsOws(s.back())) {
    s.remove_suffix(1);
  }
  return s;
}

// Calls f(element) for each element of a comma-separated list (RFC 9110 §5.6.1), trimmed; empty
// elements included (callers decide). Stops early when f returns false.
template <typename F>
bool ForEachListElement(std::string_view value, F&& f) {
  while (true) {
    size_t comma = value.find(',');
    if (!f(TrimOws(value.substr(0, comma)))) {
      return false;
    }
    if (comma == std::string_view::npos) {
      return true;
    }
    value.remove_prefix(comma + 1);
  }
}

struct Failure {
  HeadError code = HeadError::kNone;
  std::string message;
};

int RequestStatusFor(HeadError code) {
  switch (code) {
    case HeadError::kNone:
      return 0;
    case HeadError::kUnsupportedVersion:
      return 505;
    case HeadError::kUnknownCoding:
      return 501;
    case HeadError::kStartLineTooLong:
      return 414;
    case HeadError::kHeadTooLarge:
    case HeadError::kTooManyHeaders:
    case HeadError::kHeaderNameTooLong:
      return 431;
    default:
      return 400;
  }
}

// RFC 9112 §2.3: HTTP-version = "HTTP/" DIGIT "." DIGIT, case-sensitive.
std::optional<Failure> ParseVersion(std::string_view text, Version& out) {
  if (text.size() != 8 || text.substr(0, 5) != "HTTP/" || !ascii::IsDigit(text[5]) ||
      text[6] != '.' || !ascii::IsDigit(text[7])) {
    return Failure{HeadError::kBadStartLine, "invalid HTTP version " + QuoteForMessage(text)};
  }
  if (text[5] != '1') {
    return Failure{HeadError::kUnsupportedVersion,
                   "unsupported HTTP version " + QuoteForMessage(text)};
  }
  // RFC 9112 §2.3: a higher minor version of a major version we implement is read as the highest
  // one we implement.
  out = text[7] == '0' ? Version::kHttp10 : Version::kHttp11;
  return std::nullopt;
}

// RFC 3986 §3.2.2: reg-name = *( unreserved / pct-encoded / sub-delims ); this is the
// unreserved (§2.3) and sub-delims (§2.2) part.
constexpr bool IsRegNameChar(char c) {
  switch (c) {
    case '-':
    case '.':
    case '_':
    case '~':
    case '!':
    case '$':
    case '&':
    case '\'':
    case '(':
    case ')':
    case '*':
    case '+':
    case ',':
    case ';':
    case '=':
      return true;
    default:
      return ascii::IsAlpha(c) || ascii::IsDigit(c);
  }
}

// True if `host` has the syntax of a reg-name (RFC 3986 §3.2.2), pct-encoded triplets included.
// Only the syntax: whether it names something is for CanonicalizeHost (filter/host.h).
bool IsRegName(std::string_view host) {
  for (size_t i = 0; i < host.size(); ++i) {
    if (host[i] == '%') {
      if (i + 2 >= host.size() || !ascii::IsHexDigit(host[i + 1]) ||
          !ascii::IsHexDigit(host[i + 2])) {
        return false;
      }
      i += 2;
    } else if (!IsRegNameChar(host[i])) {
      return false;
    }
  }
  return true;
}

// True if `literal` (between the brackets) has the characters of an IPv6address (RFC 3986
// §3.2.2: HEXDIG, ':' and '.' for an embedded IPv4 part) and at least one ':'. IPvFuture and zone
// ids (RFC 6874) are refused. Requiring the ':' keeps "[10.0.0.1]" or "[example.com]" from
// becoming an IPv4 address or a name once the brackets are gone.
bool IsIpv6LiteralSyntax(std::string_view literal) {
  for (char c : literal) {
    if (!ascii::IsHexDigit(c) && c != ':' && c != '.') {
      return false;
    }
  }
  return literal.find(':') != std::string_view::npos;
}

// An authority (RFC 3986 §3.2): host [":" port]. IPv6 literals in brackets. `default_port` 0
// means the port is mandatory (CONNECT, RFC 9110 §9.3.6). The host is checked for URI syntax
// only and stored as sent; the session's CanonicalizeHost judges and normalises it.
std::optional<Failure> ParseAuthority(std::string_view authority, uint16_t default_port,
                                      Request& out) {
  auto bad = [&](std::string why) {
    return Failure{HeadError::kBadAuthority,
                   "invalid authority " + QuoteForMessage(authority) + ": " + std::move(why)};
  };
  if (authority.empty()) {
    return bad("empty");
  }
  // RFC 9110 §4.2.4: userinfo is deprecated and a recipient SHOULD treat it as an error. It is
  // also how "http://allowed.example@evil.example/" tries to fool a reader.
  if (authority.find('@') != std::string_view::npos) {
    return bad("userinfo is not allowed");
  }
  std::string_view host_text;
  std::string_view rest;
  if (authority.front() == '[') {
    size_t close = authority.find(']');
    if (close == std::string_view::npos) {
      return bad("unterminated IPv6 literal");
    }
    host_text = authority.substr(1, close - 1);
    rest = authority.substr(close + 1);
    if (!IsIpv6LiteralSyntax(host_text)) {
      return bad("brackets around something other than an IPv6 address");
    }
  } else {
    size_t colon = authority.find(':');
    host_text = authority.substr(0, colon);
    rest = colon == std::string_view::npos ? std::string_view() : authority.substr(colon);
    if (host_text.empty()) {
      return bad("empty host");
    }
    if (!IsRegName(host_text)) {
      return bad("invalid character in the host");
    }
  }
  uint32_t port = default_port;
  if (rest.empty()) {
    if (default_port == 0) {
      return bad("a port is required");
    }
  } else {
    if (rest.front() != ':') {
      return bad("unexpected text after the host");
    }
    std::string_view digits = rest.substr(1);
    if (digits.empty() || digits.size() > 5) {
      return bad("invalid port");
    }
    port = 0;
    for (char c : digits) {
      if (!ascii::IsDigit(static_cast<uint8_t>(c))) {
        return bad("invalid port");
      }
      port = port * 10 + static_cast<uint32_t>(c - '0');
    }
    if (port == 0 || port > 65535) {
      return bad("port out of range");
    }
  }
  out.host = std::string(host_text);
  out.port = static_cast<uint16_t>(port);
  return std::nullopt;
}

// request-line = method SP request-target SP HTTP-version (RFC 9112 §3).
std::optional<Failure> ParseRequestLine(std::string_view line, Request& out) {
  size_t sp1 = line.find(' ');
  if (sp1 == std::string_view::npos) {
    return Failure{HeadError::kBadStartLine, "malformed request line " + QuoteForMessage(line)};
  }
  std::string_view method = line.substr(0, sp1);
  if (!ascii::IsToken(method)) {
    return Failure{HeadError::kBadMethod, "invalid method " + QuoteForMessage(method)};
  }
  std::string_view rest = line.substr(sp1 + 1);
  size_t sp2 = rest.find(' ');
  if (sp2 == std::string_view::npos) {
    return Failure{HeadError::kBadStartLine,
                   "request line without an HTTP version " + QuoteForMessage(line)};
  }
  std::string_view target = rest.substr(0, sp2);
  std::string_view version = rest.substr(sp2 + 1);
  if (target.empty() || version.find(' ') != std::string_view::npos) {
    return Failure{HeadError::kBadStartLine,
                   "request line with extra spaces " + QuoteForMessage(line)};
  }
  // RFC 9112 §3.2 and RFC 3986: visible ASCII only; no fragment in a request-target.
  for (char c : target) {
    auto u = static_cast<uint8_t>(c);
    if (u <= 0x20 || u >= 0x7f || c == '#') {
      return Failure{HeadError::kBadTarget,
                     "invalid character in request-target " + QuoteForMessage(target)};
    }
  }
  if (std::optional<Failure> f = ParseVersion(version, out.version)) {
    return f;
  }
  out.method = std::string(method);
  out.target = std::string(target);

  if (method == "CONNECT") {
    // RFC 9110 §9.3.6: CONNECT's target is authority-form, host:port with the port required.
    out.form = TargetForm::kAuthority;
    if (target.front() == '/' || target.find("://") != std::string_view::npos) {
      return Failure{HeadError::kBadTarget,
                     "CONNECT needs host:port, not " + QuoteForMessage(target)};
    }
    return ParseAuthority(target, /*default_port=*/0, out);
  }
  if (target == "*") {
    // RFC 9112 §3.2.4: asterisk-form, OPTIONS only.
    if (method != "OPTIONS") {
      return Failure{HeadError::kBadTarget, "'*' is only a target for OPTIONS"};
    }
    out.form = TargetForm::kAsterisk;
    return std::nullopt;
  }
  if (target.front() == '/') {
    // RFC 9112 §3.2.1: origin-form. Not what a proxy expects; the session decides.
    out.form = TargetForm::kOrigin;
    out.path = std::string(target);
    return std::nullopt;
  }
  // RFC 9112 §3.2.2: absolute-form. scheme = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ).
  out.form = TargetForm::kAbsolute;
  size_t colon = target.find(':');
  std::string_view scheme = target.substr(0, colon);
  bool scheme_ok = !scheme.empty() && ascii::IsAlpha(static_cast<uint8_t>(scheme.front()));
  for (char c : scheme) {
    auto u = static_cast<uint8_t>(c);
    scheme_ok =
        scheme_ok && (ascii::IsAlpha(u) || ascii::IsDigit(u) || c == '+' || c == '-' || c == '.');
  }
  if (colon == std::string_view::npos || !scheme_ok || target.substr(colon, 3) != "://") {
    return Failure{HeadError::kBadTarget, "invalid request-target " + QuoteForMessage(target)};
  }
  // RFC 3986 §3.1: schemes are case-insensitive.
  if (EqualsIgnoreCase(scheme, "https")) {
    return Failure{HeadError::kHttpsAbsoluteForm, "https:// request-target " +
                                                      QuoteForMessage(target) +
                                                      ": use CONNECT for TLS to the origin"};
  }
  if (!EqualsIgnoreCase(scheme, "http")) {
    return Failure{HeadError::kUnsupportedScheme,
                   "unsupported scheme in request-target " + QuoteForMessage(target)};
  }
  std::string_view after = target.substr(colon + 3);
  size_t authority_end = after.find_first_of("/?");
  std::string_view authority = after.substr(0, authority_end);
  std::string_view path =
      authority_end == std::string_view::npos ? std::string_view() : after.substr(authority_end);
  if (std::optional<Failure> f = ParseAuthority(authority, /*default_port=*/80, out)) {
    return f;
  }
  // RFC 9112 §3.2.1: an empty path is sent as "/".
  out.path = (path.empty() || path.front() == '?') ? "/" + std::string(path) : std::string(path);
  return std::nullopt;
}

// status-line = HTTP-version SP status-code SP [ reason-phrase ] (RFC 9112 §4). A status line
// that ends right after the code (no SP) is tolerated: the reason is advisory.
std::optional<Failure> ParseStatusLine(std::string_view line, Response& out) {
  if (std::optional<Failure> f = ParseVersion(line.substr(0, 8), out.version)) {
    if (f->code == HeadError::kBadStartLine) {
      f->message = "malformed status line " + QuoteForMessage(line);
    }
    return f;
  }
  if (line.size() < 12 || line[8] != ' ' || !ascii::IsDigit(line[9]) || !ascii::IsDigit(line[10]) ||
      !ascii::IsDigit(line[11]) || (line.size() > 12 && line[12] != ' ')) {
    return Failure{HeadError::kBadStartLine, "malformed status line " + QuoteForMessage(line)};
  }
  out.status = (line[9] - '0') * 100 + (line[10] - '0') * 10 + (line[11] - '0');
  if (out.status < 100 || out.status > 599) {
    return Failure{HeadError::kBadStatus, "status code out of range in " + QuoteForMessage(line)};
  }
  std::string_view reason = line.size() > 12 ? line.substr(13) : std::string_view();
  for (char c : reason) {
    auto u = static_cast<uint8_t>(c);
    if ((u < 0x20 && c != '\t') || u == 0x7f) {
      return Failure{HeadError::kBadStartLine, "invalid character in reason phrase"};
    }
  }
  out.reason = std::string(reason);
  return std::nullopt;
}

// field-line = field-name ":" OWS field-value OWS (RFC 9112 §5).
std::optional<Failure> ParseFieldLine(std::string_view line, const Limits& limits,
                                      std::vector<Header>& headers) {
  size_t colon = line.find(':');
  if (colon == std::string_view::npos) {
    return Failure{HeadError::kBadHeader, "field line without a colon " + QuoteForMessage(line)};
  }
  std::string_view name = line.substr(0, colon);
  if (name.size() > limits.max_header_name_bytes) {
    return Failure{HeadError::kHeaderNameTooLong, "field name longer than " +
                                                      std::to_string(limits.max_header_name_bytes) +
                                                      " bytes " + QuoteForMessage(name)};
  }
  if (!name.empty() && IsOws(name.back())) {
    // RFC 9112 §5.1: a server MUST reject whitespace between a field name and its colon.
    return Failure{HeadError::kBadHeader,
                   "whitespace between field name and colon " + QuoteForMessage(name)};
  }
  if (!ascii::IsToken(name)) {
    return Failure{HeadError::kBadHeader, "invalid field name " + QuoteForMessage(name)};
  }
  std::string_view value = TrimOws(line.substr(colon + 1));
  // RFC 9110 §5.5: field-vchar, SP, HTAB and obs-text; NUL, CR, LF and other controls never.
  for (char c : value) {
    auto u = static_cast<uint8_t>(c);
    if ((u < 0x20 && c != '\t') || u == 0x7f) {
      return Failure{HeadError::kBadHeader,
                     "invalid character in the value of " + QuoteForMessage(name)};
    }
  }
  headers.push_back(Header{std::string(name), std::string(value)});
  return std::nullopt;
}

// Content-Length and Transfer-Encoding (RFC 9112 §6).
struct FramingFields {
  std::optional<uint64_t> content_length;
  bool transfer_encoding = false;
  bool chunked = false;
};

std::optional<Failure> ParseFraming(const std::vector<Header>& headers, Kind kind, Version version,
                                    FramingFields& out) {
  auto bad = [](std::string why) { return Failure{HeadError::kBadFraming, std::move(why)}; };
  std::optional<Failure> failure;
  std::vector<std::string> codings;
  for (const Header& h : headers) {
    if (EqualsIgnoreCase(h.name, "Content-Length")) {
      // RFC 9110 §8.6: 1*DIGIT; a list of identical values may be accepted as that value.
      ForEachListElement(h.value, [&](std::string_view element) {
        uint64_t v = 0;
        bool ok = !element.empty() && element.size() <= 19;  // 19 digits never overflow u64
        for (size_t i = 0; ok && i < element.size(); ++i) {
          ok = ascii::IsDigit(static_cast<uint8_t>(element[i]));
          v = v * 10 + static_cast<uint64_t>(element[i] - '0');
        }
        if (!ok) {
          failure = bad("invalid Content-Length " + QuoteForMessage(h.value));
        } else if (out.content_length && *out.content_length != v) {
          failure = bad("conflicting Content-Length values");
        } else {
          out.content_length = v;
        }
        return !failure;
      });
    } else if (EqualsIgnoreCase(h.name, "Transfer-Encoding")) {
      out.transfer_encoding = true;
      ForEachListElement(h.value, [&](std::string_view element) {
        if (element.empty()) {
          return true;  // RFC 9110 §5.6.1: empty list elements are ignored
        }
        // Transfer codings with parameters exist only on paper; refuse them rather than risk
        // reading "chunked;x" differently from the next hop.
        if (!ascii::IsToken(element)) {
          failure = bad("invalid Transfer-Encoding " + QuoteForMessage(h.value));
          return false;
        }
        codings.push_back(ascii::ToLower(element));
        return true;
      });
    }
    if (failure) {
      return failure;
    }
  }
  if (!out.transfer_encoding) {
    return std::nullopt;
  }
  if (codings.empty()) {
    return bad("empty Transfer-Encoding");
  }
  if (version == Version::kHttp10) {
    // RFC 9112 §6.1: Transfer-Encoding in HTTP/1.0 means the framing is faulty.
    return bad("Transfer-Encoding in an HTTP/1.0 message");
  }
  if (out.content_length) {
    // RFC 9112 §6.3 item 3: both present is how requests are smuggled.
    return bad("both Content-Length and Transfer-Encoding");
  }
  size_t chunked_count = 0;
  for (const std::string& c : codings) {
    if (c == "chunked") {
      ++chunked_count;
    } else if (kind == Kind::kRequest && c != "gzip" && c != "x-gzip" && c != "deflate" &&
               c != "compress" && c != "x-compress") {
      // RFC 9112 §6.1: a transfer coding the server does not understand: 501.
      return Failure{HeadError::kUnknownCoding, "unknown transfer coding " + QuoteForMessage(c)};
    }
  }
  out.chunked = codings.back() == "chunked";
  if (chunked_count > 1) {
    // RFC 9112 §7: chunked MUST NOT be applied more than once.
    return bad("chunked applied more than once");
  }
  if (kind == Kind::kRequest && !out.chunked) {
    // RFC 9112 §6.3 item 4: a request whose final coding is not chunked cannot be delimited.
    return bad("Transfer-Encoding of a request does not end in chunked");
  }
  return std::nullopt;
}

template <typename R>
// NOLINTNEXTLINE(performance-unnecessary-value-param): clang-tidy 14 misses the move below
R MakeFailure(Kind kind, Failure f) {
  R r;
  r.status = ParseStatus::kError;
  r.error_code = f.code;
  r.http_error = kind == Kind::kRequest ? RequestStatusFor(f.code) : 502;
  r.error = std::move(f.message);
  return r;
}

template <typename R>
R MakeNeedMore(size_t resume) {
  R r;
  r.status = ParseStatus::kNeedMore;
  r.resume = resume;
  return r;
}

// The line framing shared by requests and responses. `on_start_line` parses the start line as
// soon as it is complete (so garbage is refused before a whole head arrives), and `on_done` runs
// once the empty line is found. Lines are processed strictly in order, so the first bad line
// decides the error whether the input arrives whole or in pieces.
template <typename R, typename OnStartLine, typename OnDone>
R ParseHead(std::span<const char> in, const Limits& limits, size_t resume, Kind kind,
            OnStartLine&& on_start_line, OnDone&& on_done) {
  const size_t n = in.size();
  const size_t window = n < limits.max_head_bytes ? n : limits.max_head_bytes;
  const bool strict_crlf = kind == Kind::kRequest;
  ByteReader reader(in);

  auto too_large = [&] {
    return MakeFailure<R>(kind,
                          {HeadError::kHeadTooLarge,
                           "head larger than " + std::to_string(limits.max_head_bytes) + " bytes"});
  };

  // Fast path: the bytes before `resume` were complete, valid lines at the last call; with no new
  // line end since, nothing but the size limit can have changed. This keeps a client that sends
  // one byte at a time from costing a full re-parse per byte.
  if (resume > 0 && resume <= window) {
    ByteReader tail(in.subspan(resume, window - resume));
    if (!tail.Find('\n')) {
      return n > limits.max_head_bytes ? too_large() : MakeNeedMore<R>(resume);
    }
  }

  // Reads the line at the reader's position into `line` (without its line ending). Returns
  // nullopt with the reader unmoved if the line is incomplete within the window.
  auto next_line = [&](std::string_view& line) -> std::optional<Failure> {
    const size_t start = reader.offset();
    std::optional<size_t> lf = start < window ? reader.Find('\n', window - start) : std::nullopt;
    if (!lf) {
      line = std::string_view();
      return std::nullopt;
    }
    std::optional<std::string_view> text = reader.ReadString(*lf);
    reader.Skip(1);
    line = *text;
    if (!line.empty() && line.back() == '\r') {
      line.remove_suffix(1);
    } else if (strict_crlf) {
      return Failure{HeadError::kBareLineEnding, "bare LF line ending (CRLF required)"};
    }
    if (line.find('\r') != std::string_view::npos) {
      // RFC 9112 §2.2: a bare CR makes the element invalid.
      return Failure{HeadError::kBareLineEnding, "bare CR in " + QuoteForMessage(line)};
    }
    return std::nullopt;
  };

  // RFC 9112 §2.2: a server SHOULD ignore at least one empty line before the request-line.
  if (kind == Kind::kRequest) {
    for (size_t empty_lines = 0;; ++empty_lines) {
      std::optional<uint8_t> c = reader.PeekU8();
      if (c == uint8_t{'\n'}) {
        return MakeFailure<R>(kind,
                              {HeadError::kBareLineEnding, "bare LF line ending (CRLF required)"});
      }
      if (c != uint8_t{'\r'}) {
        break;
      }
      const size_t tag = reader.Tag();
      reader.Skip(1);
      std::optional<uint8_t> lf = reader.ReadU8();
      if (!lf) {
        return MakeNeedMore<R>(0);
      }
      if (*lf != '\n') {
        reader.Rollback(tag);
        return MakeFailure<R>(kind,
                              {HeadError::kBareLineEnding, "bare CR before the request line"});
      }
      if (empty_lines == kMaxHttpLeadingEmptyLines) {
        return MakeFailure<R>(kind, {HeadError::kBadStartLine,
                                     "more than " + std::to_string(kMaxHttpLeadingEmptyLines) +
                                         " empty lines before the request line"});
      }
    }
  }

  // The start line.
  {
    const size_t start = reader.offset();
    std::string_view line;
    std::optional<Failure> f = next_line(line);
    const bool complete = reader.offset() != start;
    size_t length = complete ? line.size() : n - start;
    if (!complete && length > 0 && in[n - 1] == '\r') {
      --length;  // the CR of a CRLF whose LF is yet to come
    }
    if (length > limits.max_request_line_bytes) {
      return MakeFailure<R>(
          kind, {HeadError::kStartLineTooLong,
                 std::string(kind == Kind::kRequest ? "request" : "status") + " line longer than " +
                     std::to_string(limits.max_request_line_bytes) + " bytes"});
    }
    if (!complete) {
      return n > limits.max_head_bytes ? too_large() : MakeNeedMore<R>(0);
    }
    if (f) {
      return MakeFailure<R>(kind, std::move(*f));
    }
    if (std::optional<Failure> g = on_start_line(line)) {
      return MakeFailure<R>(kind, std::move(*g));
    }
  }

  // Field lines, up to the empty line.
  std::vector<Header> headers;
  while (true) {
    const size_t start = reader.offset();
    std::string_view line;
    std::optional<Failure> f = next_line(line);
    if (reader.offset() == start) {
      return n > limits.max_head_bytes ? too_large() : MakeNeedMore<R>(start);
    }
    if (f) {
      return MakeFailure<R>(kind, std::move(*f));
    }
    if (line.empty()) {
      break;
    }
    if (IsOws(line.front())) {
      // RFC 9112 §5.2 (obs-fold) and §2.2 (whitespace before the first field line).
      return MakeFailure<R>(
          kind, headers.empty()
                    ? Failure{HeadError::kBadHeader, "whitespace before the first field line"}
                    : Failure{HeadError::kObsFold,
                              "obs-fold (a field line continued with "
                              "leading whitespace)"});
    }
    if (headers.size() == limits.max_headers) {
      return MakeFailure<R>(kind,
                            {HeadError::kTooManyHeaders,
                             "more than " + std::to_string(limits.max_headers) + " field lines"});
    }
    if (std::optional<Failure> g = ParseFieldLine(line, limits, headers)) {
      return MakeFailure<R>(kind, std::move(*g));
    }
  }
  R r;
  if (std::optional<Failure> g = on_done(std::move(headers), r)) {
    return MakeFailure<R>(kind, std::move(*g));
  }
  r.status = ParseStatus::kDone;
  r.consumed = reader.offset();
  return r;
}

const Header* FindIn(const std::vector<Header>& headers, std::string_view name) {
  for (const Header& h : headers) {
    if (EqualsIgnoreCase(h.name, name)) {
      return &h;
    }
  }
  return nullptr;
}

// RFC 9112 §9.3: persistence. `close` wins; HTTP/1.0 needs an explicit keep-alive.
bool WantsClose(const std::vector<Header>& headers, Version version) {
  bool close = false;
  bool keep_alive = false;
  for (const Header& h : headers) {
    if (!EqualsIgnoreCase(h.name, "Connection")) {
      continue;
    }
    ForEachListElement(h.value, [&](std::string_view option) {
      close = close || EqualsIgnoreCase(option, "close");
      keep_alive = keep_alive || EqualsIgnoreCase(option, "keep-alive");
      return true;
    });
  }
  return close || (version == Version::kHttp10 && !keep_alive);
}

}  // namespace

namespace {
bool IsForwardedConnectionOption(std::string_view option) {
  return EqualsIgnoreCase(option, "close") || EqualsIgnoreCase(option, "keep-alive") ||
         EqualsIgnoreCase(option, "upgrade");
}
}  // namespace

std::vector<std::string_view> NamedByConnection(const std::vector<Header>& headers) {
  std::vector<std::string_view> named;
  for (const Header& h : headers) {
    if (!EqualsIgnoreCase(h.name, "Connection")) continue;
    ForEachListElement(h.value, [&](std::string_view option) {
      if (!option.empty() && !IsForwardedConnectionOption(option)) named.push_back(option);
      return true;
    });
  }
  return named;
}

bool IsNamed(const std::vector<std::string_view>& named, std::string_view name) {
  for (std::string_view n : named) {
    if (EqualsIgnoreCase(n, name)) return true;
  }
  return false;
}

std::string ConnectionForNextHop(std::string_view value) {
  std::string out;
  ForEachListElement(value, [&](std::string_view option) {
    if (IsForwardedConnectionOption(option)) {
      if (!out.empty()) out += ", ";
      out += option;
    }
    return true;
  });
  return out;
}

const Header* Request::Find(std::string_view name) const { return FindIn(headers, name); }
const Header* Response::Find(std::string_view name) const { return FindIn(headers, name); }
bool Request::ConnectionClose() const { return WantsClose(headers, version); }
bool Response::ConnectionClose() const { return WantsClose(headers, version); }

std::optional<BasicCredentials> Request::ProxyAuthorization() const {
  const Header* found = nullptr;
  for (const Header& h : headers) {
    if (EqualsIgnoreCase(h.name, "Proxy-Authorization")) {
      if (found != nullptr) {
        return std::nullopt;  // two sets of credentials: refuse rather than pick one
      }
      found = &h;
    }
  }
  if (found == nullptr) {
    return std::nullopt;
  }
  // RFC 9110 §11.4: credentials = auth-scheme [ 1*SP ( token68 / ... ) ]; RFC 7617 §2: Basic.
  std::string_view value = found->value;
  size_t sp = value.find(' ');
  if (sp == std::string_view::npos || !EqualsIgnoreCase(value.substr(0, sp), "Basic")) {
    return std::nullopt;
  }
  std::string_view token = value.substr(sp + 1);
  while (!token.empty() && token.front() == ' ') {
    token.remove_prefix(1);
  }
  std::optional<std::string> decoded = DecodeBase64(token);
  if (!decoded) {
    return std::nullopt;
  }
  // RFC 7617 §2: user-id ":" password; the user-id cannot contain a colon; no control characters.
  size_t colon = decoded->find(':');
  if (colon == std::string::npos) {
    return std::nullopt;
  }
  for (char c : *decoded) {
    auto u = static_cast<uint8_t>(c);
    if (u < 0x20 || u == 0x7f) {
      return std::nullopt;
    }
  }
  return BasicCredentials{decoded->substr(0, colon), decoded->substr(colon + 1)};
}

RequestHeadResult ParseRequestHead(std::span<const char> in, const Limits& limits, size_t resume) {
  Request request;
  return ParseHead<RequestHeadResult>(
      in, limits, resume, Kind::kRequest,
      [&](std::string_view line) { return ParseRequestLine(line, request); },
      [&](std::vector<Header> headers, RequestHeadResult& r) -> std::optional<Failure> {
        request.headers = std::move(headers);
        size_t hosts = 0;
        for (const Header& h : request.headers) {
          hosts += EqualsIgnoreCase(h.name, "Host") ? 1u : 0u;
        }
        if (hosts > 1) {
          // RFC 9112 §3.2: more than one Host field line is a 400.
          return Failure{HeadError::kBadHeader, "more than one Host field line"};
        }
        FramingFields framing;
        if (std::optional<Failure> f =
                ParseFraming(request.headers, Kind::kRequest, request.version, framing)) {
          return f;
        }
        request.content_length = framing.content_length;
        request.chunked = framing.chunked;
        r.request = std::move(request);
        return std::nullopt;
      });
}

ResponseHeadResult ParseResponseHead(std::span<const char> in, const Limits& limits,
                                     size_t resume) {
  Response response;
  return ParseHead<ResponseHeadResult>(
      in, limits, resume, Kind::kResponse,
      [&](std::string_view line) { return ParseStatusLine(line, response); },
      [&](std::vector<Header> headers, ResponseHeadResult& r) -> std::optional<Failure> {
        response.headers = std::move(headers);
        FramingFields framing;
        if (std::optional<Failure> f =
                ParseFraming(response.headers, Kind::kResponse, response.version, framing)) {
          return f;
        }
        response.content_length = framing.content_length;
        response.transfer_encoding = framing.transfer_encoding;
        response.chunked = framing.chunked;
        r.response = std::move(response);
        return std::nullopt;
      });
}

Framing BodyFraming(const Request& request) {
  if (request.method == "CONNECT") {
    return {Framing::Kind::kNone, 0};
  }
  if (request.chunked) {
    return {Framing::Kind::kChunked, 0};
  }
  if (request.content_length && *request.content_length > 0) {
    return {Framing::Kind::kContentLength, *request.content_length};
  }
  // RFC 9112 §6.3 item 6: a request with neither has no body.
  return {Framing::Kind::kNone, 0};
}

Framing BodyFraming(const Request& request, const Response& response) {
  // RFC 9112 §6.3 items 1 and 2.
  if (request.method == "HEAD" || response.status < 200 || response.status == 204 ||
      response.status == 304) {
    return {Framing::Kind::kNone, 0};
  }
  if (request.method == "CONNECT" && response.status < 300) {
    return {Framing::Kind::kNone, 0};
  }
  // Item 4: chunked last, or else (responses) until the server closes.
  if (response.transfer_encoding) {
    return {response.chunked ? Framing::Kind::kChunked : Framing::Kind::kUntilClose, 0};
  }
  // Item 6 (item 3 was refused while parsing).
  if (response.content_length) {
    if (*response.content_length == 0) {
      return {Framing::Kind::kNone, 0};
    }
    return {Framing::Kind::kContentLength, *response.content_length};
  }
  // Item 8.
  return {Framing::Kind::kUntilClose, 0};
}

}  // namespace srt::proxy::http
