// Log: one line per message on stderr, with a UTC timestamp and a level.
// Thread-safe. The level is set once at start-up (--log-level).
#pragma once

#include <string_view>

#include <fmt/format.h>

namespace runledger::log {

enum class Level : int { kDebug = 0, kInfo = 1, kWarn = 2, kError = 3 };

void set_level(Level level);
bool parse_level(std::string_view text, Level* level);
bool enabled(Level level);
void write(Level level, std::string_view message);

template <typename... Args>
void info(fmt::format_string<Args...> f, Args&&... args) {
  if (enabled(Level::kInfo)) write(Level::kInfo, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
void warn(fmt::format_string<Args...> f, Args&&... args) {
  if (enabled(Level::kWarn)) write(Level::kWarn, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
void error(fmt::format_string<Args...> f, Args&&... args) {
  if (enabled(Level::kError)) write(Level::kError, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
void debug(fmt::format_string<Args...> f, Args&&... args) {
  if (enabled(Level::kDebug)) write(Level::kDebug, fmt::format(f, std::forward<Args>(args)...));
}

}  // namespace runledger::log
