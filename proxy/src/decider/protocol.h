// SPDX-License-Identifier: Apache-2.0
// decider/protocol.h: `srt proxy`'s decider protocol v1 (upstream srt 0.0.83's, docs/srt-proxy.md),
// the pure half: frames and messages. Pure; errors as values.
//
// A frame is a 4-byte big-endian length and that many bytes of one UTF-8 JSON object whose "t"
// names the message. The proxy speaks first:
//   proxy   -> decider  {"t":"hello","proto":1}
//   decider -> proxy    {"t":"hello","proto":1,"allowedDomains":[...],"deniedDomains":[...]}
//   proxy   -> decider  {"t":"req","id":n,"method","host","port","hostHeader"?,"sni"?,"path",
//                        "query"?,"headers"?:{lcname:[values]}}
//   decider -> proxy    {"t":"verdict","id":n,"action":"allow","setHeaders"?,"removeHeaders"?,
//                        "cred"?,"credential"?} | {..."action":"deny","status","reason"?}
//                       | {..."action":"need_body","max"}
//   proxy   -> decider  {"t":"body","id":n,"data":"<base64>","cut"?:true}   (after need_body)
// What the decider sends is read strictly: one object, valid UTF-8, no null, no duplicate key, no
// key the message does not have, integers only where numbers go, optional fields left out rather
// than sent empty, lower-case header names, no control character (tab aside, C1 included) in a
// value. Anything else is a violation of the protocol (the caller kills the link).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "srt/result.h"

namespace srt::proxy::decider {

inline constexpr int kProto = 1;
// The largest frame either end reads (a body frame may be larger: the decider reads those).
inline constexpr size_t kMaxFrameBytes = size_t{1} << 20;
inline constexpr uint32_t kMaxBodyBytes = uint32_t{32} << 20;
inline constexpr size_t kMaxReasonBytes = 1024;
inline constexpr size_t kMaxCredentialBytes = 8192;
inline constexpr uint64_t kMaxId = (uint64_t{1} << 53) - 1;
// A req's and an allow's header limits: values (a name without values counts one) and bytes of
// names and values; removeHeaders names and bytes; host, Host, SNI and path bytes each.
inline constexpr size_t kMaxHeaderEntries = 190;
inline constexpr size_t kMaxHeaderBytes = size_t{64} << 10;
inline constexpr size_t kMaxHostPathBytes = size_t{8} << 10;

// ---- Frames ---------------------------------------------------------------------------------

// The 4-byte big-endian length of `payload`, then `payload`.
[[nodiscard]] std::string EncodeFrame(std::string_view payload);

// Splits a byte stream into frames of at most `max_frame` bytes.
class FrameReader {
 public:
  explicit FrameReader(size_t max_frame = kMaxFrameBytes) : max_frame_(max_frame) {}
  enum class Status { kNeedMore, kFrame, kOversized };
  void Append(std::string_view bytes);
  // kFrame: the next frame's payload is in `frame`. kOversized: a length over the limit (the
  // stream cannot be read further).
  Status Next(std::string& frame);
  [[nodiscard]] size_t buffered() const { return buffer_.size() - consumed_; }

 private:
  size_t max_frame_;
  std::string buffer_;
  size_t consumed_ = 0;
};

// ---- Messages -------------------------------------------------------------------------------

// Header fields by lower-case name, each with its values, in first-seen order.
using HeaderMap = std::vector<std::pair<std::string, std::vector<std::string>>>;

// {"t":"hello","proto":1}
[[nodiscard]] std::string EncodeProxyHello();

struct DeciderHello {
  std::vector<std::string> allowed_domains;  // egress entries (IsEgressEntry), unique
  std::vector<std::string> denied_domains;
};
[[nodiscard]] Result<DeciderHello> ParseDeciderHello(std::string_view frame);

// Whether `entry` is an egress entry of a hello: a lower-case DNS name (last label starting
// with a letter), the same after "*." with two labels or more, or an IP literal ([v6] when a
// port follows), then an optional ":port" (1-65535, no leading zero).
[[nodiscard]] bool IsEgressEntry(std::string_view entry);

struct Request {
  uint64_t id = 0;
  std::string method;
  std::string host;  // canonical, IPv6 without brackets
  uint16_t port = 0;
  std::optional<std::string> host_header;
  std::optional<std::string> sni;
  std::string path;   // as spelled, without '?'
  std::string query;  // after '?', "" for none
  // Lower-case names, Host excluded; raw (name, value) pairs in order, grouped by EncodeRequest.
  std::vector<std::pair<std::string, std::string>> headers;
};
// The req frame's payload, or why the request cannot be asked about (the proxy answers such a
// request 400 itself): a header name that is not a token, a value with a control character or
// invalid UTF-8, more than one Host, past a limit, or a frame over kMaxFrameBytes.
[[nodiscard]] Result<std::string> EncodeRequest(const Request& request);
// {"t":"body","id":n,"data":"<base64>"[,"cut":true]}
[[nodiscard]] std::string EncodeBody(uint64_t id, std::string_view data, bool cut);

enum class Action { kAllow, kDeny, kNeedBody };
struct Verdict {
  uint64_t id = 0;
  Action action = Action::kDeny;
  // allow
  HeaderMap set_headers;
  std::vector<std::string> remove_headers;
  std::string cred;        // "" for none; then credential is "" too
  std::string credential;  // 1-8192 printable ASCII, no space
  // deny
  int status = 0;
  std::string reason;  // "" for none
  // need_body
  uint32_t max = 0;
};
// A verdict frame's payload, read strictly (see the file comment); the error says what is wrong.
[[nodiscard]] Result<Verdict> ParseVerdict(std::string_view frame);

// The credential headers a `cred` allow strips before it places its own.
inline constexpr std::string_view kCredentialHeaders[] = {"authorization", "proxy-authorization",
                                                          "cookie", "x-api-key"};

}  // namespace srt::proxy::decider
