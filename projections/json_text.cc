#include "projections/json_text.h"

#include <charconv>
#include <cmath>
#include <system_error>

#include <nlohmann/json.hpp>

namespace runledger::json_text {

namespace {

bool in(unsigned char b, unsigned char lo, unsigned char hi) { return b >= lo && b <= hi; }

// Length of the well-formed UTF-8 sequence starting at s[i] (a byte >= 0x80),
// 0 when there is none: no overlong forms, no surrogates, nothing above
// U+10FFFF (Unicode table 3-7). That is exactly what dump()'s decoder and
// parse()'s lexer accept.
size_t utf8_length(std::string_view s, size_t i) {
  // Past the end reads as 0, which no continuation range contains.
  auto at = [&](size_t k) { return k < s.size() ? static_cast<unsigned char>(s[k]) : 0; };
  const unsigned char b0 = at(i);
  if (in(b0, 0xC2, 0xDF)) return in(at(i + 1), 0x80, 0xBF) ? 2 : 0;
  if (in(b0, 0xE0, 0xEF)) {
    const unsigned char lo = b0 == 0xE0 ? 0xA0 : 0x80;  // not overlong
    const unsigned char hi = b0 == 0xED ? 0x9F : 0xBF;  // not a surrogate
    return in(at(i + 1), lo, hi) && in(at(i + 2), 0x80, 0xBF) ? 3 : 0;
  }
  if (in(b0, 0xF0, 0xF4)) {
    const unsigned char lo = b0 == 0xF0 ? 0x90 : 0x80;  // not overlong
    const unsigned char hi = b0 == 0xF4 ? 0x8F : 0xBF;  // not above U+10FFFF
    return in(at(i + 1), lo, hi) && in(at(i + 2), 0x80, 0xBF) && in(at(i + 3), 0x80, 0xBF) ? 4 : 0;
  }
  return 0;
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

void append_escape_of(std::string& out, unsigned char c) {
  static constexpr char kHex[] = "0123456789abcdef";
  switch (c) {
    case '"':
      out += "\\\"";
      return;
    case '\\':
      out += "\\\\";
      return;
    case '\b':
      out += "\\b";
      return;
    case '\f':
      out += "\\f";
      return;
    case '\n':
      out += "\\n";
      return;
    case '\r':
      out += "\\r";
      return;
    case '\t':
      out += "\\t";
      return;
    default:
      break;
  }
  const char u[] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 0xF]};
  out.append(u, sizeof u);
}

// A recursive descent over JSON that accepts only what dump() writes: no
// whitespace, object keys in std::map order, the escapes dump() uses and no
// others, integers in the range parse() keeps as integers, floats in the
// shortest form dump() prints.
class DumpForm {
 public:
  explicit DumpForm(std::string_view t) : t_(t) {}
  bool whole() { return value(0) && i_ == t_.size(); }

 private:
  // Beyond this, not proven: the fallback parses and dumps as before, and
  // the check cannot run out of stack on hostile nesting.
  static constexpr int kDepthMax = 64;

  bool peek(char c) const { return i_ < t_.size() && t_[i_] == c; }
  bool eat(char c) {
    if (!peek(c)) return false;
    ++i_;
    return true;
  }
  bool literal(std::string_view word) {
    if (t_.substr(i_, word.size()) != word) return false;
    i_ += word.size();
    return true;
  }

  bool value(int depth) {
    if (i_ >= t_.size()) return false;
    switch (t_[i_]) {
      case '{':
        return object(depth);
      case '[':
        return array(depth);
      case '"':
        return string(nullptr);
      case 't':
        return literal("true");
      case 'f':
        return literal("false");
      case 'n':
        return literal("null");
      default:
        return number();
    }
  }

  bool object(int depth) {
    if (depth >= kDepthMax) return false;
    ++i_;  // '{'
    if (eat('}')) return true;
    std::string_view previous;
    for (bool first = true;; first = false) {
      std::string_view key;
      if (!string(&key)) return false;
      // A key with an escape would have to be decoded to be compared the way
      // std::map compares it; such keys are rare enough to leave to the tree.
      if (key.find('\\') != std::string_view::npos) return false;
      // Strictly increasing: dump() sorts, and a duplicate key would collapse.
      if (!first && !(previous < key)) return false;
      previous = key;
      if (!eat(':') || !value(depth + 1)) return false;
      if (eat(',')) continue;
      return eat('}');
    }
  }

  bool array(int depth) {
    if (depth >= kDepthMax) return false;
    ++i_;  // '['
    if (eat(']')) return true;
    for (;;) {
      if (!value(depth + 1)) return false;
      if (eat(',')) continue;
      return eat(']');
    }
  }

  bool string(std::string_view* contents) {
    if (!eat('"')) return false;
    const size_t start = i_;
    while (i_ < t_.size()) {
      const auto c = static_cast<unsigned char>(t_[i_]);
      if (c == '"') {
        if (contents) *contents = t_.substr(start, i_ - start);
        ++i_;
        return true;
      }
      if (c < 0x20) return false;
      if (c >= 0x80) {
        const size_t n = utf8_length(t_, i_);
        if (n == 0) return false;
        i_ += n;
      } else if (c == '\\') {
        if (!escape()) return false;
      } else {
        ++i_;
      }
    }
    return false;
  }

  // \/ and \u escapes of printable characters are JSON too, but dump() writes
  // those characters raw; it uses \u00xx (lowercase) only for the control
  // characters that have no short escape.
  bool escape() {
    ++i_;  // '\\'
    if (i_ >= t_.size()) return false;
    switch (t_[i_++]) {
      case '"':
      case '\\':
      case 'b':
      case 'f':
      case 'n':
      case 'r':
      case 't':
        return true;
      case 'u':
        break;
      default:
        return false;
    }
    if (t_.size() - i_ < 4 || t_[i_] != '0' || t_[i_ + 1] != '0') return false;
    const char hi = t_[i_ + 2];
    const char lo = t_[i_ + 3];
    if (hi != '0' && hi != '1') return false;
    int low;
    if (is_digit(lo)) {
      low = lo - '0';
    } else if (lo >= 'a' && lo <= 'f') {
      low = lo - 'a' + 10;
    } else {
      return false;
    }
    const int code = (hi - '0') * 16 + low;
    if (code == '\b' || code == '\t' || code == '\n' || code == '\f' || code == '\r') return false;
    i_ += 4;
    return true;
  }

  bool digits() {
    const size_t start = i_;
    while (i_ < t_.size() && is_digit(t_[i_])) ++i_;
    return i_ > start;
  }

  bool number() {
    const size_t start = i_;
    eat('-');
    if (eat('0')) {
      // A leading zero stands alone; "0123" fails at the caller's next token.
    } else if (!digits()) {
      return false;
    }
    bool is_float = false;
    if (eat('.')) {
      is_float = true;
      if (!digits()) return false;
    }
    if (eat('e') || eat('E')) {
      is_float = true;
      if (!eat('+')) eat('-');
      if (!digits()) return false;
    }
    const std::string_view token = t_.substr(start, i_ - start);
    const char* first = token.data();
    const char* last = token.data() + token.size();
    if (!is_float) {
      // parse() keeps an integer when strtoll/strtoull take it whole (else it
      // becomes a float) and dump() writes it back digit for digit; "-0"
      // comes back as "0".
      if (token[0] == '-') {
        if (token == "-0") return false;
        int64_t v;
        auto r = std::from_chars(first, last, v);
        return r.ec == std::errc() && r.ptr == last;
      }
      uint64_t v;
      auto r = std::from_chars(first, last, v);
      return r.ec == std::errc() && r.ptr == last;
    }
    // Both strtod (parse()) and from_chars round correctly, so they agree on
    // the value; parse() refuses one that overflows.
    double v;
    auto r = std::from_chars(first, last, v);
    if (r.ec != std::errc() || r.ptr != last || !std::isfinite(v)) return false;
    return nlohmann::json(v).dump() == token;
  }

  std::string_view t_;
  size_t i_ = 0;
};

}  // namespace

bool append_escaped(std::string& out, std::string_view s) {
  size_t copied = 0;  // s[copied, i) is plain and not yet appended
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      const size_t n = utf8_length(s, i);
      if (n == 0) return false;
      i += n;
    } else if (c >= 0x20 && c != '"' && c != '\\') {
      ++i;
    } else {
      out.append(s.data() + copied, i - copied);
      append_escape_of(out, c);
      copied = ++i;
    }
  }
  out.append(s.data() + copied, s.size() - copied);
  return true;
}

bool append_string(std::string& out, std::string_view s) {
  out += '"';
  if (!append_escaped(out, s)) return false;
  out += '"';
  return true;
}

void append_int(std::string& out, int64_t v) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

void append_bool(std::string& out, bool v) { out += v ? "true" : "false"; }

bool is_dump_form(std::string_view text) { return DumpForm(text).whole(); }

}  // namespace runledger::json_text
