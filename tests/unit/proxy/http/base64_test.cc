// SPDX-License-Identifier: Apache-2.0
#include "http/base64.h"

#include <gtest/gtest.h>

namespace srt::proxy::http {
namespace {

TEST(Base64Test, Rfc4648Vectors) {
  // RFC 4648 §10.
  const std::pair<std::string, std::string> vectors[] = {
      {"", ""},
      {"f", "Zg=="},
      {"fo", "Zm8="},
      {"foo", "Zm9v"},
      {"foob", "Zm9vYg=="},
      {"fooba", "Zm9vYmE="},
      {"foobar", "Zm9vYmFy"},
  };
  for (const auto& [plain, encoded] : vectors) {
    EXPECT_EQ(EncodeBase64(plain), encoded);
    EXPECT_EQ(DecodeBase64(encoded), plain);
  }
  std::string all;
  for (int i = 0; i < 256; ++i) {
    all += static_cast<char>(i);
  }
  EXPECT_EQ(DecodeBase64(EncodeBase64(all)), all);
}

TEST(Base64Test, Strict) {
  for (const char* bad : {"Zg", "Zg=", "Zg===", "Z===", "====", "Zm9v=", "Zh==", "Zm9=", "Zm 9v",
                          "Zm9v\n", " Zm9v", "Zm-v", "Zm_v", "Zg==Zg==", "=Zm9"}) {
    EXPECT_FALSE(DecodeBase64(bad)) << bad;
  }
}

}  // namespace
}  // namespace srt::proxy::http
