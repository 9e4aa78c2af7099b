// SPDX-License-Identifier: Apache-2.0
// inject/sigv4.cc: SigV4 parsing, canonicalisation and signing (libcrypto for the hashes).
#include "inject/sigv4.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <algorithm>
#include <array>
#include <utility>

#include "base/ascii.h"
#include "base/strings.h"

namespace srt::proxy::inject::sigv4 {
namespace {

constexpr std::string_view kTerminator = "aws4_request";
constexpr char kHex[] = "0123456789abcdef";
constexpr char kHexUpper[] = "0123456789ABCDEF";

std::string ToUpper(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  }
  return out;
}

std::string Hex(const unsigned char* bytes, size_t n) {
  std::string out;
  out.reserve(n * 2);
  for (size_t i = 0; i < n; ++i) {
    out += kHex[bytes[i] >> 4];
    out += kHex[bytes[i] & 0x0f];
  }
  return out;
}

std::string Hmac(std::string_view key, std::string_view data) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> md{};
  unsigned int len = 0;
  // One-shot HMAC: never fails for SHA-256 with in-memory buffers.
  (void)HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
             reinterpret_cast<const unsigned char*>(data.data()), data.size(), md.data(), &len);
  return std::string(reinterpret_cast<const char*>(md.data()), len);
}

bool IsBlank(char c) { return c == ' ' || c == '\t'; }

std::string_view TrimBlanks(std::string_view s) {
  while (!s.empty() && IsBlank(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsBlank(s.back())) s.remove_suffix(1);
  return s;
}

// SigV4's "trimall": blanks trimmed at both ends, runs inside collapsed to one space.
std::string TrimAll(std::string_view value) {
  value = TrimBlanks(value);
  std::string out;
  out.reserve(value.size());
  bool blank = false;
  for (char c : value) {
    if (IsBlank(c)) {
      blank = true;
      continue;
    }
    if (blank) out += ' ';
    blank = false;
    out += c;
  }
  return out;
}

std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (true) {
    const size_t at = s.find(sep, start);
    if (at == std::string_view::npos) {
      out.push_back(s.substr(start));
      return out;
    }
    out.push_back(s.substr(start, at - start));
    start = at + 1;
  }
}

bool IsUnreserved(unsigned char c) {
  return ascii::IsAlpha(c) || ascii::IsDigit(c) || c == '-' || c == '_' || c == '.' || c == '~';
}

// Percent-decoding; nullopt for a malformed escape or a result that is not UTF-8 (what a URL
// parser would refuse to decode).
std::optional<std::string> PercentDecode(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out += s[i];
      continue;
    }
    if (i + 2 >= s.size()) return std::nullopt;
    if (!ascii::IsHexDigit(s[i + 1]) || !ascii::IsHexDigit(s[i + 2])) return std::nullopt;
    out += static_cast<char>(ascii::HexValue(static_cast<uint8_t>(s[i + 1])) * 16 +
                             ascii::HexValue(static_cast<uint8_t>(s[i + 2])));
    i += 2;
  }
  if (!strings::IsValidUtf8(out)) return std::nullopt;
  return out;
}

// A query parameter's value as URLSearchParams reads it ('+' is a space), first occurrence.
std::optional<std::string> QueryParam(std::string_view query, std::string_view name) {
  for (std::string_view part : Split(query, '&')) {
    const size_t eq = part.find('=');
    std::string key(part.substr(0, eq));
    std::string value(eq == std::string_view::npos ? std::string_view() : part.substr(eq + 1));
    std::replace(key.begin(), key.end(), '+', ' ');
    std::replace(value.begin(), value.end(), '+', ' ');
    const std::optional<std::string> k = PercentDecode(key);
    if ((k ? *k : key) != name) continue;
    std::optional<std::string> v = PercentDecode(value);
    return v ? std::move(*v) : value;
  }
  return std::nullopt;
}

// The key id in a `Credential=<akid>/` component anywhere in an Authorization value.
std::optional<std::string> CredentialKeyId(std::string_view auth) {
  constexpr std::string_view kCredential = "Credential=";
  size_t at = auth.find(kCredential);
  while (at != std::string_view::npos) {
    const size_t start = at + kCredential.size();
    size_t end = start;
    while (end < auth.size() && auth[end] != '/' && auth[end] != ',' && !IsBlank(auth[end]) &&
           auth[end] != '\r' && auth[end] != '\n') {
      ++end;
    }
    if (end > start && end < auth.size() && auth[end] == '/') {
      return std::string(auth.substr(start, end - start));
    }
    at = auth.find(kCredential, start);
  }
  return std::nullopt;
}

bool IsTokenChar(char c) {
  return ascii::IsAlpha(c) || ascii::IsDigit(c) || c == '-' || c == '_' || c == '.';
}

}  // namespace

std::string_view ShapeName(Shape shape) {
  switch (shape) {
    case Shape::kHeader:
      return "header";
    case Shape::kStreaming:
      return "streaming";
    case Shape::kPresigned:
      return "presigned";
    case Shape::kSigV4a:
      return "sigv4a";
  }
  return "header";
}

std::optional<std::string_view> FindHeader(const std::vector<Header>& headers,
                                           std::string_view name) {
  for (const Header& h : headers) {
    if (ascii::EqualsIgnoreCase(h.name, name)) return std::string_view(h.value);
  }
  return std::nullopt;
}

std::optional<Authorization> ParseAuthorization(std::string_view value) {
  if (value.size() > kMaxAuthorizationBytes || !value.starts_with(kAlgorithm)) {
    return std::nullopt;
  }
  std::string_view rest = value.substr(kAlgorithm.size());
  if (rest.empty() || !IsBlank(rest.front())) return std::nullopt;
  std::optional<std::string_view> credential;
  std::optional<std::string_view> signed_headers;
  std::optional<std::string_view> signature;
  for (std::string_view part : Split(rest, ',')) {
    part = TrimBlanks(part);
    const size_t eq = part.find('=');
    if (eq == std::string_view::npos) return std::nullopt;
    const std::string_view key = part.substr(0, eq);
    const std::string_view v = part.substr(eq + 1);
    std::optional<std::string_view>* slot = key == "Credential"      ? &credential
                                            : key == "SignedHeaders" ? &signed_headers
                                            : key == "Signature"     ? &signature
                                                                     : nullptr;
    if (slot == nullptr || slot->has_value() || v.empty()) return std::nullopt;
    *slot = v;
  }
  if (!credential || !signed_headers || !signature) return std::nullopt;
  Authorization out;
  const std::vector<std::string_view> scope = Split(*credential, '/');
  if (scope.size() != 5 || scope[4] != kTerminator) return std::nullopt;
  for (size_t i = 0; i < 4; ++i) {
    if (scope[i].empty()) return std::nullopt;
    for (char c : scope[i]) {
      if (static_cast<unsigned char>(c) <= ' ' || c == 0x7f) return std::nullopt;
    }
  }
  out.access_key_id = std::string(scope[0]);
  out.scope = {std::string(scope[1]), std::string(scope[2]), std::string(scope[3])};
  for (std::string_view name : Split(*signed_headers, ';')) {
    if (name.empty() || out.signed_headers.size() >= kMaxSignedHeaders) return std::nullopt;
    if (!std::all_of(name.begin(), name.end(), IsTokenChar)) return std::nullopt;
    std::string lower = ascii::ToLower(name);
    if (std::find(out.signed_headers.begin(), out.signed_headers.end(), lower) !=
        out.signed_headers.end()) {
      return std::nullopt;
    }
    out.signed_headers.push_back(std::move(lower));
  }
  if (!std::all_of(signature->begin(), signature->end(),
                   [](char c) { return ascii::IsHexDigit(c); })) {
    return std::nullopt;
  }
  out.signature = std::string(*signature);
  return out;
}

std::optional<Detected> Detect(const std::vector<Header>& headers, std::string_view target) {
  if (std::optional<std::string_view> auth = FindHeader(headers, "authorization")) {
    if (auth->starts_with(kAlgorithmV4a)) {
      if (std::optional<std::string> akid = CredentialKeyId(*auth)) {
        return Detected{Shape::kSigV4a, std::move(*akid)};
      }
    } else if (auth->starts_with(kAlgorithm)) {
      if (std::optional<std::string> akid = CredentialKeyId(*auth)) {
        const std::optional<std::string_view> sha = FindHeader(headers, "x-amz-content-sha256");
        const bool streaming = sha && sha->starts_with("STREAMING-");
        return Detected{streaming ? Shape::kStreaming : Shape::kHeader, std::move(*akid)};
      }
    }
  }
  // Presigned: looked at whenever the Authorization value did not say, so that an odd
  // Authorization next to a presigned query does not hide the query.
  const size_t q = target.find('?');
  if (q == std::string_view::npos) return std::nullopt;
  const std::string_view query = target.substr(q + 1);
  if (QueryParam(query, "X-Amz-Algorithm") != std::string(kAlgorithm)) return std::nullopt;
  if (!QueryParam(query, "X-Amz-Signature")) return std::nullopt;
  const std::optional<std::string> credential = QueryParam(query, "X-Amz-Credential");
  if (!credential || credential->empty()) return std::nullopt;
  const std::string akid = credential->substr(0, credential->find('/'));
  if (akid.empty()) return std::nullopt;
  return Detected{Shape::kPresigned, akid};
}

std::string UriEncode(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  for (char ch : bytes) {
    const auto c = static_cast<unsigned char>(ch);
    if (IsUnreserved(c)) {
      out += ch;
    } else {
      out += '%';
      out += kHexUpper[c >> 4];
      out += kHexUpper[c & 0x0f];
    }
  }
  return out;
}

std::string CanonicalUri(std::string_view raw_path, std::string_view service) {
  if (raw_path.empty()) return "/";
  if (service == "s3") return std::string(raw_path);
  std::vector<std::string_view> segments;
  for (std::string_view seg : Split(raw_path, '/')) {
    if (seg.empty() || seg == ".") continue;
    if (seg == "..") {
      if (!segments.empty()) segments.pop_back();
    } else {
      segments.push_back(seg);
    }
  }
  std::string out;
  for (std::string_view seg : segments) out += "/" + UriEncode(seg);
  if (out.empty()) return "/";
  if (raw_path.back() == '/') out += '/';
  return out;
}

std::string CanonicalQuery(std::string_view raw_query) {
  if (raw_query.empty()) return "";
  std::vector<std::pair<std::string, std::string>> pairs;
  for (std::string_view part : Split(raw_query, '&')) {
    if (part.empty()) continue;
    const size_t eq = part.find('=');
    const std::string_view key = part.substr(0, eq);
    const std::string_view value =
        eq == std::string_view::npos ? std::string_view() : part.substr(eq + 1);
    const std::optional<std::string> k = PercentDecode(key);
    const std::optional<std::string> v = PercentDecode(value);
    pairs.emplace_back(UriEncode(k ? *k : key), UriEncode(v ? *v : value));
  }
  std::sort(pairs.begin(), pairs.end());
  std::string out;
  for (const auto& [k, v] : pairs) {
    if (!out.empty()) out += '&';
    out += k + "=" + v;
  }
  return out;
}

Result<std::string> CanonicalRequest(const Request& request) {
  const size_t q = request.target.find('?');
  const std::string_view path = request.target.substr(0, q);
  const std::string_view query =
      q == std::string_view::npos ? std::string_view() : request.target.substr(q + 1);
  std::vector<std::string> names;
  names.reserve(request.signed_headers.size());
  for (const std::string& n : request.signed_headers) names.push_back(ascii::ToLower(n));
  std::sort(names.begin(), names.end());
  std::string headers;
  for (const std::string& name : names) {
    std::string joined;
    bool found = false;
    for (const Header& h : *request.headers) {
      if (!ascii::EqualsIgnoreCase(h.name, name)) continue;
      if (found) joined += ',';
      joined += TrimAll(h.value);
      found = true;
    }
    if (!found) {
      return MakeError(Errc::kInvalidArgument,
                       "signed header \"" + name + "\" is missing from the request");
    }
    headers += name + ":" + joined + "\n";
  }
  std::string signed_list;
  for (const std::string& name : names) {
    if (!signed_list.empty()) signed_list += ';';
    signed_list += name;
  }
  std::string out = ToUpper(request.method);
  out += '\n';
  out += CanonicalUri(path, request.scope.service);
  out += '\n';
  out += CanonicalQuery(query);
  out += '\n';
  out += headers;
  out += '\n';
  out += signed_list;
  out += '\n';
  out += request.payload_hash;
  return out;
}

std::string StringToSign(std::string_view canonical_request, std::string_view amz_date,
                         const Scope& scope) {
  std::string out(kAlgorithm);
  out += '\n';
  out += amz_date;
  out += '\n';
  out += scope.date + "/" + scope.region + "/" + scope.service + "/" + std::string(kTerminator);
  out += '\n';
  out += Sha256Hex(canonical_request);
  return out;
}

std::string SigningKey(std::string_view secret, const Scope& scope) {
  std::string key = "AWS4";
  key += secret;
  const std::string date = Hmac(key, scope.date);
  const std::string region = Hmac(date, scope.region);
  const std::string service = Hmac(region, scope.service);
  return Hmac(service, kTerminator);
}

std::string Sha256Hex(std::string_view data) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> md{};
  unsigned int len = 0;
  (void)EVP_Digest(data.data(), data.size(), md.data(), &len, EVP_sha256(), nullptr);
  return Hex(md.data(), len);
}

std::string HmacSha256Hex(std::string_view key, std::string_view data) {
  const std::string mac = Hmac(key, data);
  return Hex(reinterpret_cast<const unsigned char*>(mac.data()), mac.size());
}

Result<std::string> Sign(const Request& request, std::string_view access_key_id,
                         std::string_view secret) {
  SRT_ASSIGN_OR_RETURN(std::string canonical, CanonicalRequest(request));
  const std::string to_sign = StringToSign(canonical, request.amz_date, request.scope);
  const std::string signature = HmacSha256Hex(SigningKey(secret, request.scope), to_sign);
  std::vector<std::string> names;
  for (const std::string& n : request.signed_headers) names.push_back(ascii::ToLower(n));
  std::sort(names.begin(), names.end());
  std::string list;
  for (const std::string& n : names) list += (list.empty() ? "" : ";") + n;
  const Scope& s = request.scope;
  return std::string(kAlgorithm) + " Credential=" + std::string(access_key_id) + "/" + s.date +
         "/" + s.region + "/" + s.service + "/" + std::string(kTerminator) +
         ", SignedHeaders=" + list + ", Signature=" + signature;
}

}  // namespace srt::proxy::inject::sigv4
