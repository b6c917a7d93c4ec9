// How deeply a JSON text nests arrays and objects, found without parsing it.
//
// Why: the free-form fields (`input`, `output`, `documents`) take any JSON,
// and the parser reads any depth, but writing a value back out, comparing
// two values or walking one recurses once per level: a body of 100,000
// nested arrays, well inside the body limit, took the server's stack and the
// process with it. So a body that nests deeper than kJsonBodyDepthMax is
// refused before it is parsed, and nothing stored nests deeper than that.
// Thread-safe: pure functions.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace runledger {

// Levels of arrays and objects a request body may nest, the body itself
// being the first: `{"input": [[1]]}` nests three.
inline constexpr size_t kJsonBodyDepthMax = 128;

struct TooDeep {
  // The top-level key whose value goes beyond the limit (as written in the
  // text, cut to 64 bytes), or empty when the text is not an object or the
  // depth is passed before any key.
  std::string field;
};

// Whether `text` nests deeper than `max_depth`, and where. Reads strings
// (escapes included) so that brackets inside them do not count; does not
// check that the text is valid JSON otherwise.
std::optional<TooDeep> json_too_deep(std::string_view text, size_t max_depth);

}  // namespace runledger
