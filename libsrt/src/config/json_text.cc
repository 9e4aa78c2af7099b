// SPDX-License-Identifier: Apache-2.0
// config/json_text.cc: the first pass over configuration JSON (see json_text.h). Moved here from
// srt-mcp's configuration reader and libsrt's settings reader, which each had one.
#include "config/json_text.h"

#include <algorithm>
#include <iterator>
#include <nlohmann/json.hpp>
#include <unordered_set>
#include <vector>

#include "base/strings.h"

namespace srt::config {
namespace {

using Json = nlohmann::ordered_json;

// An input iterator over the text that remembers the index of the last byte the lexer read, so
// a SAX callback knows where its token ended.
class TrackingIterator {
 public:
  using iterator_category = std::input_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char*;
  using reference = const char&;

  TrackingIterator(const char* p, const char* base, size_t* last)
      : p_(p), base_(base), last_(last) {}
  reference operator*() const {
    *last_ = static_cast<size_t>(p_ - base_);
    return *p_;
  }
  TrackingIterator& operator++() {
    ++p_;
    return *this;
  }
  bool operator==(const TrackingIterator& o) const { return p_ == o.p_; }
  bool operator!=(const TrackingIterator& o) const { return p_ != o.p_; }

 private:
  const char* p_;
  const char* base_;
  size_t* last_;
};

// Syntax, nesting depth and duplicate keys; where each key and array element starts.
class Checker final : public nlohmann::json_sax<Json> {
 public:
  Checker(std::string_view text, const size_t* last, size_t max_depth, JsonPositions* positions)
      : text_(text), last_(last), max_depth_(max_depth), positions_(positions) {}

  std::optional<size_t> error_position;  // nlohmann's: 1-based, bytes read
  std::string error_reason;
  bool too_deep = false;
  std::optional<JsonTextError> duplicate;

  bool null() override { return Scalar(); }
  bool boolean(bool /*v*/) override { return Scalar(); }
  bool number_integer(number_integer_t /*v*/) override { return Scalar(); }
  bool number_unsigned(number_unsigned_t /*v*/) override { return Scalar(); }
  bool number_float(number_float_t /*v*/, const string_t& /*s*/) override { return Scalar(); }
  bool string(string_t& /*v*/) override { return Element(StringStart(*last_)); }
  bool binary(binary_t& /*v*/) override { return Scalar(); }
  bool start_object(std::size_t /*n*/) override { return Open(true); }
  bool start_array(std::size_t /*n*/) override { return Open(false); }
  bool end_object() override { return Close(); }
  bool end_array() override { return Close(); }
  bool key(string_t& k) override {
    Frame& f = stack_.back();
    const size_t start = StringStart(*last_);
    if (!f.keys.insert(k).second && !duplicate) {
      std::string object;
      for (size_t i = 0; i + 1 < stack_.size(); ++i) object += "/" + stack_[i].token;
      JsonTextError e;
      e.kind = JsonTextError::Kind::kDuplicateKey;
      std::tie(e.line, e.column) = LineAndColumn(text_, start);
      e.object_pointer = std::move(object);
      e.key = k;
      duplicate = std::move(e);
    }
    f.token = JsonPointerToken(k);
    Record(start);
    return true;
  }
  bool parse_error(std::size_t position, const std::string& /*last_token*/,
                   const nlohmann::detail::exception& ex) override {
    error_position = position;
    error_reason = ShortJsonReason(ex.what());
    return false;
  }

 private:
  struct Frame {
    bool is_object = false;
    size_t next_index = 0;
    std::string token;  // of the child being read
    std::unordered_set<std::string> keys;
  };
  void Record(size_t start) {
    if (!positions_) return;
    std::string p;
    for (const Frame& f : stack_) p += "/" + f.token;
    positions_->emplace(std::move(p), start);
  }
  // The opening quote of the string whose closing quote is at `end`.
  size_t StringStart(size_t end) const {
    size_t i = end;
    while (i > 0) {
      --i;
      if (text_[i] != '"') continue;
      size_t backslashes = 0;
      while (i > backslashes && text_[i - 1 - backslashes] == '\\') ++backslashes;
      if (backslashes % 2 == 0) return i;
    }
    return end;
  }
  // A number or literal ends at `*last_` (numbers read one byte past themselves).
  bool Scalar() {
    size_t i = std::min(*last_, text_.size() - 1);
    auto part = [](char c) {
      return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || c == '.' || c == '+' || c == '-' ||
             c == 'E';
    };
    if (!part(text_[i]) && i > 0) --i;
    while (i > 0 && part(text_[i - 1])) --i;
    return Element(i);
  }
  // A value starts: inside an array, it gets the next index.
  bool Element(size_t start) {
    if (!stack_.empty() && !stack_.back().is_object) {
      stack_.back().token = std::to_string(stack_.back().next_index++);
      Record(start);
    }
    return true;
  }
  bool Open(bool is_object) {
    Element(*last_);
    if (stack_.size() >= max_depth_) {
      too_deep = true;
      return false;
    }
    stack_.push_back(Frame{is_object, 0, {}, {}});
    return true;
  }
  bool Close() {
    stack_.pop_back();
    return true;
  }

  std::string_view text_;
  const size_t* last_;
  size_t max_depth_;
  JsonPositions* positions_;
  std::vector<Frame> stack_;
};

}  // namespace

std::string ShortJsonReason(std::string_view what) {
  if (what.starts_with("[json.exception.")) {
    size_t end = what.find("] ");
    if (end != std::string_view::npos) what.remove_prefix(end + 2);
  }
  if (what.starts_with("parse error")) {
    size_t colon = what.find(": ");
    if (colon != std::string_view::npos) what.remove_prefix(colon + 2);
  }
  return strings::EscapeNonPrintable(what);
}

std::string JsonPointerToken(std::string_view key) {
  std::string out;
  for (char c : key) {
    auto u = static_cast<unsigned char>(c);
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else if (u < 0x20 || u == 0x7f) {
      // Shown as \xNN, so a hostile key cannot write escape sequences to a terminal.
      strings::AppendHexEscape(out, u);
    } else {
      out += c;
    }
  }
  return out;
}

std::pair<size_t, size_t> LineAndColumn(std::string_view text, size_t index) {
  size_t line = 1;
  size_t line_start = 0;
  for (size_t i = 0; i < index && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  }
  return {line, index - line_start + 1};
}

std::optional<JsonTextError> CheckJsonText(std::string_view text, const JsonTextOptions& options,
                                           JsonPositions* positions) {
  size_t last = 0;
  Checker checker(text, &last, options.max_depth, positions);
  TrackingIterator first(text.data(), text.data(), &last);
  TrackingIterator end(text.data() + text.size(), text.data(), &last);
  const bool parsed = Json::sax_parse(first, end, &checker, nlohmann::json::input_format_t::json,
                                      /*strict=*/true, options.comments);
  if (checker.error_position) {
    JsonTextError e;
    const size_t index =
        std::min(std::max<size_t>(*checker.error_position, 1), text.size() + 1) - 1;
    std::tie(e.line, e.column) = LineAndColumn(text, index);
    e.reason = std::move(checker.error_reason);
    return e;
  }
  if (checker.too_deep) {
    JsonTextError e;
    e.kind = JsonTextError::Kind::kTooDeep;
    return e;
  }
  if (!parsed) {  // no callback stops the parser but the two above
    JsonTextError e;
    e.reason = "the JSON parser stopped early";
    return e;
  }
  return std::move(checker.duplicate);
}

}  // namespace srt::config
