#include "engine/log.h"

#include <atomic>
#include <cstdio>
#include <mutex>

#include "base/time_text.h"
#include "engine/clock.h"
#include "events/event_codec.h"

namespace runledger::log {
namespace {

std::atomic<int> g_level{static_cast<int>(Level::kInfo)};
std::mutex g_mu;

const char* name(Level l) {
  switch (l) {
    case Level::kDebug:
      return "debug";
    case Level::kInfo:
      return "info";
    case Level::kWarn:
      return "warn";
    case Level::kError:
      return "error";
  }
  return "?";
}

}  // namespace

void set_level(Level level) { g_level = static_cast<int>(level); }

bool parse_level(std::string_view text, Level* level) {
  for (Level l : {Level::kDebug, Level::kInfo, Level::kWarn, Level::kError}) {
    if (text == name(l)) {
      *level = l;
      return true;
    }
  }
  return false;
}

bool enabled(Level level) { return static_cast<int>(level) >= g_level.load(); }

void write(Level level, std::string_view message) {
  std::string line = format_time_ms(SystemClock().now_ms()) + " " + name(level) + " " +
                     std::string(message) + "\n";
  std::lock_guard<std::mutex> lk(g_mu);
  std::fwrite(line.data(), 1, line.size(), stderr);
}

}  // namespace runledger::log
