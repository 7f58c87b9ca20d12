// posenc/json_text.hpp — JSON text from users, read safely (header-only; needs nlohmann/json).
//
// Every JSON input posenc reads (a --spec file, an HF config.json, FIRE's --weights state_dict) goes through
// parse_json_text, and every value of a user's that an error message shows goes through json_excerpt or
// text_excerpt:
//   * nesting: arrays and objects nested more than kMaxJsonNesting deep are refused before nlohmann parses
//     anything (a scan of the text, itself without recursion). nlohmann's parser does not recurse, but dump() and
//     the code that walks a value do: 300,000 levels overflowed the stack while an error message was being built.
//     Real inputs nest a few levels (an HF config 3, a result file posenc writes 3, a FIRE state_dict 2 plus
//     its dotted keys' objects, which FIRE's reader refuses beyond 32).
//   * excerpts: at most kExcerptChars characters of a value, the rest counted ("...(1048576 chars)"), and every
//     byte that is not printable ASCII written as \xNN, so that a multi-megabyte value or an ESC byte from a file
//     never reaches the terminal whole.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "posenc/error.hpp"

namespace posenc {

inline constexpr std::size_t kMaxJsonNesting = 128;
inline constexpr std::size_t kExcerptChars = 80;

// The first kExcerptChars characters of s, non-printable bytes as \xNN, and "...(N chars)" when s is longer.
inline std::string text_excerpt(std::string_view s, std::size_t max_chars = kExcerptChars) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  std::size_t i = 0;
  for (; i < s.size() && out.size() < max_chars; ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  if (i < s.size()) out += "...(" + std::to_string(s.size()) + " chars)";
  return out;
}

// A JSON value as JSON text (non-ASCII escaped, invalid UTF-8 replaced), cut as text_excerpt cuts.
template <class Json>
std::string json_excerpt(const Json& v, std::size_t max_chars = kExcerptChars) {
  return text_excerpt(v.dump(-1, ' ', true, Json::error_handler_t::replace), max_chars);
}

// The byte offset of the first '[' or '{' (outside strings) that opens level max_depth + 1, or npos when the
// text nests no deeper than max_depth. Malformed text is left to the parser.
inline std::size_t json_nesting_exceeded(std::string_view text, std::size_t max_depth = kMaxJsonNesting) noexcept {
  std::size_t depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth) return i;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return std::string_view::npos;
}

// Parses JSON text after refusing nesting deeper than kMaxJsonNesting: throws posenc::IoError
// "<name> nests arrays and objects more than 128 deep (at byte N); accepted: ..." (`name` says what was read,
// e.g. "--spec 'f.json'"). nlohmann's own exceptions (syntax errors) propagate to the caller.
template <class Json = nlohmann::json>
Json parse_json_text(std::string_view text, const std::string& name) {
  if (const std::size_t at = json_nesting_exceeded(text); at != std::string_view::npos)
    throw IoError(name + " nests arrays and objects more than " + std::to_string(kMaxJsonNesting) + " deep (at byte " +
                  std::to_string(at) + "); accepted: JSON nested at most " + std::to_string(kMaxJsonNesting) +
                  " levels");
  return Json::parse(text.begin(), text.end());
}

}  // namespace posenc
