// SPDX-License-Identifier: Apache-2.0
// inject/sigv4 and inject/sigv4_plan: AWS's published SigV4 examples (the aws-sig-v4-test-suite's
// get-vanilla and get-vanilla-query-order-key-case, the IAM ListUsers walk-through, the S3
// GetObject example) reproduced byte for byte; the Authorization grammar; the re-sign decision.
#include "inject/sigv4.h"

#include <gtest/gtest.h>

#include "inject/sigv4_plan.h"

namespace srt::proxy::inject {
namespace {

using sigv4::Header;

constexpr std::string_view kSecret = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";
constexpr std::string_view kEmptyHash =
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

std::string Hex(std::string_view raw) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (char c : raw) {
    out += kDigits[static_cast<unsigned char>(c) >> 4];
    out += kDigits[static_cast<unsigned char>(c) & 0x0f];
  }
  return out;
}

TEST(SigV4, EmptyPayloadHash) { EXPECT_EQ(sigv4::Sha256Hex(""), kEmptyHash); }

// aws-sig-v4-test-suite/get-vanilla.
TEST(SigV4, GetVanilla) {
  const std::vector<Header> headers{{"Host", "example.amazonaws.com"},
                                    {"X-Amz-Date", "20150830T123600Z"}};
  const sigv4::Request r{"GET",
                         "/",
                         &headers,
                         {"host", "x-amz-date"},
                         kEmptyHash,
                         "20150830T123600Z",
                         {"20150830", "us-east-1", "service"}};
  Result<std::string> canonical = sigv4::CanonicalRequest(r);
  ASSERT_TRUE(canonical.has_value());
  EXPECT_EQ(*canonical,
            "GET\n/\n\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\n"
            "host;x-amz-date\n" +
                std::string(kEmptyHash));
  Result<std::string> auth = sigv4::Sign(r, "AKIDEXAMPLE", kSecret);
  ASSERT_TRUE(auth.has_value());
  EXPECT_EQ(*auth,
            "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, "
            "SignedHeaders=host;x-amz-date, "
            "Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31");
}

// aws-sig-v4-test-suite/get-vanilla-query-order-key-case: the query is sorted.
TEST(SigV4, GetVanillaQueryOrder) {
  const std::vector<Header> headers{{"Host", "example.amazonaws.com"},
                                    {"X-Amz-Date", "20150830T123600Z"}};
  const sigv4::Request r{"GET",
                         "/?Param2=value2&Param1=value1",
                         &headers,
                         {"host", "x-amz-date"},
                         kEmptyHash,
                         "20150830T123600Z",
                         {"20150830", "us-east-1", "service"}};
  Result<std::string> auth = sigv4::Sign(r, "AKIDEXAMPLE", kSecret);
  ASSERT_TRUE(auth.has_value());
  EXPECT_TRUE(
      auth->ends_with("Signature=b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500"))
      << *auth;
}

// The IAM ListUsers example of AWS's SigV4 documentation: each intermediate value.
TEST(SigV4, IamListUsersWalkThrough) {
  const std::vector<Header> headers{
      {"Content-Type", "application/x-www-form-urlencoded; charset=utf-8"},
      {"Host", "iam.amazonaws.com"},
      {"X-Amz-Date", "20150830T123600Z"}};
  const sigv4::Scope scope{"20150830", "us-east-1", "iam"};
  const sigv4::Request r{"GET",      "/?Action=ListUsers&Version=2010-05-08",
                         &headers,   {"content-type", "host", "x-amz-date"},
                         kEmptyHash, "20150830T123600Z",
                         scope};
  Result<std::string> canonical = sigv4::CanonicalRequest(r);
  ASSERT_TRUE(canonical.has_value());
  EXPECT_EQ(sigv4::Sha256Hex(*canonical),
            "f536975d06c0309214f805bb90ccff089219ecd68b2577efef23edd43b7e1a59");
  EXPECT_EQ(Hex(sigv4::SigningKey(kSecret, scope)),
            "c4afb1cc5771d871763a393e44b703571b55cc28424d1a5e86da6ed3c154a4b9");
  Result<std::string> auth = sigv4::Sign(r, "AKIDEXAMPLE", kSecret);
  ASSERT_TRUE(auth.has_value());
  EXPECT_EQ(*auth,
            "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/iam/aws4_request, "
            "SignedHeaders=content-type;host;x-amz-date, "
            "Signature=5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7");
}

// The S3 GetObject example (a Range header, the payload hash in x-amz-content-sha256).
TEST(SigV4, S3GetObject) {
  const std::vector<Header> headers{{"Host", "examplebucket.s3.amazonaws.com"},
                                    {"Range", "bytes=0-9"},
                                    {"x-amz-content-sha256", std::string(kEmptyHash)},
                                    {"x-amz-date", "20130524T000000Z"}};
  const sigv4::Request r{"GET",
                         "/test.txt",
                         &headers,
                         {"host", "range", "x-amz-content-sha256", "x-amz-date"},
                         kEmptyHash,
                         "20130524T000000Z",
                         {"20130524", "us-east-1", "s3"}};
  Result<std::string> auth =
      sigv4::Sign(r, "AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY");
  ASSERT_TRUE(auth.has_value());
  EXPECT_TRUE(
      auth->ends_with("Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41"))
      << *auth;
}

TEST(SigV4, CanonicalHeadersTrimAndJoin) {
  const std::vector<Header> headers{
      {"Host", "h"}, {"X-A", "  a   b\t c  "}, {"x-a", "second"}, {"X-Amz-Date", "d"}};
  Result<std::string> c = sigv4::CanonicalRequest(
      {"get", "/", &headers, {"x-a", "host"}, "UNSIGNED-PAYLOAD", "d", {"d", "r", "s"}});
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(*c, "GET\n/\n\nhost:h\nx-a:a b c,second\n\nhost;x-a\nUNSIGNED-PAYLOAD");
}

TEST(SigV4, MissingSignedHeaderIsAnError) {
  const std::vector<Header> headers{{"Host", "h"}};
  Result<std::string> c = sigv4::CanonicalRequest(
      {"GET", "/", &headers, {"host", "x-amz-date"}, kEmptyHash, "d", {"d", "r", "s"}});
  ASSERT_FALSE(c.has_value());
  EXPECT_EQ(c.error().message(), "signed header \"x-amz-date\" is missing from the request");
}

TEST(SigV4, CanonicalUri) {
  EXPECT_EQ(sigv4::CanonicalUri("", "svc"), "/");
  EXPECT_EQ(sigv4::CanonicalUri("/a/./b/../c//d/", "svc"), "/a/c/d/");
  EXPECT_EQ(sigv4::CanonicalUri("/..", "svc"), "/");
  // Wire-encoded paths are encoded once more, except for S3 (byte-significant keys).
  EXPECT_EQ(sigv4::CanonicalUri("/a%20b/c d", "svc"), "/a%2520b/c%20d");
  EXPECT_EQ(sigv4::CanonicalUri("/a%20b/./c", "s3"), "/a%20b/./c");
}

TEST(SigV4, CanonicalQuery) {
  EXPECT_EQ(sigv4::CanonicalQuery(""), "");
  EXPECT_EQ(sigv4::CanonicalQuery("b=2&a=1&a=0"), "a=0&a=1&b=2");
  EXPECT_EQ(sigv4::CanonicalQuery("k&x=a+b&&y=%7e%21"), "k=&x=a%2Bb&y=~%21");
  // A malformed escape is encoded as it stands.
  EXPECT_EQ(sigv4::CanonicalQuery("p=%zz"), "p=%25zz");
  EXPECT_EQ(sigv4::UriEncode("a-_.~ /*'()!"), "a-_.~%20%2F%2A%27%28%29%21");
}

TEST(SigV4, ParseAuthorization) {
  std::optional<sigv4::Authorization> a = sigv4::ParseAuthorization(
      "AWS4-HMAC-SHA256 Credential=AKID/20150830/us-east-1/iam/aws4_request, "
      "SignedHeaders=Host;x-amz-date,Signature=00ff");
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->access_key_id, "AKID");
  EXPECT_EQ(a->scope, (sigv4::Scope{"20150830", "us-east-1", "iam"}));
  EXPECT_EQ(a->signed_headers, (std::vector<std::string>{"host", "x-amz-date"}));
  EXPECT_EQ(a->signature, "00ff");
  for (std::string_view bad : {
           "AWS4-HMAC-SHA256",
           "AWS4-HMAC-SHA256Credential=A/d/r/s/aws4_request, SignedHeaders=host, Signature=00",
           "AWS4-HMAC-SHA256 Credential=A/d/r/s/aws4_request, SignedHeaders=host",
           "AWS4-HMAC-SHA256 Credential=A/d/r/s/other, SignedHeaders=host, Signature=00",
           "AWS4-HMAC-SHA256 Credential=A/d/r/aws4_request, SignedHeaders=host, Signature=00",
           "AWS4-HMAC-SHA256 Credential=A//r/s/aws4_request, SignedHeaders=host, Signature=00",
           "AWS4-HMAC-SHA256 Credential=A/d/r/s/aws4_request, SignedHeaders=host, Signature=xy",
           "AWS4-HMAC-SHA256 Credential=A/d/r/s/aws4_request, SignedHeaders=host;;a, Signature=00",
           "AWS4-HMAC-SHA256 Credential=A/d/r/s/aws4_request, SignedHeaders=host;host, "
           "Signature=00",
           "AWS4-HMAC-SHA256 Credential=A/d/r/s/aws4_request, SignedHeaders=host, Signature=00, "
           "Signature=00",
           "AWS4-HMAC-SHA256 Credential=A/d/r/s/aws4_request, SignedHeaders=ho st, Signature=00",
           "AWS4-ECDSA-P256-SHA256 Credential=A/d/s/aws4_request, SignedHeaders=host, Signature=0",
       }) {
    EXPECT_FALSE(sigv4::ParseAuthorization(bad).has_value()) << bad;
  }
}

TEST(SigV4, Detect) {
  auto detect = [](std::vector<Header> h, std::string_view target) {
    return sigv4::Detect(h, target);
  };
  const std::string auth =
      "AWS4-HMAC-SHA256 Credential=FAKE/20150830/us-east-1/s3/aws4_request, "
      "SignedHeaders=host, Signature=00";
  std::optional<sigv4::Detected> d = detect({{"Authorization", auth}}, "/");
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->shape, sigv4::Shape::kHeader);
  EXPECT_EQ(d->access_key_id, "FAKE");
  d = detect(
      {{"authorization", auth}, {"X-Amz-Content-Sha256", "STREAMING-AWS4-HMAC-SHA256-PAYLOAD"}},
      "/");
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->shape, sigv4::Shape::kStreaming);
  d = detect({{"Authorization", "AWS4-ECDSA-P256-SHA256 Credential=FAKE/20150830/s3/aws4_request"}},
             "/");
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->shape, sigv4::Shape::kSigV4a);
  d = detect({},
             "/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=FAKE%2F20150830%2Fus-east-1%2Fs3"
             "%2Faws4_request&X-Amz-Signature=00");
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->shape, sigv4::Shape::kPresigned);
  EXPECT_EQ(d->access_key_id, "FAKE");
  // A malformed Authorization still names its key id (so the request can be refused).
  d = detect({{"Authorization", "AWS4-HMAC-SHA256 Credential=FAKE/x"}}, "/");
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->access_key_id, "FAKE");
  EXPECT_FALSE(detect({{"Authorization", "Bearer x"}}, "/?X-Amz-Signature=00").has_value());
  EXPECT_FALSE(detect({}, "/?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=F/x").has_value());
}

// --- The decision -------------------------------------------------------------------------------

constexpr std::string_view kFakeKeyId = "fake_value_00000000-0000-4000-8000-000000000000";

std::vector<AwsKeyPair> Pairs(std::string token = "") {
  return {{"env AWS_ACCESS_KEY_ID",
           std::string(kFakeKeyId),
           "AKIDEXAMPLE",
           std::string(kSecret),
           std::move(token),
           {*ParseDomainPattern("*.amazonaws.com", PatternList::kAllow)}}};
}

Host H(std::string_view text) { return *CanonicalizeHost(text); }

std::vector<Header> SignedByFake(std::string_view extra_signed = "") {
  return {{"Host", "example.amazonaws.com"},
          {"X-Amz-Date", "20150830T123600Z"},
          {"Authorization", "AWS4-HMAC-SHA256 Credential=" + std::string(kFakeKeyId) +
                                "/20150830/us-east-1/service/aws4_request, SignedHeaders=host;"
                                "x-amz-date" +
                                std::string(extra_signed) +
                                ", Signature=0123456789abcdef0123456789abcdef0123456789abcdef"
                                "0123456789abcdef"}};
}

// The request the sandbox signed with the fake pair goes out as get-vanilla signed with the real
// one.
TEST(SigV4Plan, ResignsToTheRealPair) {
  const std::vector<AwsKeyPair> pairs = Pairs();
  std::vector<Header> headers = SignedByFake();
  SigV4Decision d = PlanSigV4(pairs, {}, H("example.amazonaws.com"), "GET", "/", headers);
  ASSERT_EQ(d.action, SigV4Decision::Action::kResign) << d.reason;
  EXPECT_FALSE(d.unsigned_payload);
  ASSERT_TRUE(ApplySigV4(d, "GET", "/", headers, kEmptyHash).has_value());
  EXPECT_EQ(sigv4::FindHeader(headers, "authorization"),
            "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, "
            "SignedHeaders=host;x-amz-date, "
            "Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31");
  EXPECT_EQ(headers.size(), 3U);
}

TEST(SigV4Plan, SessionTokenSetAndSigned) {
  const std::vector<AwsKeyPair> pairs = Pairs("real-token");
  std::vector<Header> headers = SignedByFake();
  SigV4Decision d = PlanSigV4(pairs, {}, H("example.amazonaws.com"), "GET", "/", headers);
  ASSERT_EQ(d.action, SigV4Decision::Action::kResign);
  ASSERT_TRUE(ApplySigV4(d, "GET", "/", headers, kEmptyHash).has_value());
  EXPECT_EQ(sigv4::FindHeader(headers, "x-amz-security-token"), "real-token");
  EXPECT_NE(sigv4::FindHeader(headers, "authorization")
                ->find("SignedHeaders=host;x-amz-date;x-amz-security-token,"),
            std::string_view::npos);
}

TEST(SigV4Plan, ContentShaReplacedByTheForwardedHash) {
  const std::vector<AwsKeyPair> pairs = Pairs();
  std::vector<Header> headers = SignedByFake(";x-amz-content-sha256");
  headers.push_back({"x-amz-content-sha256", "00"});
  SigV4Decision d = PlanSigV4(pairs, {}, H("example.amazonaws.com"), "PUT", "/", headers);
  ASSERT_EQ(d.action, SigV4Decision::Action::kResign);
  const std::string hash = sigv4::Sha256Hex("body");
  ASSERT_TRUE(ApplySigV4(d, "PUT", "/", headers, hash).has_value());
  EXPECT_EQ(sigv4::FindHeader(headers, "x-amz-content-sha256"), hash);
}

TEST(SigV4Plan, UnsignedPayloadKept) {
  const std::vector<AwsKeyPair> pairs = Pairs();
  std::vector<Header> headers = SignedByFake(";x-amz-content-sha256");
  headers.push_back({"x-amz-content-sha256", "UNSIGNED-PAYLOAD"});
  SigV4Decision d = PlanSigV4(pairs, {}, H("example.amazonaws.com"), "PUT", "/", headers);
  ASSERT_EQ(d.action, SigV4Decision::Action::kResign);
  EXPECT_TRUE(d.unsigned_payload);
}

TEST(SigV4Plan, OtherKeysAndHostsUntouched) {
  const std::vector<AwsKeyPair> pairs = Pairs();
  std::vector<Header> headers = SignedByFake();
  EXPECT_EQ(PlanSigV4(pairs, {}, H("example.com"), "GET", "/", headers).action,
            SigV4Decision::Action::kNone);
  headers[2].value =
      "AWS4-HMAC-SHA256 Credential=AKIAREAL/20150830/us-east-1/s/aws4_request, "
      "SignedHeaders=host, Signature=00";
  EXPECT_EQ(PlanSigV4(pairs, {}, H("example.amazonaws.com"), "GET", "/", headers).action,
            SigV4Decision::Action::kNone);
  EXPECT_EQ(PlanSigV4({}, {}, H("example.amazonaws.com"), "GET", "/", SignedByFake()).action,
            SigV4Decision::Action::kNone);
}

TEST(SigV4Plan, UnresignableShapesDeniedByDefault) {
  const std::vector<AwsKeyPair> pairs = Pairs();
  const std::string presigned =
      "/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=" + std::string(kFakeKeyId) +
      "%2F20150830%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Signature=00";
  SigV4Decision d = PlanSigV4(pairs, {}, H("b.s3.amazonaws.com"), "GET", presigned, {});
  ASSERT_EQ(d.action, SigV4Decision::Action::kDeny);
  EXPECT_EQ(d.reason,
            "AWS SigV4 presigned request uses a masked credential but cannot be re-signed by "
            "the sandbox proxy; denied by policy. Set credentials.sigv4.presigned to "
            "\"passthrough\" to forward it unmodified (it will fail upstream: the signature "
            "covers the masked placeholder).");
  EXPECT_EQ(
      PlanSigV4(pairs, {.presigned = true}, H("b.s3.amazonaws.com"), "GET", presigned, {}).action,
      SigV4Decision::Action::kNone);
  std::vector<Header> streaming = SignedByFake();
  streaming.push_back({"X-Amz-Content-Sha256", "STREAMING-AWS4-HMAC-SHA256-PAYLOAD"});
  d = PlanSigV4(pairs, {}, H("b.s3.amazonaws.com"), "PUT", "/k", streaming);
  ASSERT_EQ(d.action, SigV4Decision::Action::kDeny);
  EXPECT_NE(d.reason.find("credentials.sigv4.streaming"), std::string::npos);
  std::vector<Header> v4a{{"Authorization", "AWS4-ECDSA-P256-SHA256 Credential=" +
                                                std::string(kFakeKeyId) + "/20150830/s3/x"}};
  d = PlanSigV4(pairs, {}, H("b.s3.amazonaws.com"), "GET", "/", v4a);
  ASSERT_EQ(d.action, SigV4Decision::Action::kDeny);
  EXPECT_NE(d.reason.find("credentials.sigv4.sigv4a"), std::string::npos);
  EXPECT_EQ(PlanSigV4(pairs, {.sigv4a = true}, H("b.s3.amazonaws.com"), "GET", "/", v4a).action,
            SigV4Decision::Action::kNone);
}

TEST(SigV4Plan, UnresignableRequestsRefusedWithTheReason) {
  const std::vector<AwsKeyPair> pairs = Pairs();
  std::vector<Header> headers = SignedByFake();
  headers.erase(headers.begin() + 1);  // X-Amz-Date
  SigV4Decision d = PlanSigV4(pairs, {}, H("example.amazonaws.com"), "GET", "/", headers);
  ASSERT_EQ(d.action, SigV4Decision::Action::kDeny);
  EXPECT_EQ(d.reason,
            "AWS SigV4 request uses a masked credential but carries no x-amz-date header; the "
            "proxy cannot re-sign it.");
  headers = SignedByFake(";x-custom");
  d = PlanSigV4(pairs, {}, H("example.amazonaws.com"), "GET", "/", headers);
  ASSERT_EQ(d.action, SigV4Decision::Action::kDeny);
  EXPECT_EQ(d.reason,
            "AWS SigV4 request uses a masked credential but signed header \"x-custom\" is "
            "missing; the proxy cannot re-sign it.");
  headers = SignedByFake();
  headers[2].value = "AWS4-HMAC-SHA256 Credential=" + std::string(kFakeKeyId) + "/x";
  d = PlanSigV4(pairs, {}, H("example.amazonaws.com"), "GET", "/", headers);
  ASSERT_EQ(d.action, SigV4Decision::Action::kDeny);
  EXPECT_NE(d.reason.find("Authorization header is malformed"), std::string::npos);
}

}  // namespace
}  // namespace srt::proxy::inject
