// Typed reads of request JSON that name the offending field on failure
// (422 with code missing_field / invalid_field / unknown_field).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace runledger::http {

// Thrown by the readers below; the router turns it into a 422.
struct FieldError {
  std::string code;  // missing_field | invalid_field | unknown_field
  std::string field;
  std::string message;
};

// Ids are 1-128 characters of A-Z a-z 0-9 . _ : -
bool valid_id(std::string_view s);

// The opt_ readers take an absent field as "not given". A null is a value,
// and of the wrong type for every reader here (invalid_field): a field that
// may be null (e.g. a connector's sync_schedule_s) is checked with is_null()
// before it is read.
class JsonInput {
 public:
  explicit JsonInput(const nlohmann::json& body) : body_(body) {}
  // For an object nested in the body: errors name its fields after `prefix`
  // (e.g. "documents.failed[0]." + "error").
  JsonInput(const nlohmann::json& body, std::string prefix)
      : body_(body), prefix_(std::move(prefix)) {}
  // Refuses any field not listed (unknown_field).
  void only(std::initializer_list<std::string_view> allowed) const;
  bool has(std::string_view field) const;
  bool is_null(std::string_view field) const;

  std::string str(std::string_view field, size_t max_bytes) const;  // required
  std::optional<std::string> opt_str(std::string_view field, size_t max_bytes) const;
  std::string id(std::string_view field) const;
  std::optional<std::string> opt_id(std::string_view field) const;
  int64_t integer(std::string_view field, int64_t min, int64_t max) const;
  std::optional<int64_t> opt_integer(std::string_view field, int64_t min, int64_t max) const;
  std::optional<bool> opt_bool(std::string_view field) const;
  std::optional<int64_t> opt_time_ms(std::string_view field) const;  // RFC 3339
  std::optional<std::vector<std::string>> opt_str_list(std::string_view field, size_t max_items,
                                                       size_t max_bytes) const;
  std::string enumeration(std::string_view field,
                          std::initializer_list<std::string_view> values) const;
  std::optional<std::string> opt_enumeration(std::string_view field,
                                             std::initializer_list<std::string_view> values) const;
  const nlohmann::json* raw(std::string_view field) const;

 private:
  std::string name(std::string_view field) const;
  [[noreturn]] void fail(std::string code, std::string_view field, std::string message) const;

  const nlohmann::json& body_;
  std::string prefix_;
};

}  // namespace runledger::http
