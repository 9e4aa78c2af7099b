// SPDX-License-Identifier: Apache-2.0
#include "server/decision_log.h"

#include <gtest/gtest.h>

namespace srt::proxy {
namespace {

ConnectionRecord Sample() {
  ConnectionRecord r;
  r.time = std::chrono::system_clock::time_point(std::chrono::milliseconds(1795000000123));
  r.protocol = Protocol::kConnect;
  r.host = "example.com";
  r.port = 443;
  r.address = "93.184.216.34:443";
  r.allowed = true;
  r.matched_entry = "*.example.com";
  r.bytes_up = 517;
  r.bytes_down = 4096;
  r.duration = std::chrono::microseconds(12500);
  r.end = "closed";
  return r;
}

TEST(DecisionLogTest, JsonLineHasEveryFieldInOrder) {
  EXPECT_EQ(FormatRecordJson(Sample(), "sb-1"),
            "{\"time\":\"2026-11-18T11:06:40.123Z\",\"sandbox\":\"sb-1\",\"protocol\":\"connect\","
            "\"host\":\"example.com\",\"port\":443,\"address\":\"93.184.216.34:443\","
            "\"via\":\"direct\",\"decision\":\"allow\",\"reason\":\"\",\"entry\":\"*.example.com\","
            "\"bytes_up\":517,\"bytes_down\":4096,\"duration_ms\":12.500,\"end\":\"closed\","
            "\"error\":\"\"}\n");
}

TEST(DecisionLogTest, CredentialUsesAreNamedNeverValued) {
  ConnectionRecord r = Sample();
  r.credentials = {{"env GITHUB_TOKEN", 2, 0, 1}, {"file /h/\".netrc", 0, 1, 0}};
  const std::string json = FormatRecordJson(r, "sb-1");
  EXPECT_TRUE(json.ends_with(
      ",\"error\":\"\",\"credentials\":[{\"name\":\"env GITHUB_TOKEN\",\"injected\":2,"
      "\"kept\":0,\"masked\":1},{\"name\":\"file /h/\\u0022.netrc\",\"injected\":0,"
      "\"kept\":1,\"masked\":0}]}\n"))
      << json;
  EXPECT_TRUE(FormatRecordText(r).ends_with(
      "closed; credential env GITHUB_TOKEN: 2 injected, 0 kept, 1 masked; credential "
      "file /h/\\x22.netrc: 0 injected, 1 kept, 0 masked)"))
      << FormatRecordText(r);
}

TEST(DecisionLogTest, HostileTextCannotBreakTheLine) {
  ConnectionRecord r = Sample();
  r.allowed = false;
  r.host = std::string("a\"b\\c\nd\x01\xff", 9);
  r.reason = "line\r\nbreak";
  const std::string line = FormatRecordJson(r, "x");
  EXPECT_EQ(line.find('\n'), line.size() - 1);
  EXPECT_NE(line.find(R"("host":"a\u0022b\u005cc\u000ad\u0001\u00ff")"), std::string::npos) << line;
  EXPECT_NE(line.find(R"("reason":"line\u000d\u000abreak")"), std::string::npos) << line;
  for (char c : line) EXPECT_LT(static_cast<unsigned char>(c), 0x80);
}

// What a shell would act on never appears raw: a logged $(...) cannot run when a script reads
// the log, and a terminal shown --debug lines gets no escape sequences.
TEST(DecisionLogTest, ShellAndTerminalTextIsEscaped) {
  ConnectionRecord r = Sample();
  r.allowed = false;
  r.host = "$(id)`id`;a&b|c<d>e'f!g\x1b[31m";
  r.reason = "host is not on the allow list";
  const std::string line = FormatRecordJson(r, "x");
  for (char c : std::string("$`;&|<>'!()\x1b")) {
    EXPECT_EQ(line.find(c), std::string::npos) << "raw '" << c << "' in " << line;
  }
  EXPECT_NE(line.find(R"("host":"\u0024\u0028id\u0029\u0060id\u0060)"), std::string::npos) << line;
  EXPECT_NE(line.find(R"("reason":"host is not on the allow list")"), std::string::npos) << line;
  const std::string text = FormatRecordText(r);
  EXPECT_EQ(text,
            "deny connect \\x24\\x28id\\x29\\x60id\\x60\\x3ba\\x26b\\x7cc\\x3cd\\x3ee"
            "\\x27f\\x21g\\x1b[31m:443 (host is not on the allow list)");
}

TEST(DecisionLogTest, TextSummaries) {
  EXPECT_EQ(FormatRecordText(Sample()),
            "allow connect example.com:443 -> 93.184.216.34:443 (517 B up, 4.0 KiB down, 12 ms, "
            "closed)");
  ConnectionRecord denied = Sample();
  denied.allowed = false;
  denied.protocol = Protocol::kHttp;
  denied.host = "evil.com";
  denied.port = 80;
  denied.reason = "host is not on the allow list";
  EXPECT_EQ(FormatRecordText(denied), "deny http evil.com:80 (host is not on the allow list)");
  ConnectionRecord v6 = Sample();
  v6.host = "2001:db8::1";
  v6.via_parent = true;
  v6.address = "10.0.0.1:3128";
  v6.end = "dial-failed";
  v6.error = "parent proxy http://10.0.0.1:3128 answered 403 Forbidden";
  v6.bytes_down = 3 * 1024 * 1024;
  EXPECT_EQ(FormatRecordText(v6),
            "allow connect [2001:db8::1]:443 via parent 10.0.0.1:3128 (517 B up, 3.0 MiB down, "
            "12 ms, dial-failed: parent proxy http://10.0.0.1:3128 answered 403 Forbidden)");
}

}  // namespace
}  // namespace srt::proxy
