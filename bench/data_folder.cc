// DataFolder: see data_folder.h.
#include "bench/data_folder.h"

#include <cstdlib>
#include <filesystem>
#include <vector>

namespace runledger::bench {

DataFolder::DataFolder(const std::string& requested) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!requested.empty()) {
    path_ = requested;
    fs::create_directories(path_, ec);
    if (ec) {
      error_ = "cannot create " + path_ + ": " + ec.message();
    } else if (!fs::is_empty(path_, ec) || ec) {
      error_ = "--data " + path_ + " must be an empty folder: the checks count every event in it";
    }
    return;
  }
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/runledger-bench-XXXXXX";
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  if (mkdtemp(buf.data()) == nullptr) {
    error_ = "cannot create a temporary folder from " + pattern;
    return;
  }
  path_ = buf.data();
  temporary_ = true;
}

DataFolder::~DataFolder() {
  if (!temporary_) return;
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

}  // namespace runledger::bench
