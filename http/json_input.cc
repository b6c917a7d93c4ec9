#include "http/json_input.h"

#include "base/time_text.h"
#include "events/event_codec.h"
#include "projections/limits.h"

namespace runledger::http {
namespace {

std::string type_name(const nlohmann::json& v) {
  if (v.is_string()) return "a string";
  if (v.is_boolean()) return "a boolean";
  if (v.is_number()) return "a number";
  if (v.is_array()) return "an array";
  if (v.is_object()) return "an object";
  return "null";
}

}  // namespace

bool valid_id(std::string_view s) {
  if (s.empty() || s.size() > limits::kIdBytesMax) return false;
  for (char c : s) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == ':' || c == '-';
    if (!ok) return false;
  }
  return true;
}

std::string JsonInput::name(std::string_view field) const { return prefix_ + std::string(field); }

void JsonInput::fail(std::string code, std::string_view field, std::string message) const {
  throw FieldError{std::move(code), name(field), std::move(message)};
}

void JsonInput::only(std::initializer_list<std::string_view> allowed) const {
  for (const auto& [key, value] : body_.items()) {
    bool known = false;
    for (auto a : allowed) known = known || key == a;
    if (!known) fail("unknown_field", key, "unknown field '" + name(key) + "'");
  }
}

bool JsonInput::has(std::string_view field) const {
  return body_.find(std::string(field)) != body_.end();
}

bool JsonInput::is_null(std::string_view field) const {
  auto it = body_.find(std::string(field));
  return it != body_.end() && it->is_null();
}

const nlohmann::json* JsonInput::raw(std::string_view field) const {
  auto it = body_.find(std::string(field));
  return it == body_.end() ? nullptr : &*it;
}

std::optional<std::string> JsonInput::opt_str(std::string_view field, size_t max_bytes) const {
  const auto* v = raw(field);
  if (v == nullptr) return std::nullopt;
  if (!v->is_string()) {
    fail("invalid_field", field,
         "field '" + name(field) + "' must be a string, not " + type_name(*v));
  }
  const auto& s = v->get_ref<const std::string&>();
  if (s.size() > max_bytes) {
    fail("invalid_field", field,
         "field '" + name(field) + "' is longer than " + std::to_string(max_bytes) + " bytes");
  }
  return s;
}

std::string JsonInput::str(std::string_view field, size_t max_bytes) const {
  auto s = opt_str(field, max_bytes);
  if (!s) fail("missing_field", field, "field '" + name(field) + "' is required");
  if (s->empty()) fail("invalid_field", field, "field '" + name(field) + "' is empty");
  return *s;
}

std::optional<std::string> JsonInput::opt_id(std::string_view field) const {
  auto s = opt_str(field, 1 << 20);
  if (s && !valid_id(*s)) {
    fail("invalid_field", field,
         "field '" + name(field) + "' must be 1-" + std::to_string(limits::kIdBytesMax) +
             " characters of A-Z a-z 0-9 . _ : -");
  }
  return s;
}

std::string JsonInput::id(std::string_view field) const {
  auto s = opt_id(field);
  if (!s) fail("missing_field", field, "field '" + name(field) + "' is required");
  return *s;
}

std::optional<int64_t> JsonInput::opt_integer(std::string_view field, int64_t min,
                                              int64_t max) const {
  const auto* v = raw(field);
  if (v == nullptr) return std::nullopt;
  int64_t n = 0;
  if (v->is_number_integer()) {
    if (v->is_number_unsigned() && v->get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) {
      n = INT64_MAX;
    } else {
      n = v->get<int64_t>();
    }
  } else if (v->is_number_float()) {
    double d = v->get<double>();
    // Outside int64's range the cast below is undefined: answer the range.
    if (!(d >= -9.2e18 && d <= 9.2e18)) {
      fail("invalid_field", field,
           "field '" + name(field) + "' must be between " + std::to_string(min) + " and " +
               std::to_string(max));
    }
    if (d != static_cast<double>(static_cast<int64_t>(d))) {
      fail("invalid_field", field, "field '" + name(field) + "' must be an integer");
    }
    n = static_cast<int64_t>(d);
  } else {
    fail("invalid_field", field,
         "field '" + name(field) + "' must be an integer, not " + type_name(*v));
  }
  if (n < min || n > max) {
    fail("invalid_field", field,
         "field '" + name(field) + "' must be between " + std::to_string(min) + " and " +
             std::to_string(max));
  }
  return n;
}

int64_t JsonInput::integer(std::string_view field, int64_t min, int64_t max) const {
  auto n = opt_integer(field, min, max);
  if (!n) fail("missing_field", field, "field '" + name(field) + "' is required");
  return *n;
}

std::optional<bool> JsonInput::opt_bool(std::string_view field) const {
  const auto* v = raw(field);
  if (v == nullptr) return std::nullopt;
  if (!v->is_boolean()) {
    fail("invalid_field", field,
         "field '" + name(field) + "' must be a boolean, not " + type_name(*v));
  }
  return v->get<bool>();
}

std::optional<int64_t> JsonInput::opt_time_ms(std::string_view field) const {
  auto s = opt_str(field, 64);
  if (!s) return std::nullopt;
  int64_t ms = 0;
  if (!parse_time_ms(*s, &ms)) {
    fail("invalid_field", field,
         "field '" + name(field) + "' must be an RFC 3339 time, e.g. 2026-11-29T21:08:10Z");
  }
  return ms;
}

std::optional<std::vector<std::string>> JsonInput::opt_str_list(std::string_view field,
                                                                size_t max_items,
                                                                size_t max_bytes) const {
  const auto* v = raw(field);
  if (v == nullptr) return std::nullopt;
  if (!v->is_array()) {
    fail("invalid_field", field,
         "field '" + name(field) + "' must be an array of strings, not " + type_name(*v));
  }
  if (v->size() > max_items) {
    fail("invalid_field", field,
         "field '" + name(field) + "' has more than " + std::to_string(max_items) + " items");
  }
  std::vector<std::string> out;
  out.reserve(v->size());
  for (const auto& item : *v) {
    if (!item.is_string() || item.get_ref<const std::string&>().empty() ||
        item.get_ref<const std::string&>().size() > max_bytes) {
      fail("invalid_field", field,
           "field '" + name(field) + "' must hold non-empty strings of at most " +
               std::to_string(max_bytes) + " bytes");
    }
    out.push_back(item.get<std::string>());
  }
  return out;
}

std::optional<std::string> JsonInput::opt_enumeration(
    std::string_view field, std::initializer_list<std::string_view> values) const {
  auto s = opt_str(field, 256);
  if (!s) return std::nullopt;
  for (auto v : values) {
    if (*s == v) return s;
  }
  std::string list;
  for (auto v : values) list += (list.empty() ? "" : ", ") + std::string(v);
  fail("invalid_field", field, "field '" + name(field) + "' must be one of: " + list);
}

std::string JsonInput::enumeration(std::string_view field,
                                   std::initializer_list<std::string_view> values) const {
  auto s = opt_enumeration(field, values);
  if (!s) fail("missing_field", field, "field '" + name(field) + "' is required");
  return *s;
}

}  // namespace runledger::http
