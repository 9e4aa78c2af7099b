// SPDX-License-Identifier: Apache-2.0
// credentials/mask: sentinels keep the real value's length and never contain it; extract masks
// group 1 only; decode jwt gives a well-formed fake; denied and masked variables.
#include "credentials/mask.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>

namespace srt::credentials {
namespace {

// A fixed, non-repeating sequence: deterministic, and distinct sentinels every call.
RandomSource Counter() {
  auto next = std::make_shared<uint32_t>(0x9e3779b9u);
  return [next](size_t n) -> Result<std::string> {
    std::string out;
    for (size_t i = 0; i < n; ++i) {
      *next = *next * 1664525u + 1013904223u;
      out += static_cast<char>(*next >> 24);
    }
    return out;
  };
}

bool InAlphabet(std::string_view s, std::string_view alphabet) {
  return std::all_of(s.begin(), s.end(),
                     [&](char c) { return alphabet.find(c) != std::string_view::npos; });
}

TEST(MaskTest, SentinelsMatchTheRealLengthFrom32BytesOn) {
  RandomSource random = Counter();
  for (size_t length : {32u, 40u, 46u, 47u, 48u, 200u, 4096u}) {
    Result<std::string> s = MintSentinel(length, random);
    ASSERT_TRUE(s.has_value());
    EXPECT_EQ(s->size(), length);
    EXPECT_TRUE(s->starts_with("fake_value_")) << *s;
    EXPECT_TRUE(InAlphabet(*s, "abcdefghijklmnopqrstuvwxyz0123456789_-")) << *s;
  }
  // Upstream's form: fake_value_<uuid4>, then padding.
  Result<std::string> s = MintSentinel(60, random);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ((*s)[11 + 8], '-');
  EXPECT_EQ((*s)[11 + 14], '4');
  // Shorter values keep the 47-byte uuid sentinel (never fewer random bits).
  EXPECT_EQ(MintSentinel(10, random)->size(), 47u);
}

TEST(MaskTest, WholeValue) {
  const std::string real = "ghp_0123456789abcdefghijklmnopqrstuvwxyzAB";
  Result<Masked> m = MaskValue("env GITHUB_TOKEN", real, {}, {}, Counter());
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->outcome, Masked::Outcome::kMasked);
  EXPECT_EQ(m->fake.size(), real.size());
  EXPECT_EQ(m->fake.find(real), std::string::npos);
  ASSERT_EQ(m->secrets.size(), 1u);
  EXPECT_EQ(m->secrets[0].name, "env GITHUB_TOKEN");
  EXPECT_EQ(m->secrets[0].sentinel, m->fake);
  EXPECT_EQ(m->secrets[0].real, real);
}

TEST(MaskTest, ExtractMasksGroupOneOnly) {
  CredentialMaskOptions o;
  o.extract = "password=(\\w+)";
  const std::string real =
      "user=me password=hunter2hunter2hunter2hunter2hunter2xxxxx "
      "password=hunter2hunter2hunter2hunter2hunter2xxxxx end";
  Result<Masked> m = MaskValue("file /f", real, o, {}, Counter());
  ASSERT_TRUE(m.has_value());
  ASSERT_EQ(m->secrets.size(), 1u);  // one distinct capture, one sentinel
  EXPECT_EQ(m->secrets[0].name, "file /f#0");
  const std::string& sentinel = m->secrets[0].sentinel;
  EXPECT_EQ(m->fake, "user=me password=" + sentinel + " password=" + sentinel + " end");
  EXPECT_EQ(m->fake.size(), real.size());
}

TEST(MaskTest, MaskDuplicatesCatchesCopiesOutsideTheSpans) {
  CredentialMaskOptions o;
  o.extract = "key: (\\S+)";
  o.mask_duplicates = true;
  const std::string secret(40, 'k');
  Result<Masked> m = MaskValue("file /f", "key: " + secret + "\n# was " + secret, o, {}, Counter());
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->fake.find(secret), std::string::npos) << m->fake;
}

TEST(MaskTest, NoMatchDeniesByDefaultWarnsOrFailsWhenAsked) {
  CredentialMaskOptions o;
  o.extract = "token=(\\w+)";
  Result<Masked> m = MaskValue("env X", "nothing here", o, {}, Counter());
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->outcome, Masked::Outcome::kDenied);
  EXPECT_EQ(m->warning,
            "credentials: env X: extract pattern matched nothing in the value; treated as denied "
            "(onExtractNoMatch \"deny\")");
  o.on_extract_no_match = ExtractNoMatch::kWarn;
  m = MaskValue("env X", "nothing here", o, {}, Counter());
  EXPECT_EQ(m->outcome, Masked::Outcome::kPassed);
  EXPECT_EQ(m->fake, "nothing here");
  o.on_extract_no_match = ExtractNoMatch::kError;
  m = MaskValue("env X", "nothing here", o, {}, Counter());
  ASSERT_FALSE(m.has_value());
  EXPECT_EQ(m.error().message(),
            "credentials: env X: extract pattern matched nothing in the value (onExtractNoMatch: "
            "\"error\"); fix the regex, change to \"warn\"/\"deny\", or remove the entry");
}

// eyJhbGciOiJSUzI1NiJ9 = {"alg":"RS256"}; payload {"sub":"1234","email":"me@example.com"}.
const std::string kJwt =
    "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiIxMjM0IiwiZW1haWwiOiJtZUBleGFtcGxlLmNvbSJ9."
    "c2lnbmF0dXJlc2lnbmF0dXJlc2lnbmF0dXJlc2lnbmF0dXJlc2lnbmF0dXJl"
    "c2lnbmF0dXJlc2lnbmF0dXJlc2lnbmF0dXJlc2lnbmF0dXJlc2lnbmF0dXJl"
    "c2lnbmF0dXJlc2lnbmF0dXJlc2lnbmF0dXJlc2lnbmF0dXJlc2lnbmF0dXJl";

TEST(MaskTest, JwtBecomesAFakeJwtOfTheSameLength) {
  CredentialMaskOptions o;
  o.decode_jwt = true;
  Result<Masked> m = MaskValue("env ID", kJwt, o, {}, Counter());
  ASSERT_TRUE(m.has_value());
  ASSERT_EQ(m->outcome, Masked::Outcome::kMasked);
  EXPECT_EQ(m->fake.size(), kJwt.size());
  // {"alg":"HS256","typ":"JWT"}
  EXPECT_TRUE(m->fake.starts_with("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.")) << m->fake;
  EXPECT_EQ(std::count(m->fake.begin(), m->fake.end(), '.'), 2);
  // Not a JWT: denied (srt's default).
  EXPECT_EQ(MaskValue("env ID", "not.a.jwt", o, {}, Counter())->outcome, Masked::Outcome::kDenied);
}

// With extract and decode "jwt", a capture srt cannot mask (no JWT, or one without the claims
// asked for) must not stay in clear beside the masked ones: the whole value goes the way of
// onExtractNoMatch (a hostile review found the second token of a file shown as it was).
TEST(MaskTest, AnUnmaskableCaptureDeniesTheWholeValue) {
  CredentialMaskOptions o;
  o.decode_jwt = true;
  o.extract = "T=(\\S+)";
  const std::string value = "T=" + std::string(kJwt) + " T=ghp_NOTAJWT_REALVALUE_0123456789abcdef";
  Result<Masked> m = MaskValue("env JALL", value, o, {}, Counter());
  ASSERT_TRUE(m.has_value()) << m.error().message();
  EXPECT_EQ(m->outcome, Masked::Outcome::kDenied);
  EXPECT_EQ(m->fake.find("ghp_NOTAJWT"), std::string::npos);
  o.on_extract_no_match = ExtractNoMatch::kError;
  EXPECT_FALSE(MaskValue("env JALL", value, o, {}, Counter()).has_value());
  // A JWT without the claim maskClaims asks for is as unmaskable as no JWT.
  o.on_extract_no_match = ExtractNoMatch::kDeny;
  o.mask_claims = {"no_such_claim"};
  Result<Masked> claims = MaskValue("env JALL", "T=" + std::string(kJwt), o, {}, Counter());
  ASSERT_TRUE(claims.has_value());
  EXPECT_EQ(claims->outcome, Masked::Outcome::kDenied);
}

TEST(MaskTest, MaskClaimsKeepsTheOtherClaims) {
  CredentialMaskOptions o;
  o.decode_jwt = true;
  o.mask_claims = {"email"};
  Result<Masked> m = MaskValue("env ID", kJwt, o, {}, Counter());
  ASSERT_TRUE(m.has_value());
  ASSERT_EQ(m->secrets.size(), 2u);
  EXPECT_EQ(m->secrets[0].name, "env ID#email");
  EXPECT_EQ(m->secrets[0].real, "me@example.com");
  EXPECT_EQ(m->secrets[1].real, kJwt);
  EXPECT_EQ(m->fake.size(), kJwt.size());
  EXPECT_TRUE(m->fake.starts_with("eyJhbGciOiJSUzI1NiJ9."));  // the real header
}

TEST(MaskTest, EnvironmentPlan) {
  CredentialSettings c;
  c.env_vars = {{"DENIED", CredentialMode::kDeny, {}},
                {"TOKEN", CredentialMode::kMask, {}},
                {"ABSENT", CredentialMode::kMask, {}}};
  c.allow_plaintext_inject = true;
  const std::string real(40, 't');
  Result<EnvironmentPlan> plan =
      PlanEnvironment(c, {"api.example.com:443"},
                      {"A=1", "DENIED=x", "TOKEN=" + real, "DENIED=y", "TOKEN=" + real}, Counter());
  ASSERT_TRUE(plan.has_value());
  ASSERT_EQ(plan->environment.size(), 2u);
  EXPECT_EQ(plan->environment[0], "A=1");
  EXPECT_TRUE(plan->environment[1].starts_with("TOKEN=fake_value_"));
  EXPECT_EQ(plan->environment[1].size(), 6 + real.size());
  ASSERT_EQ(plan->secrets.size(), 1u);
  ASSERT_EQ(plan->secrets[0].inject_hosts.size(), 1u);
  EXPECT_EQ(plan->secrets[0].inject_hosts[0].host, "api.example.com");
  EXPECT_FALSE(plan->secrets[0].inject_hosts[0].port.has_value());
}

// AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN pair by themselves when masked
// whole-value; other names need an awsPairs entry; a masked secret without its key id warns.
TEST(MaskTest, AwsPairs) {
  CredentialSettings c;
  c.env_vars = {{"AWS_ACCESS_KEY_ID", CredentialMode::kMask, {}},
                {"AWS_SECRET_ACCESS_KEY", CredentialMode::kMask, {}},
                {"AWS_SESSION_TOKEN", CredentialMode::kMask, {}},
                {"CI_ID", CredentialMode::kMask, {}},
                {"CI_SECRET", CredentialMode::kMask, {}},
                {"LONE_SECRET", CredentialMode::kMask, {}}};
  c.aws_pairs = {{"CI_ID", "CI_SECRET", std::nullopt}, {"NOT_SET", "LONE_SECRET", std::nullopt}};
  Result<EnvironmentPlan> plan = PlanEnvironment(
      c, {"*.amazonaws.com"},
      {"AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE",
       "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "AWS_SESSION_TOKEN=tok",
       "CI_ID=AKIACI", "CI_SECRET=cisecret", "LONE_SECRET=s"},
      Counter());
  ASSERT_TRUE(plan.has_value());
  ASSERT_EQ(plan->aws_pairs.size(), 2u);
  const AwsKeyPair& ci = plan->aws_pairs[0];
  EXPECT_EQ(ci.name, "env CI_ID");
  EXPECT_EQ(ci.access_key_id, "AKIACI");
  EXPECT_EQ(ci.secret_access_key, "cisecret");
  EXPECT_EQ(ci.session_token, "");
  EXPECT_TRUE(ci.access_key_id_sentinel.starts_with("fake_value_"));
  const AwsKeyPair& aws = plan->aws_pairs[1];
  EXPECT_EQ(aws.name, "env AWS_ACCESS_KEY_ID");
  EXPECT_EQ(aws.access_key_id, "AKIAIOSFODNN7EXAMPLE");
  EXPECT_EQ(aws.secret_access_key, "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY");
  EXPECT_EQ(aws.session_token, "tok");
  ASSERT_EQ(aws.inject_hosts.size(), 1u);
  EXPECT_EQ(aws.inject_hosts[0].host, "amazonaws.com");
  // The sandbox's key id is the pair's sentinel.
  EXPECT_NE(std::find(plan->environment.begin(), plan->environment.end(),
                      "AWS_ACCESS_KEY_ID=" + aws.access_key_id_sentinel),
            plan->environment.end());
  ASSERT_EQ(plan->warnings.size(), 1u);
  EXPECT_TRUE(plan->warnings[0].starts_with(
      "credentials: LONE_SECRET is masked but NOT_SET is not, so no AWS key pair was made"))
      << plan->warnings[0];
}

// Hostile review 2, finding 5: a pair's secret access key is never injected into a request (no
// request carries a SigV4 secret; swapped into a body it would reach any of its hosts). Its key id,
// its session token and a secret outside any pair keep their hosts.
TEST(MaskTest, AwsPairSecretsAreNeverInjected) {
  CredentialSettings c;
  c.env_vars = {{"AWS_ACCESS_KEY_ID", CredentialMode::kMask, {}},
                {"AWS_SECRET_ACCESS_KEY", CredentialMode::kMask, {}},
                {"AWS_SESSION_TOKEN", CredentialMode::kMask, {}},
                {"CI_ID", CredentialMode::kMask, {}},
                {"CI_SECRET", CredentialMode::kMask, {}},
                {"LONE_SECRET", CredentialMode::kMask, {}}};
  c.aws_pairs = {{"CI_ID", "CI_SECRET", std::nullopt}, {"NOT_SET", "LONE_SECRET", std::nullopt}};
  Result<EnvironmentPlan> plan = PlanEnvironment(
      c, {"*.amazonaws.com"},
      {"AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE",
       "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "AWS_SESSION_TOKEN=tok",
       "CI_ID=AKIACI", "CI_SECRET=cisecret", "LONE_SECRET=s"},
      Counter());
  ASSERT_TRUE(plan.has_value());
  ASSERT_EQ(plan->aws_pairs.size(), 2u);
  std::map<std::string, size_t> hosts;
  for (const CredentialSecret& s : plan->secrets) hosts[s.name] = s.inject_hosts.size();
  EXPECT_EQ(hosts["env AWS_SECRET_ACCESS_KEY"], 0u);
  EXPECT_EQ(hosts["env CI_SECRET"], 0u);
  EXPECT_EQ(hosts["env AWS_ACCESS_KEY_ID"], 1u);
  EXPECT_EQ(hosts["env AWS_SESSION_TOKEN"], 1u);
  EXPECT_EQ(hosts["env CI_ID"], 1u);
  EXPECT_EQ(hosts["env LONE_SECRET"], 1u);
  // The re-signer still has the real secret.
  EXPECT_EQ(plan->aws_pairs[1].secret_access_key, "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY");
}

// An awsPairs entry that names a conventional variable replaces the automatic pairing.
TEST(MaskTest, AwsPairsNamingAConventionalVariableReplaceTheAutomaticPair) {
  CredentialSettings c;
  c.env_vars = {{"AWS_ACCESS_KEY_ID", CredentialMode::kMask, {}},
                {"AWS_SECRET_ACCESS_KEY", CredentialMode::kMask, {}},
                {"OTHER_SECRET", CredentialMode::kMask, {}}};
  c.aws_pairs = {{"AWS_ACCESS_KEY_ID", "OTHER_SECRET", std::nullopt}};
  Result<EnvironmentPlan> plan = PlanEnvironment(
      c, {"*.amazonaws.com"},
      {"AWS_ACCESS_KEY_ID=AKIA", "AWS_SECRET_ACCESS_KEY=one", "OTHER_SECRET=two"}, Counter());
  ASSERT_TRUE(plan.has_value());
  ASSERT_EQ(plan->aws_pairs.size(), 1u);
  EXPECT_EQ(plan->aws_pairs[0].secret_access_key, "two");
}

}  // namespace
}  // namespace srt::credentials
