#include "events/private_folder.h"

#include <sys/stat.h>

#include <filesystem>
#include <system_error>

namespace runledger {
namespace {

namespace fs = std::filesystem;

// Clears the group and other bits of `path`, keeping the owner's.
Status close_to_others(const fs::path& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0 || S_ISLNK(st.st_mode)) return Status::Ok();
  const mode_t owner_only =
      st.st_mode & (S_ISDIR(st.st_mode) ? kPrivateFolderMode : kPrivateFileMode);
  if ((st.st_mode & 07777) == owner_only) return Status::Ok();
  if (::chmod(path.c_str(), owner_only) != 0) {
    return Status::IoError("cannot make " + path.string() + " private to its owner: " +
                           std::error_code(errno, std::generic_category()).message());
  }
  return Status::Ok();
}

}  // namespace

Status make_private(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return Status::IoError("cannot create " + dir + ": " + ec.message());
  if (Status s = close_to_others(dir); !s.ok()) return s;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (Status s = close_to_others(it->path()); !s.ok()) return s;
  }
  if (ec) return Status::IoError("cannot list " + dir + ": " + ec.message());
  return Status::Ok();
}

}  // namespace runledger
