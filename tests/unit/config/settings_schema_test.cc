// SPDX-License-Identifier: Apache-2.0
// The published JSON Schema (schema/srt-settings.schema.json) and the settings decoder agree on
// every key: the same keys in every object, the keys srt refuses refused by the schema too, and
// for every typed key, a value of its type accepted and one of another type refused by both.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>

#include "config/settings_keys.h"
#include "srt/settings.h"

namespace srt {
namespace {

using nlohmann::json;

json Schema() {
  std::ifstream in(SRT_SETTINGS_SCHEMA);
  std::stringstream text;
  text << in.rdbuf();
  return json::parse(text.str());
}

std::set<std::string> SchemaKeys(const json& object) {
  std::set<std::string> keys;
  for (const auto& [k, v] : object.at("properties").items()) keys.insert(k);
  return keys;
}

template <typename Known, typename Special>
std::set<std::string> ParserKeys(const Known& known, const Special& special) {
  std::set<std::string> keys;
  for (std::string_view k : known) keys.emplace(k);
  for (const config::SpecialKey& k : special) keys.emplace(k.key);
  return keys;
}

json Sample(const json& spec);

// `value` placed at the path of `object` ("network", "filesystem", "network/parentProxy", "").
// With the object's schema, keys the schema requires together with `key` (dependentRequired)
// are added with sample values.
json At(const std::string& object, const std::string& key, const json& value,
        const json* object_spec = nullptr) {
  json leaf = json::object();
  leaf[key] = value;
  if (object_spec != nullptr && object_spec->contains("dependentRequired") &&
      (*object_spec)["dependentRequired"].contains(key)) {
    for (const json& partner : (*object_spec)["dependentRequired"][key]) {
      leaf[partner.get<std::string>()] =
          Sample((*object_spec)["properties"][partner.get<std::string>()]);
    }
  }
  if (object.empty()) return leaf;
  if (object == "network/parentProxy") return json{{"network", {{"parentProxy", leaf}}}};
  if (object == "network/tlsTerminate") return json{{"network", {{"tlsTerminate", leaf}}}};
  return json{{object, leaf}};
}

bool Accepted(const json& doc) { return ParseSettings(doc.dump(), "test.json").has_value(); }

// A value of the schema type, valid for srt (the schema's `const`, or its first example, if it
// gives one), and one of another type.
json Sample(const json& spec) {
  if (spec.contains("const")) return spec["const"];
  if (spec.contains("examples")) return spec["examples"][0];
  const std::string type = spec.value("type", "");
  if (type == "boolean") return true;
  if (type == "integer") return spec.value("minimum", 1);
  if (type == "string") return "x";
  if (type == "array") return json::array();
  if (type == "object") return json::object();
  return nullptr;
}
json WrongType(const json& spec) {
  return spec.value("type", "") == "string" ? json(7) : json("not-that-type");
}

TEST(SettingsSchemaTest, EveryObjectHasTheDecodersKeys) {
  const json s = Schema();
  std::set<std::string> top = ParserKeys(config::kTopLevelKeys, config::kTopLevelSpecialKeys);
  top.emplace(config::kSchemaKey);
  EXPECT_EQ(SchemaKeys(s), top);
  const json& net = s["properties"]["network"];
  EXPECT_EQ(SchemaKeys(net), ParserKeys(config::kNetworkKeys, config::kNetworkSpecialKeys));
  EXPECT_EQ(SchemaKeys(s["properties"]["filesystem"]),
            ParserKeys(config::kFilesystemKeys, std::span<const config::SpecialKey>{}));
  EXPECT_EQ(SchemaKeys(net["properties"]["parentProxy"]),
            ParserKeys(config::kParentProxyKeys, std::span<const config::SpecialKey>{}));
  const json& creds = s["properties"]["credentials"];
  EXPECT_EQ(SchemaKeys(creds),
            ParserKeys(config::kCredentialsKeys, std::span<const config::SpecialKey>{}));
  EXPECT_EQ(SchemaKeys(creds["properties"]["awsPairs"]["items"]),
            ParserKeys(config::kAwsPairKeys, std::span<const config::SpecialKey>{}));
  EXPECT_EQ(SchemaKeys(creds["properties"]["sigv4"]),
            ParserKeys(config::kSigV4Keys, std::span<const config::SpecialKey>{}));
  for (const std::string_view key : config::kSigV4Keys) {
    EXPECT_EQ(creds["properties"]["sigv4"]["properties"][std::string(key)]["enum"],
              json::array({"deny", "passthrough"}));
  }
  EXPECT_EQ(SchemaKeys(s["$defs"]["credentialEnvVar"]),
            ParserKeys(config::kCredentialEnvVarKeys, std::span<const config::SpecialKey>{}));
  EXPECT_EQ(SchemaKeys(s["$defs"]["credentialFile"]),
            ParserKeys(config::kCredentialFileKeys, std::span<const config::SpecialKey>{}));
  for (const json* o : {&creds, &s["$defs"]["credentialEnvVar"], &s["$defs"]["credentialFile"],
                        &creds["properties"]["awsPairs"]["items"], &creds["properties"]["sigv4"]}) {
    EXPECT_EQ((*o)["additionalProperties"], false);
  }
  EXPECT_EQ(SchemaKeys(net["properties"]["tlsTerminate"]),
            ParserKeys(config::kTlsTerminateKeys, std::span<const config::SpecialKey>{}));
  EXPECT_EQ(SchemaKeys(net["properties"]["mitmProxy"]),
            ParserKeys(config::kMitmProxyKeys, std::span<const config::SpecialKey>{}));
  EXPECT_EQ(SchemaKeys(s["properties"]["git"]),
            ParserKeys(config::kGitKeys, std::span<const config::SpecialKey>{}));
  // Unknown keys: warnings at the top level (other tools' keys), errors inside.
  EXPECT_EQ(s["additionalProperties"], true);
  for (const json* o : {&net, &s["properties"]["filesystem"], &net["properties"]["parentProxy"],
                        &net["properties"]["tlsTerminate"], &net["properties"]["mitmProxy"]}) {
    EXPECT_EQ((*o)["additionalProperties"], false);
  }
  EXPECT_FALSE(Accepted({{"network", {{"zzzzzzzzzzzz", 1}}}}));
  EXPECT_FALSE(Accepted({{"filesystem", {{"zzzzzzzzzzzz", 1}}}}));
}

TEST(SettingsSchemaTest, KeysSrtRefusesTheSchemaRefusesAndTheRestAgreeOnTypes) {
  const json s = Schema();
  struct Object {
    std::string path;
    const json* spec;
  };
  const json& net = s["properties"]["network"];
  for (const Object& o : {Object{"", &s}, Object{"network", &net},
                          Object{"filesystem", &s["properties"]["filesystem"]},
                          Object{"network/parentProxy", &net["properties"]["parentProxy"]},
                          Object{"credentials", &s["properties"]["credentials"]},
                          Object{"network/tlsTerminate", &net["properties"]["tlsTerminate"]}}) {
    for (const auto& [key, spec] : (*o.spec)["properties"].items()) {
      if (o.path.empty() && (key == "network" || key == "filesystem")) continue;  // objects
      const std::string where = o.path + "/" + key;
      if (spec.contains("not")) {  // the schema refuses it: srt must too
        EXPECT_FALSE(Accepted(At(o.path, key, json::object()))) << where;
        continue;
      }
      if (!spec.contains("type")) {  // accepted and ignored (with a warning)
        EXPECT_TRUE(Accepted(At(o.path, key, true))) << where;
        continue;
      }
      EXPECT_TRUE(Accepted(At(o.path, key, Sample(spec), o.spec))) << where << " " << Sample(spec);
      EXPECT_FALSE(Accepted(At(o.path, key, WrongType(spec), o.spec))) << where;
    }
  }
  // Path entries: a string, or exactly {path, literal}.
  EXPECT_TRUE(
      Accepted({{"filesystem", {{"denyRead", {"~/.ssh", {{"path", "a*"}, {"literal", true}}}}}}}));
  EXPECT_FALSE(Accepted({{"filesystem", {{"denyRead", {{{"path", "a"}, {"glob", true}}}}}}}));
  // Credential entries: the schema's enums and the decoder's agree.
  const json& env = s["$defs"]["credentialEnvVar"]["properties"];
  EXPECT_EQ(env["mode"]["enum"], json::array({"deny", "mask"}));
  EXPECT_EQ(env["onExtractNoMatch"]["enum"], json::array({"warn", "deny", "error"}));
  EXPECT_TRUE(
      Accepted({{"credentials",
                 {{"envVars", {{{"name", "A"}, {"mode", "deny"}, {"onExtractNoMatch", "error"}}}},
                  {"files", {{{"path", "/x"}, {"mode", "deny"}}}}}}}));
  EXPECT_FALSE(Accepted({{"credentials", {{"envVars", {{{"name", "A"}, {"mode", "x"}}}}}}}));
  const json& entry = s["$defs"]["pathEntry"]["oneOf"][1];
  EXPECT_EQ(entry["additionalProperties"], false);
  EXPECT_EQ(entry["required"], json::array({"path"}));
}

TEST(SettingsSchemaTest, AFileMayNameTheSchema) {
  Result<LoadedSettings> loaded =
      ParseSettings(R"({"$schema": "/usr/share/srt/srt-settings.schema.json"})", "test.json");
  ASSERT_TRUE(loaded.has_value()) << loaded.error().message();
  EXPECT_TRUE(loaded->warnings.empty()) << loaded->warnings.front();
  EXPECT_FALSE(ParseSettings(R"({"$schema": 3})", "test.json").has_value());
}

}  // namespace
}  // namespace srt
