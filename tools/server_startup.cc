#include "tools/server_startup.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>

#include "events/event_store.h"
#include "events/log_verifier.h"

namespace runledger {

namespace {

// RocksDB's lock file: a writable RocksDB holds a POSIX write lock on it.
constexpr const char* kLockFile = "LOCK";

}  // namespace

ReadOnlyFolderLock::~ReadOnlyFolderLock() {
  if (fd_ >= 0) ::close(fd_);
}

Status ReadOnlyFolderLock::acquire(const std::string& data) {
  const std::string path = (std::filesystem::path(data) / kLockFile).string();
  fd_ = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd_ < 0) return Status::Ok();  // no store here: the open says so
  struct flock lock {};
  lock.l_type = F_WRLCK;
  lock.l_whence = SEEK_SET;
  // The same lock RocksDB takes: a POSIX record lock on the whole file, so
  // each refuses the other.
  if (::fcntl(fd_, F_SETLK, &lock) == 0) return Status::Ok();
  const int err = errno;
  ::close(fd_);
  fd_ = -1;
  if (err == EACCES || err == EAGAIN) {
    return Status::Unavailable("data folder " + data + " is in use by another runledgerd");
  }
  return Status::IoError("locking " + path + ": " + std::strerror(err));
}

std::string first_damage(const std::string& data) {
  StoreOptions options;
  options.read_only = true;
  options.create_if_missing = false;
  std::unique_ptr<EventStore> store;
  if (Status s = open_rocksdb_store(data, options, &store); !s.ok()) return s.ToString();
  VerifyReport report;
  Status v = verify_log(*store, &report);
  return v.ok() ? "" : v.ToString();
}

}  // namespace runledger
