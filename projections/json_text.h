// JSON text exactly as nlohmann's json::dump() with default arguments writes
// it, for writers that produce a view's bytes without building a json tree
// (a tree costs an allocation per value, and stored JSON text inside it is
// parsed only to be dumped again).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace runledger::json_text {

// Appends the escaped contents of `s` (no quotes) as dump() escapes a string:
// \" \\ \b \f \n \r \t, other bytes below 0x20 as \u00xx, the rest raw.
// Returns false when `s` is not valid UTF-8, where dump() throws type_error
// 316: `out` is then partly written and the caller must do what dump() does.
[[nodiscard]] bool append_escaped(std::string& out, std::string_view s);
// The same, quotes included.
[[nodiscard]] bool append_string(std::string& out, std::string_view s);

// Plain decimal, as dump() writes integers.
void append_int(std::string& out, int64_t v);
void append_bool(std::string& out, bool v);

// True when json::parse(text) succeeds and dump() of the result gives `text`
// back byte for byte, so the text can be copied instead of parsed and dumped.
// Conservative: false also means "not proven" (whitespace, keys out of order
// or escaped, a float not in dump()'s shortest form, deep nesting, ...).
bool is_dump_form(std::string_view text);

}  // namespace runledger::json_text
