#include "base/json_depth.h"

#include <algorithm>

namespace runledger {
namespace {

constexpr size_t kFieldBytesShown = 64;

}  // namespace

std::optional<TooDeep> json_too_deep(std::string_view text, size_t max_depth) {
  size_t depth = 0;
  bool top_is_object = false;
  bool key_next = false;  // at depth 1 of an object, the next string is a key
  std::string_view field;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    switch (c) {
      case '"': {
        const size_t start = i + 1;
        for (++i; i < text.size() && text[i] != '"'; ++i) {
          if (text[i] == '\\') ++i;  // the escaped character is never the end
        }
        if (depth == 1 && top_is_object && key_next) {
          field = text.substr(start, std::min(i, text.size()) - start);
          key_next = false;
        }
        break;
      }
      case '{':
      case '[':
        if (depth == 0) top_is_object = c == '{';
        if (++depth > max_depth) {
          TooDeep where;
          if (top_is_object) where.field = std::string(field.substr(0, kFieldBytesShown));
          return where;
        }
        if (depth == 1) key_next = top_is_object;
        break;
      case '}':
      case ']':
        if (depth > 0) --depth;
        break;
      case ',':
        if (depth == 1) key_next = top_is_object;
        break;
      default:
        break;
    }
  }
  return std::nullopt;
}

}  // namespace runledger
