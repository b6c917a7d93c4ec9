// Where a body holds a number too large for a double. JSON's grammar allows
// `1e400`, but the parser refuses it (there is no finite value to hold), so
// without this such a body would be answered 400 "not valid JSON" instead of
// 422 naming the field that is out of range.
// Thread-safe: a pure function.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace runledger {

// The path of the first such number, in the form field errors use
// ("max_attempts", "documents.failed[0].error"), when that number is why
// `body` does not parse; nullopt when the body fails for another reason, or
// is not an object.
std::optional<std::string> overflowing_number_path(std::string_view body);

}  // namespace runledger
