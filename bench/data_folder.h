// DataFolder: where a workload keeps its store. Either a fresh temporary
// folder, removed when the workload ends, or the folder the user named with
// --data, which must be empty (the checks count every event in it) and is
// kept for inspection afterwards.
#pragma once

#include <string>

namespace runledger::bench {

class DataFolder {
 public:
  // `requested` empty: a temporary folder. error() says why it is unusable.
  explicit DataFolder(const std::string& requested);
  ~DataFolder();
  DataFolder(const DataFolder&) = delete;
  DataFolder& operator=(const DataFolder&) = delete;

  const std::string& path() const { return path_; }
  const std::string& error() const { return error_; }

 private:
  std::string path_;
  std::string error_;
  bool temporary_ = false;
};

}  // namespace runledger::bench
