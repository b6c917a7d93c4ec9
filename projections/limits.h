// The bounds of what commands carry that more than one entity shares. Each
// is written once, here or beside its entity (job.h, connector.h, hold.h),
// and read from there by the deciders, the HTTP layer's input checks and
// the OpenAPI document, so that the three cannot disagree. Beyond a bound a
// command is refused with 422 naming the field (docs/api.md "Limits").
#pragma once

#include <cstddef>
#include <cstdint>

namespace runledger::limits {

// An entity's id (a job, a connector, a hold, a sync): 1 to this many bytes
// of A-Z a-z 0-9 . _ : -
inline constexpr size_t kIdBytesMax = 128;
// A name the caller picks: a job's kind, a worker.
inline constexpr size_t kNameBytesMax = 128;
// A target (the dataset a job writes and a hold covers).
inline constexpr size_t kTargetBytesMax = 256;
// Kinds one claim may ask for.
inline constexpr size_t kKindsPerClaimMax = 64;
// The longest a claim waits for work (wait_s), in seconds.
inline constexpr int64_t kClaimWaitSMax = 30;
// A job's priority lies within plus or minus this.
inline constexpr int64_t kPriorityAbsMax = 1'000'000;

}  // namespace runledger::limits
