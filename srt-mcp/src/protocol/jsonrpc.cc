// SPDX-License-Identifier: Apache-2.0
// srt-mcp/protocol/jsonrpc.cc: JSON-RPC 2.0 classification (https://www.jsonrpc.org/specification)
// with nlohmann, exceptions caught here.
#include "protocol/jsonrpc.h"

#include <nlohmann/json.hpp>

#include "base/strings.h"

namespace srt::mcp {
namespace {

using Json = nlohmann::json;
constexpr int kMaxDepth = 64;

Error Bad(std::string what) { return MakeError(Errc::kProtocol, std::move(what)); }

}  // namespace

Result<Message> ClassifyMessage(std::string_view text) {
  // Bounded before the DOM is built: nlohmann recurses once per level.
  if (!strings::JsonNestingWithin(text, kMaxDepth)) return Bad("nested deeper than 64 levels");
  Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Bad("not JSON");
  if (j.is_array()) return Bad("a JSON-RPC batch (MCP 2025-06-18 and later take one message)");
  if (!j.is_object()) return Bad("not a JSON object");
  auto version = j.find("jsonrpc");
  if (version == j.end() || *version != "2.0") return Bad("no \"jsonrpc\": \"2.0\"");
  Message m;
  auto id = j.find("id");
  if (id != j.end()) {
    if (!id->is_string() && !id->is_number_integer() && !id->is_number_unsigned()) {
      return Bad("an id that is not a string or an integer");
    }
    m.id = id->dump();
  }
  auto method = j.find("method");
  if (method != j.end()) {
    if (!method->is_string()) return Bad("a method that is not a string");
    m.method = method->get<std::string>();
    m.kind = m.id.empty() ? MessageKind::kNotification : MessageKind::kRequest;
    auto params = j.find("params");
    if (params != j.end() && params->is_object()) {
      auto meta = params->find("_meta");
      auto string_at = [&](const Json& obj, const char* key) -> std::optional<std::string> {
        auto it = obj.find(key);
        if (it == obj.end() || !it->is_string()) return std::nullopt;
        return it->get<std::string>();
      };
      m.name = string_at(*params, "name");
      m.uri = string_at(*params, "uri");
      if (meta != params->end() && meta->is_object()) {
        m.meta_protocol_version = string_at(*meta, "io.modelcontextprotocol/protocolVersion");
        auto token = meta->find("progressToken");
        if (token != meta->end() && (token->is_string() || token->is_number_integer())) {
          m.progress_token = token->dump();
        }
      }
      if (m.kind == MessageKind::kNotification) {
        auto token = params->find("progressToken");
        if (token != params->end() && (token->is_string() || token->is_number_integer())) {
          m.progress_token = token->dump();
        }
        auto rid = params->find("requestId");
        if (rid != params->end() && (rid->is_string() || rid->is_number_integer())) {
          m.cancelled_id = rid->dump();
        }
      }
    }
    return m;
  }
  if (m.id.empty()) return Bad("neither a method nor an id");
  if (!j.contains("result") && !j.contains("error"))
    return Bad("a response without result or error");
  m.kind = MessageKind::kResponse;
  return m;
}

std::string ErrorResponse(std::string_view id_json, int code, std::string_view message) {
  Json error = {{"code", code}, {"message", std::string(message)}};
  std::string out = R"({"jsonrpc":"2.0","id":)";
  out += id_json.empty() ? "null" : std::string(id_json);
  out += R"(,"error":)";
  out += error.dump(-1, ' ', false, Json::error_handler_t::replace);
  out += "}";
  return out;
}

std::string ReplaceId(std::string_view message, std::string_view id_json) {
  if (!strings::JsonNestingWithin(message, kMaxDepth)) return "";
  Json j = Json::parse(message, nullptr, /*allow_exceptions=*/false);
  Json id = Json::parse(id_json, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || id.is_discarded()) return "";
  j["id"] = std::move(id);
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::string CancelledNotification(std::string_view id_json, std::string_view reason) {
  std::string out = R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":)";
  out += id_json;
  out += R"(,"reason":)";
  out += Json(std::string(reason)).dump(-1, ' ', false, Json::error_handler_t::replace);
  out += "}}";
  return out;
}

}  // namespace srt::mcp
