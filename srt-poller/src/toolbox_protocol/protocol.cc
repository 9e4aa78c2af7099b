#include "toolbox_protocol/protocol.h"

#include "base/strings.h"

namespace srt::poller::toolbox_protocol {
namespace {

constexpr auto kReplaceInvalidUtf8 = nlohmann::json::error_handler_t::replace;

std::string Dump(const nlohmann::json& j) { return j.dump(-1, ' ', false, kReplaceInvalidUtf8); }

// The object on `line`, or a discarded value when it is not one (or nests too deep to parse).
nlohmann::json ParseObject(std::string_view line) {
  if (!strings::JsonNestingWithin(line, kMaxNesting)) {
    return nlohmann::json(nlohmann::json::value_t::discarded);
  }
  nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return nlohmann::json(nlohmann::json::value_t::discarded);
  return j;
}

// One text block: the only content the toolbox produces.
nlohmann::json TextContent(std::string_view text) {
  return nlohmann::json::array({{{"type", "text"}, {"text", std::string(text)}}});
}

std::string Quote(std::string_view line) {
  constexpr size_t kShown = 200;
  std::string shown(line.substr(0, kShown));
  return Dump(nlohmann::json(shown)) + (line.size() > kShown ? "..." : "");
}

}  // namespace

std::string FormatReady() { return Dump({{"ready", true}, {"version", kVersion}}); }

Result<void> ParseReady(std::string_view line) {
  nlohmann::json j = ParseObject(line);
  const auto ready = j.is_object() ? j.find("ready") : j.end();
  if (!j.is_object() || ready == j.end() || !ready->is_boolean() || !ready->get<bool>()) {
    return MakeError(Errc::kProtocol,
                     "srt-toolbox's first line is not {\"ready\":true}: " + Quote(line));
  }
  const auto version = j.find("version");
  if (version == j.end() || !version->is_number_integer() ||
      version->get<long long>() != kVersion) {
    return MakeError(Errc::kProtocol,
                     "srt-toolbox speaks protocol version " +
                         (version == j.end() ? std::string("(none)") : Dump(*version)) +
                         ", this srt-poller speaks " + std::to_string(kVersion) +
                         ": install srt-poller and srt-toolbox from one build");
  }
  return Ok();
}

std::string ContentJson(std::string_view text) { return Dump(TextContent(text)); }

std::string FormatAnswer(const nlohmann::json& id, std::string_view text, bool is_error) {
  return Dump({{"id", id}, {"is_error", is_error}, {"content", TextContent(text)}});
}

Result<Answer> ParseAnswer(std::string_view line) {
  auto bad = [&](const std::string& what) {
    return MakeError(Errc::kProtocol,
                     "srt-toolbox sent a malformed answer (" + what + "): " + Quote(line));
  };
  if (!strings::JsonNestingWithin(line, kMaxNesting)) {
    return bad("nested deeper than " + std::to_string(kMaxNesting));
  }
  const nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return bad("not a JSON object");
  if (j.size() != 3) return bad("not exactly id, is_error and content");
  Answer a;
  const auto id = j.find("id");
  if (id == j.end()) return bad("no id");
  if (id->is_number_unsigned()) {
    a.id = id->get<uint64_t>();
  } else if (!id->is_null()) {
    return bad("id is not an unsigned integer or null");
  }
  const auto is_error = j.find("is_error");
  if (is_error == j.end() || !is_error->is_boolean()) return bad("is_error is not a boolean");
  a.is_error = is_error->get<bool>();
  const auto content = j.find("content");
  if (content == j.end() || !content->is_array() || content->size() != 1) {
    return bad("content is not one block");
  }
  const nlohmann::json& block = content->front();
  const auto type = block.is_object() ? block.find("type") : block.end();
  const auto text = block.is_object() ? block.find("text") : block.end();
  if (!block.is_object() || block.size() != 2 || type == block.end() || *type != "text" ||
      text == block.end() || !text->is_string()) {
    return bad("content is not one text block");
  }
  a.text = text->get<std::string>();
  return a;
}

std::string FormatCall(uint64_t id, std::string_view tool, const nlohmann::json& input,
                       std::chrono::milliseconds timeout) {
  return Dump({{"id", id},
               {"tool", std::string(tool)},
               {"input", input},
               {"timeout_ms", static_cast<long long>(timeout.count())}});
}

std::string FormatCancel(uint64_t id) { return Dump({{"cancel", id}}); }

Message ParseMessage(std::string_view line) {
  Message m;
  nlohmann::json j = ParseObject(line);
  if (!j.is_object()) {
    m.error = "not a JSON object";
    return m;
  }
  auto valid_id = [](const nlohmann::json& v) { return v.is_number_integer() || v.is_string(); };
  if (auto c = j.find("cancel"); c != j.end()) {
    if (!valid_id(*c)) {
      m.error = "cancel must be an integer or a string";
      return m;
    }
    m.kind = Message::Kind::kCancel;
    m.id = *c;
    return m;
  }
  auto id = j.find("id");
  if (id == j.end() || !valid_id(*id)) {
    m.error = "id must be an integer or a string";
    return m;
  }
  m.id = *id;
  auto tool = j.find("tool");
  if (tool == j.end() || !tool->is_string() || tool->get_ref<const std::string&>().empty()) {
    m.error = "tool must be a non-empty string";
    return m;
  }
  m.tool = tool->get<std::string>();
  if (auto in = j.find("input"); in != j.end()) m.input = std::move(*in);
  if (auto t = j.find("timeout_ms"); t != j.end() && !t->is_null()) {
    if (!t->is_number_integer() || t->get<long long>() < 0 ||
        (t->is_number_unsigned() && t->get<unsigned long long>() > 0x7fffffffffffffffULL)) {
      m.error = "timeout_ms must be a non-negative integer";
      return m;
    }
    m.timeout_ms = t->get<long long>();
  }
  m.kind = Message::Kind::kCall;
  return m;
}

}  // namespace srt::poller::toolbox_protocol
