// The runner's journal (docs/worker.md "Leases, fencing, lost replies" and
// "The runner dies, the host reboots"): small JSON files in the state folder
// that a runner started again on the same folder reads to settle what an
// earlier one left unfinished, and the identity of a process that a reused
// pid or a reboot is never taken for.
//
// Files of the state folder (all written whole: a temp file, rename, so a
// reader sees the old or the new file, never a torn one; fsynced, with the
// folder, where a reboot must not lose them: a claim before it is sent, an
// attempt's lease and handle, a step's record):
//   claim.json    {"key", "body"}: a claim sent and not yet answered; a
//                 runner started again sends it again, same key, same body.
//   attempt.json  {"job", "attempt", "lease_token", "lease_token_sha256",
//                 "handle", "keeper": ProcessId, "dir", "lease_s"}: the
//                 attempt this runner holds, from its claim to its end.
// The lease token is kept because a runner started again must finish the
// attempt under it (outcome-unknown while the lease is current, the same
// Idempotency-Key and body for a call whose reply was lost); the folder is
// private to its user (0700), as the token file is.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "base/status.h"

namespace runledger::worker {

// `value` into `path`, durably (see above).
Status write_json_durably(const std::string& path, const nlohmann::json& value);
// `value` into `path` whole (temp file, rename) but not fsynced: for what
// only this boot needs (a pid, a request to the keeper), where a sync would
// only slow each step down.
Status write_json_whole(const std::string& path, const nlohmann::json& value);
// Makes what write_json_whole() put in `path` durable: the file and its
// folder's entry, fsynced.
Status sync_written(const std::string& path);
// The JSON in `path`; nullopt when it is absent or not JSON.
std::optional<nlohmann::json> read_json_file(const std::string& path);
// Removes `path`, not waiting for the removal to be durable.
void remove_file(const std::string& path);

// A process named so that neither a reused pid nor a reboot can pass for it.
struct ProcessId {
  std::string host;
  std::string boot;  // /proc/sys/kernel/random/boot_id
  pid_t pid = 0;
  std::string start;  // start time in clock ticks since boot (stat field 22)

  static ProcessId of(pid_t pid);
  nlohmann::json to_json() const;
  static ProcessId from_json(const nlohmann::json& j);
  // host/boot/pid/start: what `start` sends as the execution handle.
  std::string handle() const;
  // The same process still runs (not a zombie) on this host since this boot.
  bool alive() const;
  // This host, this boot.
  bool this_boot() const;
};

std::string host_name();
std::string boot_id();
// Field 22 of /proc/<pid>/stat; "" when the process is gone.
std::string start_ticks(pid_t pid);
// Whether the process exists and is not a zombie.
bool process_running(pid_t pid);

}  // namespace runledger::worker
