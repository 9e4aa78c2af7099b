// SPDX-License-Identifier: Apache-2.0
#include "decider/protocol.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>
#include <unordered_set>

#include "base/address.h"
#include "base/strings.h"
#include "http/base64.h"
#include "wire/ascii.h"

namespace srt::proxy::decider {
namespace {

using Json = nlohmann::json;

Error Violation(std::string message) {
  return MakeError(Errc::kInvalidArgument, std::move(message));
}

// ---- Strict JSON ----------------------------------------------------------------------------

// The first pass: what nlohmann's DOM would let through and the protocol refuses.
class StrictChecker final : public nlohmann::json_sax<Json> {
 public:
  std::string error;

  bool null() override { return Fail("null in frame"); }
  bool boolean(bool /*val*/) override { return true; }
  bool number_integer(number_integer_t /*val*/) override { return true; }
  bool number_unsigned(number_unsigned_t /*val*/) override { return true; }
  bool number_float(number_float_t /*val*/, const string_t& /*s*/) override {
    return Fail("a number that is not an integer in frame");
  }
  bool string(string_t& /*val*/) override { return true; }
  bool binary(binary_t& /*val*/) override { return Fail("binary in frame"); }
  bool start_object(std::size_t /*elements*/) override { return Open(true); }
  bool start_array(std::size_t /*elements*/) override {
    if (depth_.empty()) return Fail("frame is not one JSON object");
    return Open(false);
  }
  bool end_object() override { return Close(); }
  bool end_array() override { return Close(); }
  bool key(string_t& val) override {
    if (!depth_.back().insert(val).second) return Fail("duplicate key in frame");
    return true;
  }
  bool parse_error(std::size_t /*position*/, const std::string& /*last_token*/,
                   const nlohmann::detail::exception& /*ex*/) override {
    if (error.empty()) error = "frame is not valid JSON";
    return false;
  }

 private:
  // Messages nest three deep at most (verdict -> setHeaders -> values).
  static constexpr size_t kMaxDepth = 3;
  bool Fail(std::string why) {
    if (error.empty()) error = std::move(why);
    return false;
  }
  bool Open(bool /*is_object*/) {
    if (depth_.size() >= kMaxDepth) return Fail("frame nests too deep");
    depth_.emplace_back();
    return true;
  }
  bool Close() {
    depth_.pop_back();
    return true;
  }
  std::vector<std::unordered_set<std::string>> depth_;
};

Result<Json> ParseStrict(std::string_view frame) {
  if (!strings::IsValidUtf8(frame)) return Violation("frame is not UTF-8");
  if (frame.find_first_not_of(" \t\r\n") == std::string_view::npos ||
      frame[frame.find_first_not_of(" \t\r\n")] != '{') {
    return Violation("frame is not one JSON object");
  }
  StrictChecker checker;
  const bool ok = Json::sax_parse(frame.begin(), frame.end(), &checker, Json::input_format_t::json,
                                  /*strict=*/true);
  if (!ok || !checker.error.empty()) {
    return Violation(checker.error.empty() ? "frame is not valid JSON" : checker.error);
  }
  // Checked above: this cannot fail (no exceptions: allow_exceptions = false).
  Json value = Json::parse(frame.begin(), frame.end(), nullptr, /*allow_exceptions=*/false);
  if (!value.is_object()) return Violation("frame is not one JSON object");
  return value;
}

// A C0 control other than tab, DEL, or a C1 control (U+0080..U+009F: C2 80..C2 9F in UTF-8).
bool HasControl(std::string_view s) {
  for (size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<uint8_t>(s[i]);
    if ((c < 0x20 && c != '\t') || c == 0x7f) return true;
    if (c == 0xc2 && i + 1 < s.size()) {
      const auto next = static_cast<uint8_t>(s[i + 1]);
      if (next >= 0x80 && next <= 0x9f) return true;
    }
  }
  return false;
}

bool IsLowerToken(std::string_view name) {
  return ascii::IsToken(name) &&
         std::none_of(name.begin(), name.end(), [](char c) { return c >= 'A' && c <= 'Z'; });
}

bool IsOneOf(std::string_view folded, std::initializer_list<std::string_view> names) {
  return std::find(names.begin(), names.end(), folded) != names.end();
}

// Framing and hop-by-hop fields: never set, never removed by a verdict.
bool IsFramingField(std::string_view folded) {
  return IsOneOf(folded, {"host", "content-length", "transfer-encoding", "connection", "upgrade",
                          "te", "trailer", "keep-alive", "proxy-connection"});
}
bool IsCredentialField(std::string_view folded) {
  return std::find(std::begin(kCredentialHeaders), std::end(kCredentialHeaders), folded) !=
         std::end(kCredentialHeaders);
}

// Only these keys, and these required.
Result<void> Keys(const Json& object, std::initializer_list<std::string_view> allowed,
                  std::initializer_list<std::string_view> required) {
  for (const auto& [key, value] : object.items()) {
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      return Violation("unknown field '" + key + "'");
    }
  }
  for (std::string_view key : required) {
    if (!object.contains(key)) return Violation("missing field '" + std::string(key) + "'");
  }
  return {};
}

Result<uint64_t> Integer(const Json& object, std::string_view key, uint64_t min, uint64_t max) {
  const Json& v = object.at(key);
  uint64_t n = 0;
  if (v.is_number_unsigned()) {
    n = v.get<uint64_t>();
  } else if (v.is_number_integer()) {
    return Violation("'" + std::string(key) + "' is out of range");
  } else {
    return Violation("'" + std::string(key) + "' is not an integer");
  }
  if (n < min || n > max) return Violation("'" + std::string(key) + "' is out of range");
  return n;
}

Result<std::string> String(const Json& object, std::string_view key) {
  const Json& v = object.at(key);
  if (!v.is_string()) return Violation("'" + std::string(key) + "' is not a string");
  return v.get<std::string>();
}

Result<std::vector<std::string>> UniqueStrings(const Json& object, std::string_view key) {
  const Json& v = object.at(key);
  if (!v.is_array()) return Violation("'" + std::string(key) + "' is not an array");
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (const Json& item : v) {
    if (!item.is_string()) return Violation("'" + std::string(key) + "' holds a non-string");
    std::string s = item.get<std::string>();
    if (!seen.insert(s).second) return Violation("'" + std::string(key) + "' repeats an entry");
    out.push_back(std::move(s));
  }
  return out;
}

bool IsPort(std::string_view s) {
  if (s.empty() || s.size() > 5 || s[0] == '0') return false;
  uint32_t n = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    n = n * 10 + static_cast<uint32_t>(c - '0');
  }
  return n <= 65535;
}

bool IsLabel(std::string_view l) {
  if (l.empty() || l.size() > 63) return false;
  auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  if (!alnum(l.front()) || !alnum(l.back())) return false;
  return std::all_of(l.begin(), l.end(), [&](char c) { return alnum(c) || c == '-'; });
}

// (name, values) pairs counted as the protocol counts them.
bool HeadersFit(const HeaderMap& headers) {
  size_t entries = 0;
  size_t bytes = 0;
  for (const auto& [name, values] : headers) {
    entries += std::max<size_t>(1, values.size());
    bytes += name.size();
    for (const std::string& v : values) bytes += v.size();
    if (entries > kMaxHeaderEntries || bytes > kMaxHeaderBytes) return false;
  }
  return true;
}

Result<void> ParseAllow(const Json& j, Verdict& v) {
  SRT_RETURN_IF_ERROR(
      Keys(j, {"t", "id", "action", "setHeaders", "removeHeaders", "cred", "credential"}, {}));
  if (j.contains("setHeaders")) {
    const Json& set = j.at("setHeaders");
    if (!set.is_object() || set.empty()) return Violation("'setHeaders' is not a non-empty object");
    for (const auto& [name, values] : set.items()) {
      if (!IsLowerToken(name)) return Violation("setHeaders name is not a lower-case token");
      const std::string folded = ascii::FoldHeaderName(name);
      if (IsFramingField(folded) || IsCredentialField(folded)) {
        return Violation("setHeaders may not set '" + name + "'");
      }
      if (!values.is_array()) return Violation("setHeaders values are not an array");
      std::vector<std::string> list;
      for (const Json& value : values) {
        if (!value.is_string()) return Violation("setHeaders value is not a string");
        std::string s = value.get<std::string>();
        if (HasControl(s)) return Violation("setHeaders value has a control character");
        list.push_back(std::move(s));
      }
      v.set_headers.emplace_back(name, std::move(list));
    }
    if (!HeadersFit(v.set_headers)) return Violation("setHeaders past the protocol's limits");
  }
  if (j.contains("removeHeaders")) {
    SRT_ASSIGN_OR_RETURN(v.remove_headers, UniqueStrings(j, "removeHeaders"));
    if (v.remove_headers.empty()) return Violation("'removeHeaders' is empty");
    size_t bytes = 0;
    for (const std::string& name : v.remove_headers) {
      if (!IsLowerToken(name)) return Violation("removeHeaders name is not a lower-case token");
      if (IsFramingField(ascii::FoldHeaderName(name))) {
        return Violation("removeHeaders may not remove '" + name + "'");
      }
      bytes += name.size();
    }
    if (v.remove_headers.size() > kMaxHeaderEntries || bytes > kMaxHeaderBytes) {
      return Violation("removeHeaders past the protocol's limits");
    }
  }
  if (j.contains("cred") != j.contains("credential")) {
    return Violation("'cred' and 'credential' come together");
  }
  if (j.contains("cred")) {
    SRT_ASSIGN_OR_RETURN(v.cred, String(j, "cred"));
    SRT_ASSIGN_OR_RETURN(v.credential, String(j, "credential"));
    if (v.cred.empty() || HasControl(v.cred)) return Violation("'cred' is empty or has a control");
    const bool printable = std::all_of(v.credential.begin(), v.credential.end(), [](char c) {
      return static_cast<uint8_t>(c) >= 0x21 && static_cast<uint8_t>(c) <= 0x7e;
    });
    if (v.credential.empty() || v.credential.size() > kMaxCredentialBytes || !printable) {
      return Violation("'credential' is not 1 to 8192 printable ASCII characters");
    }
  }
  return {};
}

}  // namespace

// ---- Frames ---------------------------------------------------------------------------------

std::string EncodeFrame(std::string_view payload) {
  const auto n = static_cast<uint32_t>(payload.size());
  std::string out;
  out.reserve(4 + payload.size());
  out.push_back(static_cast<char>((n >> 24) & 0xff));
  out.push_back(static_cast<char>((n >> 16) & 0xff));
  out.push_back(static_cast<char>((n >> 8) & 0xff));
  out.push_back(static_cast<char>(n & 0xff));
  out += payload;
  return out;
}

void FrameReader::Append(std::string_view bytes) {
  if (consumed_ > 0 && consumed_ == buffer_.size()) {
    buffer_.clear();
    consumed_ = 0;
  }
  buffer_ += bytes;
}

FrameReader::Status FrameReader::Next(std::string& frame) {
  const std::string_view rest = std::string_view(buffer_).substr(consumed_);
  if (rest.size() < 4) return Status::kNeedMore;
  const uint32_t n = (uint32_t{static_cast<uint8_t>(rest[0])} << 24) |
                     (uint32_t{static_cast<uint8_t>(rest[1])} << 16) |
                     (uint32_t{static_cast<uint8_t>(rest[2])} << 8) |
                     uint32_t{static_cast<uint8_t>(rest[3])};
  if (n > max_frame_) return Status::kOversized;
  if (rest.size() - 4 < n) return Status::kNeedMore;
  frame.assign(rest.substr(4, n));
  consumed_ += 4 + size_t{n};
  if (consumed_ > size_t{64} * 1024 && consumed_ * 2 > buffer_.size()) {
    buffer_.erase(0, consumed_);
    consumed_ = 0;
  }
  return Status::kFrame;
}

// ---- Messages -------------------------------------------------------------------------------

std::string EncodeProxyHello() { return R"({"t":"hello","proto":1})"; }

bool IsEgressEntry(std::string_view s) {
  if (ParseIpAddress(s)) return true;
  if (s.starts_with('[')) {
    const size_t end = s.find(']');
    if (end == std::string_view::npos) return false;
    const std::string_view rest = s.substr(end + 1);
    if (!rest.empty() && (!rest.starts_with(':') || !IsPort(rest.substr(1)))) return false;
    return ParseIpv6(s.substr(1, end - 1)).has_value();
  }
  std::string_view host = s;
  const size_t colon = s.rfind(':');
  if (colon != std::string_view::npos) {
    if (!IsPort(s.substr(colon + 1))) return false;
    host = s.substr(0, colon);
  }
  if (ParseIpAddress(host)) return ParseIpv4(host).has_value();
  const bool wild = host.starts_with("*.");
  const std::string_view base = wild ? host.substr(2) : host;
  if (base.empty() || base.size() > 253) return false;
  size_t labels = 0;
  std::string_view last;
  for (size_t start = 0;;) {
    const size_t dot = base.find('.', start);
    const std::string_view label = base.substr(start, dot - start);
    if (!IsLabel(label)) return false;
    ++labels;
    last = label;
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  if (wild && labels < 2) return false;
  return last.front() >= 'a' && last.front() <= 'z';
}

Result<DeciderHello> ParseDeciderHello(std::string_view frame) {
  SRT_ASSIGN_OR_RETURN(Json j, ParseStrict(frame));
  SRT_RETURN_IF_ERROR(Keys(j, {"t", "proto", "allowedDomains", "deniedDomains"},
                           {"t", "proto", "allowedDomains", "deniedDomains"}));
  SRT_ASSIGN_OR_RETURN(std::string t, String(j, "t"));
  if (t != "hello") return Violation("not a hello");
  SRT_ASSIGN_OR_RETURN(uint64_t proto, Integer(j, "proto", kProto, kProto));
  (void)proto;
  DeciderHello hello;
  SRT_ASSIGN_OR_RETURN(hello.allowed_domains, UniqueStrings(j, "allowedDomains"));
  SRT_ASSIGN_OR_RETURN(hello.denied_domains, UniqueStrings(j, "deniedDomains"));
  for (const auto* list : {&hello.allowed_domains, &hello.denied_domains}) {
    for (const std::string& entry : *list) {
      if (!IsEgressEntry(entry)) return Violation("'" + entry + "' is not an egress entry");
    }
  }
  return hello;
}

Result<std::string> EncodeRequest(const Request& r) {
  auto bad = [](std::string why) { return MakeError(Errc::kInvalidArgument, std::move(why)); };
  HeaderMap grouped;
  for (const auto& [name, value] : r.headers) {
    if (!IsLowerToken(name) || HasControl(value) || !strings::IsValidUtf8(value)) {
      return bad("request header the decider cannot be asked about");
    }
    const std::string& key = name;
    auto it = std::find_if(grouped.begin(), grouped.end(),
                           [&key](const auto& entry) { return entry.first == key; });
    if (it == grouped.end()) {
      grouped.emplace_back(name, std::vector<std::string>{value});
    } else {
      it->second.push_back(value);
    }
  }
  if (!HeadersFit(grouped)) return bad("request headers too large");
  if (r.method.empty() || r.host.empty() || r.path.empty() || r.port == 0) {
    return bad("request the decider cannot be asked about");
  }
  for (const std::string* v : {&r.host, &r.path}) {
    if (v->size() > kMaxHostPathBytes) return bad("request target too large");
  }
  for (const std::optional<std::string>* v : {&r.host_header, &r.sni}) {
    if (*v && (*v)->size() > kMaxHostPathBytes) return bad("request target too large");
  }
  const std::string host_header = r.host_header.value_or("");
  const std::string sni = r.sni.value_or("");
  for (std::string_view v :
       {std::string_view(r.method), std::string_view(r.host), std::string_view(r.path),
        std::string_view(r.query), std::string_view(host_header), std::string_view(sni)}) {
    if (!strings::IsValidUtf8(v) || HasControl(v)) {
      return bad("request the decider cannot be asked about");
    }
  }
  Json j = Json::object();
  j["t"] = "req";
  j["id"] = r.id;
  j["method"] = r.method;
  j["host"] = r.host;
  j["port"] = r.port;
  if (r.host_header) j["hostHeader"] = *r.host_header;
  if (r.sni && !r.sni->empty()) j["sni"] = *r.sni;
  j["path"] = r.path;
  if (!r.query.empty()) j["query"] = r.query;
  if (!grouped.empty()) {
    Json headers = Json::object();
    for (const auto& [name, values] : grouped) headers[name] = values;
    j["headers"] = std::move(headers);
  }
  // Keys in the protocol's order for readability does not matter to JSON; nlohmann sorts them.
  std::string text = j.dump(-1, ' ', false, Json::error_handler_t::replace);
  if (text.size() > kMaxFrameBytes) return bad("request too large for the decider");
  return text;
}

std::string EncodeBody(uint64_t id, std::string_view data, bool cut) {
  return R"({"t":"body","id":)" + std::to_string(id) + R"(,"data":")" + http::EncodeBase64(data) +
         (cut ? R"(","cut":true})" : R"("})");
}

Result<Verdict> ParseVerdict(std::string_view frame) {
  SRT_ASSIGN_OR_RETURN(Json j, ParseStrict(frame));
  if (!j.contains("t") || !j.contains("id") || !j.contains("action")) {
    return Violation("a verdict needs 't', 'id' and 'action'");
  }
  SRT_ASSIGN_OR_RETURN(std::string t, String(j, "t"));
  if (t != "verdict") return Violation("not a verdict");
  Verdict v;
  SRT_ASSIGN_OR_RETURN(v.id, Integer(j, "id", 1, kMaxId));
  SRT_ASSIGN_OR_RETURN(std::string action, String(j, "action"));
  if (action == "allow") {
    v.action = Action::kAllow;
    SRT_RETURN_IF_ERROR(ParseAllow(j, v));
  } else if (action == "deny") {
    v.action = Action::kDeny;
    SRT_RETURN_IF_ERROR(Keys(j, {"t", "id", "action", "status", "reason"}, {"status"}));
    SRT_ASSIGN_OR_RETURN(uint64_t status, Integer(j, "status", 400, 599));
    v.status = static_cast<int>(status);
    if (j.contains("reason")) {
      SRT_ASSIGN_OR_RETURN(v.reason, String(j, "reason"));
      if (v.reason.empty() || v.reason.size() > kMaxReasonBytes || HasControl(v.reason)) {
        return Violation("'reason' is empty, longer than 1 KiB or has a control character");
      }
    }
  } else if (action == "need_body") {
    v.action = Action::kNeedBody;
    SRT_RETURN_IF_ERROR(Keys(j, {"t", "id", "action", "max"}, {"max"}));
    SRT_ASSIGN_OR_RETURN(uint64_t max, Integer(j, "max", 1, kMaxBodyBytes));
    v.max = static_cast<uint32_t>(max);
  } else {
    return Violation("unknown action");
  }
  return v;
}

}  // namespace srt::proxy::decider
