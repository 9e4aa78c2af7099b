// SPDX-License-Identifier: Apache-2.0
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

namespace {

// Where an answer's reader is: the field whose value comes next, or a place in the content.
enum class AnswerField { kNone, kId, kIsError, kContent, kBlock, kType, kText, kBlockEnd };
constexpr unsigned Bit(AnswerField f) { return 1u << static_cast<unsigned>(f); }
constexpr unsigned kAnswerFields =
    Bit(AnswerField::kId) | Bit(AnswerField::kIsError) | Bit(AnswerField::kContent);
constexpr unsigned kBlockFields = Bit(AnswerField::kType) | Bit(AnswerField::kText);

// Reads an answer as nlohmann's parser walks it (SAX), accepting exactly FormatAnswer's shape
// and stopping at the first event outside it. The line comes from a hostile process and may be
// 64 MiB: a DOM of it (say, millions of empty blocks) would cost srt-poller gigabytes, while
// this holds nothing but the one text it keeps.
class AnswerReader final : public nlohmann::json::json_sax_t {
 public:
  using json = nlohmann::json;

  // The field at fault when the line is not an answer; empty while it still may be one.
  const std::string& fault() const { return fault_; }
  bool complete() const { return done_; }
  Answer take() { return std::move(answer_); }

  bool null() override {
    if (at_ == AnswerField::kId) return Took(AnswerField::kId);
    return Fail();
  }
  bool boolean(bool v) override {
    if (at_ != AnswerField::kIsError) return Fail();
    answer_.is_error = v;
    return Took(AnswerField::kIsError);
  }
  bool number_integer(json::number_integer_t) override { return Fail(); }
  bool number_unsigned(json::number_unsigned_t v) override {
    if (at_ != AnswerField::kId) return Fail();
    answer_.id = v;
    return Took(AnswerField::kId);
  }
  bool number_float(json::number_float_t, const json::string_t&) override { return Fail(); }
  bool binary(json::binary_t&) override { return Fail(); }
  bool string(json::string_t& v) override {
    if (at_ == AnswerField::kType && v == "text") return Took(AnswerField::kType);
    if (at_ != AnswerField::kText) return Fail();
    answer_.text = std::move(v);
    return Took(AnswerField::kText);
  }
  bool start_object(std::size_t) override {
    if (depth_ == 0 && seen_ == 0) return Enter();
    if (depth_ == 2 && at_ == AnswerField::kBlock) return Enter();
    return Fail();
  }
  bool key(json::string_t& k) override {
    at_ = depth_ == 1 ? (k == "id"         ? AnswerField::kId
                         : k == "is_error" ? AnswerField::kIsError
                         : k == "content"  ? AnswerField::kContent
                                           : AnswerField::kNone)
                      : (k == "type"   ? AnswerField::kType
                         : k == "text" ? AnswerField::kText
                                       : AnswerField::kNone);
    if (at_ == AnswerField::kNone || (seen_ & Bit(at_)) != 0) return Fail();
    return true;
  }
  bool end_object() override {
    --depth_;
    if (depth_ == 0) {
      done_ = (seen_ & kAnswerFields) == kAnswerFields;
      if (!done_) fault_ = "not exactly id, is_error and content";
      return done_;
    }
    // The block ends: it must have had its type and its text; the array may not go on.
    if ((seen_ & kBlockFields) != kBlockFields) return Fail();
    at_ = AnswerField::kBlockEnd;
    return true;
  }
  bool start_array(std::size_t) override {
    if (depth_ != 1 || at_ != AnswerField::kContent) return Fail();
    at_ = AnswerField::kBlock;
    return Enter();
  }
  bool end_array() override {
    if (at_ != AnswerField::kBlockEnd) return Fail();
    --depth_;
    return Took(AnswerField::kContent);
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
    if (fault_.empty()) fault_ = "not a JSON object";
    return false;
  }

 private:
  bool Enter() {
    ++depth_;
    return true;
  }
  bool Took(AnswerField f) {
    seen_ |= Bit(f);
    at_ = AnswerField::kNone;
    return true;
  }
  // The first event outside the shape names what is wrong, as the field it happened in.
  bool Fail() {
    switch (depth_ == 0 ? AnswerField::kNone : at_) {
      case AnswerField::kNone:
        fault_ = depth_ <= 1
                     ? (depth_ == 0 ? "not a JSON object" : "not exactly id, is_error and content")
                     : "content is not one text block";
        break;
      case AnswerField::kId:
        fault_ = "id is not an unsigned integer or null";
        break;
      case AnswerField::kIsError:
        fault_ = "is_error is not a boolean";
        break;
      case AnswerField::kContent:
        fault_ = "content is not one block";
        break;
      default:
        fault_ = "content is not one text block";
        break;
    }
    return false;
  }

  Answer answer_;
  std::string fault_;
  AnswerField at_ = AnswerField::kNone;
  unsigned seen_ = 0;
  int depth_ = 0;
  bool done_ = false;
};

}  // namespace

Result<Answer> ParseAnswer(std::string_view line) {
  auto bad = [&](const std::string& what) {
    return MakeError(Errc::kProtocol,
                     "srt-toolbox sent a malformed answer (" + what + "): " + Quote(line));
  };
  if (!strings::JsonNestingWithin(line, kMaxNesting)) {
    return bad("nested deeper than " + std::to_string(kMaxNesting));
  }
  AnswerReader reader;
  const bool parsed = nlohmann::json::sax_parse(line, &reader);
  if (!parsed || !reader.complete()) {
    return bad(reader.fault().empty() ? "not exactly id, is_error and content" : reader.fault());
  }
  return reader.take();
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
