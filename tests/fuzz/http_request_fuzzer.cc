// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: HTTP request heads (http/head_parser.h), the request body's chunked framing
// and the proxy's own responses. Properties: `consumed` and `resume` stay within the input; errors
// carry one of the statuses the proxy answers with; a head re-parses identically from exactly its
// own bytes and when fed in two pieces with the resume hint; a destination host is non-empty
// visible ASCII without userinfo, brackets or delimiters, and CanonicalizeHost either accepts it
// or refuses it as a "malformed host" (the session's 403); what FormatResponse emits parses back
// as one response framed as sent.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <string>
#include <string_view>

#include "base/host.h"
#include "http/chunked_decoder.h"
#include "http/head_parser.h"
#include "http/response_writer.h"
#include "wire/ascii.h"

namespace {

using srt::CanonicalizeHost;
using srt::Host;
using srt::kMalformedHost;
using namespace srt::proxy;        // NOLINT(google-build-using-namespace)
using namespace srt::proxy::http;  // NOLINT(google-build-using-namespace)

void Require(bool condition) {
  if (!condition) {
    std::abort();
  }
}

// What the session does with a parsed host: CanonicalizeHost accepts it or refuses it as a
// malformed host; an IPv6 literal (the parser strips its brackets) reads the same with them.
void CheckHost(const std::string& raw) {
  srt::Result<Host> host = CanonicalizeHost(raw);
  if (!host.has_value()) {
    Require(host.error().message().starts_with(kMalformedHost));
  }
  if (raw.find(':') != std::string::npos) {
    srt::Result<Host> bracketed = CanonicalizeHost("[" + raw + "]");
    Require(bracketed.has_value() == host.has_value());
    Require(!host.has_value() || *bracketed == *host);
  }
}

bool Same(const RequestHeadResult& a, const RequestHeadResult& b) {
  return a.status == b.status && a.consumed == b.consumed && a.http_error == b.http_error &&
         a.error_code == b.error_code && a.error == b.error && a.request == b.request;
}

void CheckRequest(std::span<const char> in, const Limits& limits) {
  RequestHeadResult r = ParseRequestHead(in, limits);
  switch (r.status) {
    case ParseStatus::kNeedMore:
      Require(r.resume <= in.size() && in.size() <= limits.max_head_bytes);
      return;
    case ParseStatus::kError:
      Require(r.http_error == 400 || r.http_error == 414 || r.http_error == 431 ||
              r.http_error == 501 || r.http_error == 505);
      Require(!r.error.empty() && r.consumed == 0);
      return;
    case ParseStatus::kDone:
      break;
  }
  Require(r.consumed > 0 && r.consumed <= in.size() && r.consumed <= limits.max_head_bytes);
  // The head alone parses the same; and fed in two pieces with the resume hint.
  Require(Same(ParseRequestHead(in.first(r.consumed), limits), r));
  const size_t cut = static_cast<uint8_t>(in[0]) % r.consumed;
  RequestHeadResult first = ParseRequestHead(in.first(cut), limits);
  Require(first.status == ParseStatus::kNeedMore);
  Require(Same(ParseRequestHead(in, limits, first.resume), r));

  const Request& q = r.request;
  Require(q.headers.size() <= limits.max_headers);
  if (q.form == TargetForm::kAuthority || q.form == TargetForm::kAbsolute) {
    Require(!q.host.empty() && q.port != 0);
    Require(ascii::IsVisible(q.host));
    Require(q.host.find_first_of("@/?#[]") == std::string::npos);
    Require(q.target.find(q.host) != std::string::npos);
    CheckHost(q.host);
  }
  if (q.form == TargetForm::kAbsolute || q.form == TargetForm::kOrigin) {
    Require(!q.path.empty() && q.path[0] == '/');
  }
  if (std::optional<BasicCredentials> creds = q.ProxyAuthorization()) {
    Require(creds->user.find(':') == std::string::npos);
  }
  (void)q.ConnectionClose();
  // What goes to the next hop of a Connection field: its three connection options only, and
  // never a name NamedByConnection reports (so a field srt adds is never named for removal).
  const std::vector<std::string_view> named = NamedByConnection(q.headers);
  for (const Header& h : q.headers) {
    if (!ascii::EqualsIgnoreCase(h.name, "Connection")) continue;
    const std::string next = ConnectionForNextHop(h.value);
    for (std::string_view rest = next; !rest.empty();) {
      const size_t comma = rest.find(", ");
      const std::string_view option = rest.substr(0, comma);
      Require(ascii::EqualsIgnoreCase(option, "close") ||
              ascii::EqualsIgnoreCase(option, "keep-alive") ||
              ascii::EqualsIgnoreCase(option, "upgrade"));
      Require(!IsNamed(named, option));
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 2);
    }
  }
  Framing framing = BodyFraming(q);
  if (framing.kind == Framing::Kind::kChunked) {
    // The body, fed whole and then split: the same end.
    std::span<const char> body = in.subspan(r.consumed);
    ChunkedDecoder whole;
    ChunkedDecoder::Step a = whole.Feed(body);
    Require(a.consumed <= body.size());
    ChunkedDecoder split;
    const size_t half = body.size() / 2;
    ChunkedDecoder::Step b = split.Feed(body.first(half));
    size_t total = b.consumed;
    if (b.status == ParseStatus::kNeedMore) {
      b = split.Feed(body.subspan(half));
      total += b.consumed;
    }
    Require(a.status == b.status);
    Require(a.status != ParseStatus::kDone || total == a.consumed);
  }
  Require(framing.kind != Framing::Kind::kUntilClose);
}

void CheckFormat(std::string_view data) {
  // Fuzz bytes as reason, header and body: the output is always exactly one response.
  const size_t third = data.size() / 3;
  std::string out = FormatResponse(403, data.substr(0, third),
                                   {{"X-Proxy-Error", std::string(data.substr(third, third))},
                                    {std::string(data.substr(third, 8)), "v"}},
                                   data.substr(2 * third));
  ResponseHeadResult r = ParseResponseHead(std::span<const char>(out.data(), out.size()));
  Require(r.status == ParseStatus::kDone);
  Require(r.response.status == 403);
  Require(r.response.content_length == data.size() - 2 * third);
  Require(r.consumed + *r.response.content_length == out.size());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::span<const char> in(reinterpret_cast<const char*>(data), size);
  if (size == 0) {
    return 0;
  }
  CheckRequest(in, Limits{});
  Limits small;
  small.max_head_bytes = 512;
  small.max_headers = 4;
  small.max_header_name_bytes = 16;
  small.max_request_line_bytes = 128;
  CheckRequest(in, small);
  if (size <= 16 * 1024) {
    CheckFormat(std::string_view(in.data(), in.size()));
  }
  return 0;
}
