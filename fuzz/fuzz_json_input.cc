// libFuzzer target: the typed readers of request bodies (http/json_input.h)
// and the RFC 3339 parser under them, on arbitrary bytes. Every reader of
// every field either returns a value within the bounds it was given or
// throws a FieldError naming that very field with one of the three codes of
// docs/api.md; never anything else. A time that parses formats back to a
// time that parses to the same instant.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/time_text.h"
#include "events/event_codec.h"
#include "http/json_input.h"

namespace runledger::fuzz {
namespace {

constexpr size_t kStrBytesMax = 16;
constexpr size_t kListItemsMax = 4;
constexpr int64_t kSmallMin = -5;
constexpr int64_t kSmallMax = 3600;

[[noreturn]] void fail(const std::string& why) {
  std::fprintf(stderr, "\n*** %s\n", why.c_str());
  std::abort();
}

void check_time(std::string_view text) {
  int64_t ms = 0;
  if (!parse_time_ms(text, &ms)) return;
  if (ms < 0) fail("a time parsed to a negative instant: " + std::string(text));
  const std::string formatted = format_time_ms(ms);
  int64_t again = -1;
  if (!parse_time_ms(formatted, &again) || again != ms) {
    fail("time " + std::string(text) + " -> " + formatted + " does not parse back");
  }
}

// Runs one reader; a FieldError must name `field` with a known code.
template <typename F>
void read_field(const std::string& field, F&& reader) {
  try {
    reader();
  } catch (const http::FieldError& e) {
    if (e.field != field) fail("FieldError names '" + e.field + "' for '" + field + "'");
    if (e.code != "missing_field" && e.code != "invalid_field") fail("FieldError code " + e.code);
    if (e.message.empty()) fail("FieldError without a message");
  }
}

void expect(bool ok, const std::string& field, const char* what) {
  if (!ok) fail(std::string(what) + " for field '" + field + "'");
}

void read_all(const http::JsonInput& in, const std::string& f) {
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  read_field(f, [&] { expect(in.str(f, kStrBytesMax).size() <= kStrBytesMax, f, "long str"); });
  read_field(f, [&] { expect(http::valid_id(in.id(f)), f, "invalid id accepted"); });
  read_field(f, [&] { in.opt_id(f); });
  read_field(f, [&] {
    int64_t n = in.integer(f, kSmallMin, kSmallMax);
    expect(n >= kSmallMin && n <= kSmallMax, f, "integer out of bounds");
  });
  read_field(f, [&] { in.opt_integer(f, kMin, kMax); });
  read_field(f, [&] { in.opt_bool(f); });
  read_field(f, [&] {
    if (auto ms = in.opt_time_ms(f)) expect(*ms >= 0, f, "negative time");
  });
  read_field(f, [&] {
    auto list = in.opt_str_list(f, kListItemsMax, kStrBytesMax);
    expect(!list || list->size() <= kListItemsMax, f, "list too long");
  });
  read_field(f, [&] {
    auto v = in.enumeration(f, {"running", "exited"});
    expect(v == "running" || v == "exited", f, "value outside the enumeration");
  });
  if (const auto* raw = in.raw(f); raw != nullptr && raw->is_string()) {
    check_time(raw->get_ref<const std::string&>());
  }
}

}  // namespace
}  // namespace runledger::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace runledger;
  const std::string text(reinterpret_cast<const char*>(data), size);
  fuzz::check_time(text);
  auto body = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!body.is_object()) return 0;
  const http::JsonInput in(body);
  std::vector<std::string> fields{"id", "absent"};
  for (const auto& [key, value] : body.items()) fields.push_back(key);
  for (const auto& f : fields) fuzz::read_all(in, f);
  try {
    in.only({"id", "kind", "target"});
  } catch (const http::FieldError& e) {
    if (e.code != "unknown_field" || body.find(e.field) == body.end()) {
      fuzz::fail("only() named '" + e.field + "' with code " + e.code);
    }
  }
  return 0;
}
