// What runledgerd settles before it serves, beside opening the store and the
// engine: that no other server uses its data folder, also when it reads only;
// and, when the start is refused on a damaged log, which event is the first
// bad one.
#pragma once

#include <string>

#include "base/status.h"

namespace runledger {

// Holds the lock of a data folder that a read-only server reads, so that no
// writable server opens the folder meanwhile and none reads it while one
// writes (docs/operations.md: "Two servers never share ... a data folder"). A writable
// server needs none of this: RocksDB's own lock, on the same file, refuses a
// second one. The CLI takes no lock: it may read while a server runs.
class ReadOnlyFolderLock {
 public:
  ReadOnlyFolderLock() = default;
  ~ReadOnlyFolderLock();
  ReadOnlyFolderLock(const ReadOnlyFolderLock&) = delete;
  ReadOnlyFolderLock& operator=(const ReadOnlyFolderLock&) = delete;

  // kUnavailable when another server holds the folder; OK also when the
  // folder holds no store yet (opening it then fails and says so).
  Status acquire(const std::string& data);

 private:
  int fd_ = -1;
};

// The first damaged event of the log in `data` and why, as `runledger
// verify` would name it; empty when the log verifies. A store notices damage
// where it reads it, which can be after the first bad event (a broken hash
// link shows in the event after the altered one) or no event at all (a WAL
// record, a table file). Reads the whole log: for the refusal path only.
std::string first_damage(const std::string& data);

}  // namespace runledger
