// The data folder is its owner's alone (docs/operations.md "What the
// data folder holds"): it holds every job's input and output and the idempotency
// records, so no other user of the machine may list or read it.
#pragma once

#include <string>

#include "base/status.h"

namespace runledger {

inline constexpr unsigned kPrivateFolderMode = 0700;
inline constexpr unsigned kPrivateFileMode = 0600;

// Creates `dir` when missing, then takes away every permission of group
// and others from it and from everything in it (files 0600 at most,
// folders 0700 at most): a folder of an earlier version, made 0755 with
// files 0644, is closed on its first writable open.
Status make_private(const std::string& dir);

}  // namespace runledger
