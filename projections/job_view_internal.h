// What the two renderings of a job's view (job_view.cc: the json tree,
// job_view_text.cc: the same bytes written directly) share, so that they
// cannot drift apart. Internal to the job model.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "projections/job.h"

namespace runledger::jobs::detail {

// What keeps a QUEUED job from being claimed, shown as {kind: *id}.
struct Blocker {
  std::string_view kind;  // "hold" or "job"
  const std::string* id;
};
std::optional<Blocker> blocked_by(const State& s, const Job& j);

// Stored JSON text back to JSON; text that does not parse stays a string,
// empty text is null.
nlohmann::json parse_or_text(const std::string& text);

}  // namespace runledger::jobs::detail
