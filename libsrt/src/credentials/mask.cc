// SPDX-License-Identifier: Apache-2.0
// credentials/mask.cc: sentinels, extract spans, fake JWTs, the masked environment.
#include "credentials/mask.h"

#include <re2/re2.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

namespace srt::credentials {
namespace {

constexpr std::string_view kLower = "abcdefghijklmnopqrstuvwxyz0123456789";
constexpr std::string_view kPadding = "abcdefghijklmnopqrstuvwxyz0123456789_-";
constexpr std::string_view kBase64Url =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
constexpr size_t kUuidSentinelLength = 47;  // "fake_value_" + 36
constexpr size_t kMinMatchedLength = 32;
// A fake JWT's expiry: far in the future, as upstream's (year 2286).
constexpr int64_t kFakeJwtExp = 9999999999;

Result<std::string> Chars(size_t n, std::string_view alphabet, const RandomSource& random) {
  SRT_ASSIGN_OR_RETURN(std::string bytes, random(n));
  if (bytes.size() != n) return MakeError(Errc::kInternal, "the random source came up short");
  std::string out;
  out.reserve(n);
  for (char b : bytes) out += alphabet[static_cast<unsigned char>(b) % alphabet.size()];
  return out;
}

Result<std::string> Uuid4(const RandomSource& random) {
  SRT_ASSIGN_OR_RETURN(std::string b, random(16));
  if (b.size() != 16) return MakeError(Errc::kInternal, "the random source came up short");
  b[6] = static_cast<char>((b[6] & 0x0f) | 0x40);  // RFC 9562 §5.4: version 4
  b[8] = static_cast<char>((b[8] & 0x3f) | 0x80);  // variant 10
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out += '-';
    out += kHex[(static_cast<unsigned char>(b[i]) >> 4) & 0xf];
    out += kHex[static_cast<unsigned char>(b[i]) & 0xf];
  }
  return out;
}

std::string Base64UrlEncode(std::string_view in) {
  std::string out;
  size_t i = 0;
  // As uint32_t: an unsigned char shifted promotes to int, which clang's -Wsign-conversion
  // refuses to narrow back.
  auto at = [&](size_t k) { return uint32_t{static_cast<unsigned char>(in[k])}; };
  for (; i + 2 < in.size(); i += 3) {
    const uint32_t v = (at(i) << 16) | (at(i + 1) << 8) | at(i + 2);
    for (int s = 18; s >= 0; s -= 6) out += kBase64Url[(v >> s) & 63];
  }
  if (in.size() - i == 1) {
    const uint32_t v = at(i) << 16;
    out += kBase64Url[(v >> 18) & 63];
    out += kBase64Url[(v >> 12) & 63];
  } else if (in.size() - i == 2) {
    const uint32_t v = (at(i) << 16) | (at(i + 1) << 8);
    for (int s = 18; s >= 6; s -= 6) out += kBase64Url[(v >> s) & 63];
  }
  return out;
}

std::optional<std::string> Base64UrlDecode(std::string_view in) {
  std::string out;
  uint32_t acc = 0;
  int bits = 0;
  for (char c : in) {
    const size_t v = kBase64Url.find(c);
    if (v == std::string_view::npos) return std::nullopt;
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((acc >> bits) & 0xff);
    }
  }
  if (bits >= 6) return std::nullopt;  // a length of 1 mod 4
  return out;
}

using Json = nlohmann::ordered_json;

std::optional<Json> DecodeSegment(std::string_view segment) {
  std::optional<std::string> text = Base64UrlDecode(segment);
  if (!text) return std::nullopt;
  Json j = Json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return std::nullopt;
  return j;
}

std::vector<std::string_view> Split3(std::string_view token) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  for (;;) {
    const size_t dot = token.find('.', start);
    parts.push_back(token.substr(start, dot == std::string_view::npos ? dot : dot - start));
    if (dot == std::string_view::npos || parts.size() > 3) break;
    start = dot + 1;
  }
  return parts;
}

// A JWT (RFC 7519): three base64url segments, a JSON header with "alg", a JSON payload.
bool IsJwt(std::string_view token) {
  const std::vector<std::string_view> parts = Split3(token);
  if (parts.size() != 3) return false;
  std::optional<Json> header = DecodeSegment(parts[0]);
  if (!header || !header->is_object() || !header->contains("alg")) return false;
  return DecodeSegment(parts[1]).has_value();
}

// "<header>.<payload>." followed by a filler signature that brings the token to `length` bytes
// when it can (a signature of at least 16 characters and not 1 mod 4 long, which no base64url
// text is); else a 43-character one (an HS256 signature's length).
Result<std::string> WithSignature(const std::string& head, size_t length,
                                  const RandomSource& random) {
  size_t sig = 43;
  if (length >= head.size() + 16 && (length - head.size()) % 4 != 1) sig = length - head.size();
  SRT_ASSIGN_OR_RETURN(std::string filler, Chars(sig, kBase64Url, random));
  return head + filler;
}

Result<std::string> FakeJwt(size_t length, const RandomSource& random) {
  SRT_ASSIGN_OR_RETURN(std::string uuid, Uuid4(random));
  const std::string header = Base64UrlEncode(R"({"alg":"HS256","typ":"JWT"})");
  Json payload = {{"sub", std::string(kSentinelPrefix) + uuid}, {"exp", kFakeJwtExp}};
  std::string head = header + "." + Base64UrlEncode(payload.dump()) + ".";
  // A value that does not fit a length match exactly pads the subject (bytes of payload change
  // the encoded length by 1 or 2), so the signature can take the rest.
  for (int pad = 0; pad < 3 && !(length >= head.size() + 16 && (length - head.size()) % 4 != 1);
       ++pad) {
    payload["sub"] = payload["sub"].get<std::string>() + "0";
    head = header + "." + Base64UrlEncode(payload.dump()) + ".";
  }
  return WithSignature(head, length, random);
}

struct Span {
  size_t start;
  size_t end;
  std::string sentinel;
};

std::string Splice(std::string_view real, std::vector<Span>& spans) {
  std::sort(spans.begin(), spans.end(),
            [](const Span& a, const Span& b) { return a.start < b.start; });
  std::string out;
  size_t pos = 0;
  for (const Span& s : spans) {
    out.append(real.substr(pos, s.start - pos));
    out += s.sentinel;
    pos = s.end;
  }
  out.append(real.substr(pos));
  return out;
}

Masked NoMatch(std::string_view name, const CredentialMaskOptions& options, std::string_view what,
               std::string_view real) {
  Masked m;
  const ExtractNoMatch action = options.on_extract_no_match.value_or(ExtractNoMatch::kDeny);
  if (action == ExtractNoMatch::kWarn) {
    m.outcome = Masked::Outcome::kPassed;
    m.fake = std::string(real);
    m.warning = "credentials: " + std::string(name) + ": " + std::string(what) +
                "; the real value is left UNPROTECTED (onExtractNoMatch \"warn\")";
  } else {
    m.outcome = Masked::Outcome::kDenied;
    m.warning = "credentials: " + std::string(name) + ": " + std::string(what) +
                "; treated as denied (onExtractNoMatch \"deny\")";
  }
  return m;
}

Result<Masked> MaskJwt(std::string_view name, std::string_view real,
                       const CredentialMaskOptions& options,
                       const std::vector<DomainPattern>& hosts, const RandomSource& random) {
  const std::string what = "does not verify as a JWT (decode \"jwt\")";
  auto no_match = [&](std::string_view why) -> Result<Masked> {
    if (options.on_extract_no_match == ExtractNoMatch::kError) {
      return MakeError(Errc::kInvalidArgument,
                       "credentials: " + std::string(name) + ": " + std::string(why) +
                           " (onExtractNoMatch: \"error\"); fix the entry or remove it");
    }
    return NoMatch(name, options, why, real);
  };
  if (!IsJwt(real)) return no_match(what);
  Masked m;
  if (options.mask_claims.empty()) {
    SRT_ASSIGN_OR_RETURN(m.fake, FakeJwt(real.size(), random));
    m.secrets.push_back({std::string(name), m.fake, std::string(real), hosts});
    return m;
  }
  const std::vector<std::string_view> parts = Split3(real);
  Json payload = *DecodeSegment(parts[1]);
  if (!payload.is_object()) return no_match("has a JWT payload that is not an object");
  bool any = false;
  for (const std::string& claim : options.mask_claims) {
    auto it = payload.find(claim);
    if (it == payload.end() || !it->is_string() || it->get_ref<const std::string&>().empty()) {
      continue;
    }
    const std::string value = it->get<std::string>();
    SRT_ASSIGN_OR_RETURN(std::string sentinel, MintSentinel(value.size(), random));
    m.secrets.push_back({std::string(name) + "#" + claim, sentinel, value, hosts});
    *it = sentinel;
    any = true;
  }
  if (!any) return no_match("has none of maskClaims as a string claim of its JWT");
  SRT_ASSIGN_OR_RETURN(
      m.fake, WithSignature(std::string(parts[0]) + "." + Base64UrlEncode(payload.dump()) + ".",
                            real.size(), random));
  // The whole fake token maps back to the real one; its claims' sentinels come first so the
  // token (which contains them only encoded) is matched as a whole.
  m.secrets.push_back({std::string(name), m.fake, std::string(real), hosts});
  return m;
}

}  // namespace

Result<std::string> MintSentinel(size_t real_length, const RandomSource& random) {
  std::string out(kSentinelPrefix);
  if (real_length >= kUuidSentinelLength) {
    SRT_ASSIGN_OR_RETURN(std::string uuid, Uuid4(random));
    out += uuid;
    SRT_ASSIGN_OR_RETURN(std::string pad, Chars(real_length - out.size(), kPadding, random));
    return out + pad;
  }
  if (real_length >= kMinMatchedLength) {
    SRT_ASSIGN_OR_RETURN(std::string rest, Chars(real_length - out.size(), kLower, random));
    return out + rest;
  }
  SRT_ASSIGN_OR_RETURN(std::string uuid, Uuid4(random));
  return out + uuid;
}

std::vector<DomainPattern> InjectHosts(const CredentialMaskOptions& options,
                                       const std::vector<std::string>& allowed) {
  std::vector<DomainPattern> out;
  for (const std::string& entry : options.inject_hosts ? *options.inject_hosts : allowed) {
    Result<DomainPattern> p = ParseDomainPattern(entry, PatternList::kAllow);
    if (!p) continue;  // the decoder validated every entry
    p->port.reset();
    if (std::find(out.begin(), out.end(), *p) == out.end()) out.push_back(std::move(*p));
  }
  return out;
}

Result<Masked> MaskValue(std::string_view name, std::string_view real,
                         const CredentialMaskOptions& options,
                         const std::vector<DomainPattern>& inject_hosts,
                         const RandomSource& random) {
  if (real.size() > kMaxMaskedValueBytes) {
    return MakeError(Errc::kInvalidArgument,
                     "credentials: " + std::string(name) + " is larger than " +
                         std::to_string(kMaxMaskedValueBytes / 1024) +
                         " KiB, more than srt masks; use extract to mask the secret inside it, "
                         "or mode \"deny\"");
  }
  if (real.empty()) return Masked{Masked::Outcome::kMasked, "", {}, ""};
  if (options.decode_jwt && !options.extract) {
    return MaskJwt(name, real, options, inject_hosts, random);
  }
  if (!options.extract) {
    Masked m;
    SRT_ASSIGN_OR_RETURN(m.fake, MintSentinel(real.size(), random));
    m.secrets.push_back({std::string(name), m.fake, std::string(real), inject_hosts});
    return m;
  }
  RE2::Options re_options;
  re_options.set_log_errors(false);
  const RE2 re(*options.extract, re_options);
  if (!re.ok() || re.NumberOfCapturingGroups() < 1) {
    return MakeError(Errc::kInvalidArgument,
                     "credentials: " + std::string(name) + ": extract is not a usable pattern");
  }
  Masked m;
  std::vector<Span> spans;
  std::map<std::string, std::string, std::less<>> sentinel_of;  // capture -> its sentinel
  bool unmaskable = false;  // a capture that cannot be masked (decode "jwt")
  re2::StringPiece input(real.data(), real.size());
  re2::StringPiece group[2];
  size_t pos = 0;
  while (pos <= real.size() && re.Match(input, pos, real.size(), RE2::UNANCHORED, group, 2)) {
    const size_t match_end = static_cast<size_t>(group[0].data() - real.data()) + group[0].size();
    if (group[1].data() != nullptr && !group[1].empty()) {
      const std::string capture(group[1].data(), group[1].size());
      auto it = sentinel_of.find(capture);
      if (it == sentinel_of.end()) {
        std::string sentinel;
        if (options.decode_jwt) {
          // A capture that is no JWT, or one MaskJwt will not mask (no maskClaims, does not
          // verify), would stay in the sandbox as it is: the whole value then goes the way of
          // onExtractNoMatch below, never this capture alone in clear.
          if (!IsJwt(capture)) {
            unmaskable = true;
          } else {
            SRT_ASSIGN_OR_RETURN(Masked jwt, MaskJwt(name, capture, options, inject_hosts, random));
            if (jwt.outcome != Masked::Outcome::kMasked || jwt.fake.empty() ||
                jwt.fake == capture) {
              unmaskable = true;
            } else {
              sentinel = jwt.fake;
              for (CredentialSecret& s : jwt.secrets) {
                s.name += "#" + std::to_string(sentinel_of.size());
                m.secrets.push_back(std::move(s));
              }
            }
          }
        } else {
          SRT_ASSIGN_OR_RETURN(sentinel, MintSentinel(capture.size(), random));
          m.secrets.push_back({std::string(name) + "#" + std::to_string(sentinel_of.size()),
                               sentinel, capture, inject_hosts});
        }
        if (!sentinel.empty()) it = sentinel_of.emplace(capture, sentinel).first;
      }
      if (it != sentinel_of.end()) {
        const size_t start = static_cast<size_t>(group[1].data() - real.data());
        spans.push_back({start, start + group[1].size(), it->second});
      }
    }
    pos = match_end > pos ? match_end : pos + 1;  // an empty match moves on by one
  }
  if (sentinel_of.empty() || unmaskable) {
    const std::string what = unmaskable ? "extract found a capture that is no JWT srt can mask "
                                          "(decode \"jwt\"), which would stay in clear"
                             : options.decode_jwt
                                 ? "extract found no JWT that verifies (decode \"jwt\")"
                                 : "extract pattern matched nothing in the value";
    if (options.on_extract_no_match == ExtractNoMatch::kError) {
      return MakeError(Errc::kInvalidArgument,
                       "credentials: " + std::string(name) + ": " + what +
                           " (onExtractNoMatch: \"error\"); fix the regex, change to "
                           "\"warn\"/\"deny\", or remove the entry");
    }
    return NoMatch(name, options, what, real);
  }
  if (options.mask_duplicates) {
    // Verbatim copies of each capture outside the matched spans, longest capture first.
    std::vector<std::pair<std::string, std::string>> by_length(sentinel_of.begin(),
                                                               sentinel_of.end());
    std::sort(by_length.begin(), by_length.end(),
              [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
    for (const auto& [capture, sentinel] : by_length) {
      for (size_t at = real.find(capture); at != std::string_view::npos;
           at = real.find(capture, at + 1)) {
        const size_t end = at + capture.size();
        const bool overlaps = std::any_of(
            spans.begin(), spans.end(), [&](const Span& s) { return at < s.end && s.start < end; });
        if (!overlaps) spans.push_back({at, end, sentinel});
      }
    }
  }
  m.fake = Splice(real, spans);
  return m;
}

namespace {

constexpr std::string_view kAwsKeyIdVar = "AWS_ACCESS_KEY_ID";
constexpr std::string_view kAwsSecretVar = "AWS_SECRET_ACCESS_KEY";
constexpr std::string_view kAwsTokenVar = "AWS_SESSION_TOKEN";

std::vector<AwsKeyPair> AwsPairs(const std::vector<AwsPairSettings>& explicit_pairs,
                                 const std::vector<std::pair<std::string, CredentialSecret>>& whole,
                                 std::vector<std::string>& warnings,
                                 std::vector<std::string>& paired_secrets) {
  std::vector<AwsPairSettings> specs = explicit_pairs;
  const bool conventional_named =
      std::any_of(specs.begin(), specs.end(), [](const AwsPairSettings& p) {
        for (std::string_view n : {kAwsKeyIdVar, kAwsSecretVar, kAwsTokenVar}) {
          if (p.access_key_id_var == n || p.secret_access_key_var == n ||
              p.session_token_var == n) {
            return true;
          }
        }
        return false;
      });
  if (!conventional_named) {
    specs.push_back(
        {std::string(kAwsKeyIdVar), std::string(kAwsSecretVar), std::string(kAwsTokenVar)});
  }
  auto masked = [&](const std::string& name) -> const CredentialSecret* {
    for (const auto& [n, secret] : whole) {
      if (n == name) return &secret;
    }
    return nullptr;
  };
  std::vector<AwsKeyPair> out;
  for (const AwsPairSettings& spec : specs) {
    const CredentialSecret* key_id = masked(spec.access_key_id_var);
    const CredentialSecret* secret = masked(spec.secret_access_key_var);
    if (key_id == nullptr || secret == nullptr) {
      if (secret != nullptr) {
        warnings.push_back("credentials: " + spec.secret_access_key_var + " is masked but " +
                           spec.access_key_id_var +
                           " is not, so no AWS key pair was made: SigV4 requests are signed "
                           "with the masked placeholder secret and srt's proxy cannot re-sign "
                           "them (they fail at the origin). Mask both variables (whole value) "
                           "to have them re-signed.");
      }
      continue;
    }
    paired_secrets.push_back(secret->name);
    const CredentialSecret* token =
        spec.session_token_var ? masked(*spec.session_token_var) : nullptr;
    out.push_back({key_id->name, key_id->sentinel, key_id->real, secret->real,
                   token != nullptr ? token->real : std::string(), key_id->inject_hosts});
  }
  return out;
}

}  // namespace

Result<EnvironmentPlan> PlanEnvironment(const CredentialSettings& credentials,
                                        const std::vector<std::string>& allowed,
                                        std::vector<std::string> environment,
                                        const RandomSource& random) {
  EnvironmentPlan plan;
  // Whole-value masked variables: name -> their secret (for awsPairs).
  std::vector<std::pair<std::string, CredentialSecret>> whole;
  auto find = [&](const std::string& name) {
    return std::find_if(environment.begin(), environment.end(), [&](const std::string& e) {
      return e.size() > name.size() && e[name.size()] == '=' && e.starts_with(name);
    });
  };
  for (const CredentialEnvVar& v : credentials.env_vars) {
    auto it = find(v.name);
    if (it == environment.end()) {
      plan.notes.push_back("credentials: env " + v.name + " is not set, nothing to " +
                           (v.mode == CredentialMode::kDeny ? "deny" : "mask"));
      continue;
    }
    if (v.mode == CredentialMode::kDeny) {
      std::erase_if(environment, [&](const std::string& e) {
        return e.size() > v.name.size() && e[v.name.size()] == '=' && e.starts_with(v.name);
      });
      plan.notes.push_back("credentials: env " + v.name + " denied (unset in the sandbox)");
      continue;
    }
    const std::string real = it->substr(v.name.size() + 1);
    SRT_ASSIGN_OR_RETURN(
        Masked m, MaskValue("env " + v.name, real, v.mask, InjectHosts(v.mask, allowed), random));
    switch (m.outcome) {
      case Masked::Outcome::kMasked:
        // Every copy of the variable goes (an environment may hold a name twice), then the fake.
        std::erase_if(environment, [&](const std::string& e) {
          return e.size() > v.name.size() && e[v.name.size()] == '=' && e.starts_with(v.name);
        });
        environment.push_back(v.name + "=" + m.fake);
        if (!v.mask.extract && !v.mask.decode_jwt && m.secrets.size() == 1) {
          whole.emplace_back(v.name, m.secrets[0]);
        }
        for (CredentialSecret& s : m.secrets) plan.secrets.push_back(std::move(s));
        plan.notes.push_back("credentials: env " + v.name + " masked");
        break;
      case Masked::Outcome::kDenied:
        std::erase_if(environment, [&](const std::string& e) {
          return e.size() > v.name.size() && e[v.name.size()] == '=' && e.starts_with(v.name);
        });
        plan.warnings.push_back(m.warning);
        break;
      case Masked::Outcome::kPassed:
        plan.warnings.push_back(m.warning);
        break;
    }
  }
  if (plan.secrets.size() > kMaxSecrets) {
    return MakeError(Errc::kInvalidArgument, "credentials: more than " +
                                                 std::to_string(kMaxSecrets) +
                                                 " masked values; srt's proxy scans for at most "
                                                 "that many");
  }
  std::vector<std::string> paired_secrets;
  plan.aws_pairs = AwsPairs(credentials.aws_pairs, whole, plan.warnings, paired_secrets);
  // A pair's secret access key is an HMAC key: no request carries it, and the re-signer takes it
  // from the pair. Swapped into a header or body it would hand the real key to any of its hosts
  // (an S3 object the sandbox uploads), so it is never injected; a response that echoes it still
  // gets the sentinel back.
  for (CredentialSecret& secret : plan.secrets) {
    if (std::find(paired_secrets.begin(), paired_secrets.end(), secret.name) !=
        paired_secrets.end()) {
      secret.inject_hosts.clear();
    }
  }
  plan.environment = std::move(environment);
  return plan;
}

}  // namespace srt::credentials
