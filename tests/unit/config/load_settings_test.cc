// SPDX-License-Identifier: Apache-2.0
// LoadSettingsFile and DefaultSettingsPath against a real temporary directory.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "srt/settings.h"

namespace srt {
namespace {

class LoadSettingsFileTest : public testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (std::filesystem::temp_directory_path() / "srt-config-test-XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr) << std::strerror(errno);
    dir_ = tmpl;
  }
  void TearDown() override {
    if (!dir_.empty()) {
      std::error_code ec;
      std::filesystem::permissions(dir_, std::filesystem::perms::owner_all, ec);
      std::filesystem::remove_all(dir_, ec);
    }
  }

  std::string Write(const std::string& name, const std::string& content) {
    std::string path = dir_ + "/" + name;
    std::ofstream(path, std::ios::binary) << content;
    return path;
  }

  std::string dir_;
};

TEST_F(LoadSettingsFileTest, MissingFile) {
  std::string path = dir_ + "/nope.json";
  Result<LoadedSettings> r = LoadSettingsFile(path);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), Errc::kNotFound);
  EXPECT_EQ(r.error().sys_errno(), ENOENT);
  EXPECT_EQ(r.error().message(), path + ": does not exist");
}

TEST_F(LoadSettingsFileTest, Directory) {
  Result<LoadedSettings> r = LoadSettingsFile(dir_);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), Errc::kInvalidArgument);
  EXPECT_EQ(r.error().sys_errno(), EISDIR);
  EXPECT_EQ(r.error().message(), dir_ + ": cannot be read: Is a directory");
}

TEST_F(LoadSettingsFileTest, UnreadableFile) {
  if (::geteuid() == 0) {
    GTEST_SKIP() << "running as root: mode 000 does not stop root from reading the file";
  }
  std::string path = Write("secret.json", "{}");
  ASSERT_EQ(::chmod(path.c_str(), 0), 0);
  Result<LoadedSettings> r = LoadSettingsFile(path);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), Errc::kPermissionDenied);
  EXPECT_EQ(r.error().message(), path + ": cannot be read: Permission denied");
}

TEST_F(LoadSettingsFileTest, NotADirectoryOnTheWay) {
  std::string file = Write("file", "{}");
  Result<LoadedSettings> r = LoadSettingsFile(file + "/settings.json");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().message(), file + "/settings.json: cannot be read: Not a directory");
}

TEST_F(LoadSettingsFileTest, EmptyFile) {
  std::string path = Write("empty.json", "");
  Result<LoadedSettings> r = LoadSettingsFile(path);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), Errc::kInvalidArgument);
  EXPECT_EQ(r.error().message(), path + ": is empty; delete it or put a settings object in it");
}

TEST_F(LoadSettingsFileTest, SyntaxErrorNamesTheFile) {
  std::string path =
      Write("bad.json", "{\n  \"network\": {\n    \"allowedDomains\": [\"a.com\"]\n  ");
  Result<LoadedSettings> r = LoadSettingsFile(path);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().message(),
            path +
                ":4:3: not valid JSON: syntax error while parsing object - unexpected end of "
                "input; expected '}'");
}

TEST_F(LoadSettingsFileTest, ValidFile) {
  std::string path = Write("ok.json", R"({"network": {"allowedDomains": ["example.com"]},
                                          "filesystem": {"allowWrite": ["."]}, "typo": 1})");
  Result<LoadedSettings> r = LoadSettingsFile(path);
  ASSERT_TRUE(r.has_value()) << r.error().message();
  EXPECT_EQ(r->settings.network.allowed_domains, std::vector<std::string>{"example.com"});
  EXPECT_EQ(r->settings.filesystem.allow_write, (std::vector<PathEntry>{{".", false}}));
  EXPECT_EQ(r->warnings, std::vector<std::string>{path + ": /typo: unknown key, ignoring"});
}

TEST_F(LoadSettingsFileTest, TooLarge) {
  std::string path = Write("big.json", "{\"x\": \"" + std::string(size_t{4} << 20, 'a') + "\"}");
  Result<LoadedSettings> r = LoadSettingsFile(path);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().message(), path + ": is larger than 4 MiB");

  std::string fits =
      Write("fits.json", "{\"x\": \"" + std::string((size_t{4} << 20) - 10, 'a') + "\"}");
  EXPECT_TRUE(LoadSettingsFile(fits).has_value());
}

TEST_F(LoadSettingsFileTest, ReadsFromAPipe) {
  // `srt --settings <(generate-settings)` hands over /dev/fd/N, a pipe.
  int fds[2];
  ASSERT_EQ(::pipe2(fds, O_CLOEXEC), 0);
  const std::string text = R"({"mandatoryDenySearchDepth": 7})";
  ASSERT_EQ(::write(fds[1], text.data(), text.size()), static_cast<ssize_t>(text.size()));
  ::close(fds[1]);
  Result<LoadedSettings> r = LoadSettingsFile("/proc/self/fd/" + std::to_string(fds[0]));
  ::close(fds[0]);
  ASSERT_TRUE(r.has_value()) << r.error().message();
  EXPECT_EQ(r->settings.mandatory_deny_search_depth, 7);
}

TEST(LoadSettingsFileArgTest, BadPaths) {
  Result<LoadedSettings> r = LoadSettingsFile("");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().message(), "the settings file path is empty");
  r = LoadSettingsFile(std::string("/etc/passwd\0x", 13));
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().message(), "'/etc/passwd\\x00x': contains a NUL byte");
}

// Sets or unsets HOME for one test and restores it.
class ScopedHome {
 public:
  explicit ScopedHome(const char* value) {
    if (const char* old = std::getenv("HOME")) {
      old_ = old;
    }
    if (value != nullptr) {
      ::setenv("HOME", value, 1);
    } else {
      ::unsetenv("HOME");
    }
  }
  ~ScopedHome() {
    if (old_) {
      ::setenv("HOME", old_->c_str(), 1);
    } else {
      ::unsetenv("HOME");
    }
  }

 private:
  std::optional<std::string> old_;
};

TEST(DefaultSettingsPathTest, UsesHome) {
  ScopedHome home("/home/someone");
  EXPECT_EQ(DefaultSettingsPath(), "/home/someone/.srt-settings.json");
}

TEST(DefaultSettingsPathTest, HomeWithTrailingSlash) {
  ScopedHome home("/");
  EXPECT_EQ(DefaultSettingsPath(), "/.srt-settings.json");
}

TEST(DefaultSettingsPathTest, FallsBackToThePasswordDatabase) {
  std::string from_passwd;
  {
    ScopedHome home(nullptr);
    from_passwd = DefaultSettingsPath();
  }
  {
    ScopedHome home("relative/home");
    EXPECT_EQ(DefaultSettingsPath(), from_passwd);
  }
  {
    ScopedHome home("");
    EXPECT_EQ(DefaultSettingsPath(), from_passwd);
  }
  EXPECT_TRUE(from_passwd.starts_with("/")) << from_passwd;
  EXPECT_TRUE(from_passwd.ends_with("/.srt-settings.json")) << from_passwd;
}

}  // namespace
}  // namespace srt
