// SPDX-License-Identifier: Apache-2.0
// String quoting helpers.
#include "base/strings.h"

#include <algorithm>
#include <vector>

namespace srt::strings {

std::string ShellQuote(std::string_view s) {
  if (s.empty()) return "''";
  bool plain = true;
  for (char c : s) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-' || c == '.' || c == '/' || c == ':' || c == '@' || c == '+' ||
              c == ',' || c == '=' || c == '%';
    if (!ok) {
      plain = false;
      break;
    }
  }
  if (plain) return std::string(s);
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      out += "'\"'\"'";
    } else {
      out += c;
    }
  }
  out += '\'';
  return out;
}

std::string ShellJoin(const std::vector<std::string>& words) {
  std::string out;
  for (const std::string& w : words) {
    if (!out.empty()) out += ' ';
    out += ShellQuote(w);
  }
  return out;
}

std::string Quote(std::string_view s) {
  std::string out = "'";
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    if (c == '\\' || c == '\'') {
      out += '\\';
      out += c;
    } else if (u < 0x20 || u == 0x7f) {
      AppendHexEscape(out, u);
    } else {
      out += c;
    }
  }
  out += '\'';
  return out;
}

void AppendHexEscape(std::string& out, unsigned char c) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += "\\x";
  out += kHex[c >> 4];
  out += kHex[c & 0xf];
}

namespace {
bool Printable(unsigned char c) { return c >= 0x20 && c < 0x7f; }
}  // namespace

std::string QuoteForMessage(std::string_view s, size_t max) {
  std::string out = "'";
  const size_t n = s.size() < max ? s.size() : max;
  for (size_t i = 0; i < n; ++i) {
    const auto u = static_cast<unsigned char>(s[i]);
    if (!Printable(u) || u == '\'' || u == '\\') {
      AppendHexEscape(out, u);
    } else {
      out += static_cast<char>(u);
    }
  }
  out += '\'';
  if (n < s.size()) out += "...";
  return out;
}

std::string EscapeBytes(std::string_view s, bool (*escape)(unsigned char)) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (escape(u)) {
      AppendHexEscape(out, u);
    } else {
      out += c;
    }
  }
  return out;
}

std::string EscapeNonPrintable(std::string_view s) {
  return EscapeBytes(s, [](unsigned char c) { return !Printable(c); });
}

bool JsonNestingWithin(std::string_view json, int max_depth) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < json.size(); ++i) {
    const char c = json[i];
    if (in_string) {
      if (c == '\\') {
        ++i;  // the escaped character, whatever it is, cannot end the string
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth) return false;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return true;
}

size_t Utf8SequenceLength(std::string_view text, size_t i) {
  const auto lead = static_cast<unsigned char>(text[i]);
  if (lead < 0x80) return 1;
  size_t length = 0;
  unsigned char lo = 0x80;
  unsigned char hi = 0xbf;
  if (lead >= 0xc2 && lead <= 0xdf) {
    length = 2;
  } else if (lead >= 0xe0 && lead <= 0xef) {
    length = 3;
    lo = lead == 0xe0 ? 0xa0 : 0x80;  // no overlong forms
    hi = lead == 0xed ? 0x9f : 0xbf;  // no surrogates
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    length = 4;
    lo = lead == 0xf0 ? 0x90 : 0x80;
    hi = lead == 0xf4 ? 0x8f : 0xbf;
  }
  if (length == 0 || i + length > text.size()) return 0;
  for (size_t k = 1; k < length; ++k) {
    const auto c = static_cast<unsigned char>(text[i + k]);
    if (c < (k == 1 ? lo : 0x80) || c > (k == 1 ? hi : 0xbf)) return 0;
  }
  return length;
}

bool IsValidUtf8(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    const size_t n = Utf8SequenceLength(text, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

size_t EditDistance(std::string_view a, std::string_view b) {
  auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
  // Three rows of the (|a|+1) x (|b|+1) table: the swap looks two rows back.
  std::vector<size_t> back2(b.size() + 1), back(b.size() + 1), row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) back[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const bool same = lower(a[i - 1]) == lower(b[j - 1]);
      row[j] = std::min({back[j] + 1, row[j - 1] + 1, back[j - 1] + (same ? 0 : 1)});
      if (i > 1 && j > 1 && lower(a[i - 1]) == lower(b[j - 2]) &&
          lower(a[i - 2]) == lower(b[j - 1])) {
        row[j] = std::min(row[j], back2[j - 2] + 1);
      }
    }
    std::swap(back2, back);
    std::swap(back, row);
  }
  return back[b.size()];
}

}  // namespace srt::strings
