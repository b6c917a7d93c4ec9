// name_this_thread(): names the calling thread, so that `top -H`, `ps -L`,
// perf and a debugger tell the sequencer from the writer and the HTTP pool.
// Linux keeps 15 bytes of a name; longer ones are cut. The main thread is
// never renamed: its name is the process name that pgrep and killall match.
#pragma once

#include <pthread.h>

#include <algorithm>
#include <string>

namespace runledger {

inline void name_this_thread(const char* name) {
  std::string cut(name);
  cut.resize(std::min<size_t>(cut.size(), 15));
  pthread_setname_np(pthread_self(), cut.c_str());
}

}  // namespace runledger
