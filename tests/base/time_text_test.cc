// Times as text: format_time_ms writes RFC 3339 UTC with milliseconds by
// arithmetic, so it is checked against the C library's calendar (gmtime_r)
// over the whole range of four-digit years, and parse_time_ms reads back
// every time it writes.
#include <cstdio>
#include <ctime>
#include <random>
#include <string>

#include <gtest/gtest.h>

#include "base/time_text.h"

namespace runledger::testing {
namespace {

// The C library's answer, for years that fit four digits.
std::string reference(int64_t ms) {
  const time_t secs = static_cast<time_t>(ms / 1000);
  struct tm tm;
  if (gmtime_r(&secs, &tm) == nullptr) return "gmtime_r failed";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                static_cast<int>(ms % 1000));
  return buf;
}

TEST(TimeText, KnownTimes) {
  EXPECT_EQ(format_time_ms(0), "1970-01-01T00:00:00.000Z");
  EXPECT_EQ(format_time_ms(1'700'000'000'123), "2023-11-14T22:13:20.123Z");
  EXPECT_EQ(format_time_ms(951'782'400'000), "2000-02-29T00:00:00.000Z");
  EXPECT_EQ(format_time_ms(1'709'251'199'999), "2024-02-29T23:59:59.999Z");
  EXPECT_EQ(format_time_ms(946'684'799'999), "1999-12-31T23:59:59.999Z");
  EXPECT_EQ(format_time_ms(4'107'542'400'000), "2100-03-01T00:00:00.000Z");
  EXPECT_EQ(format_time_ms(253'402'300'799'999), "9999-12-31T23:59:59.999Z");
  // Past 9999 the year takes the digits it needs, as %04d would.
  EXPECT_EQ(format_time_ms(253'402'300'800'000), "10000-01-01T00:00:00.000Z");
  // Before the epoch is not a time of the log: it is shown as the epoch.
  EXPECT_EQ(format_time_ms(-1), "1970-01-01T00:00:00.000Z");
}

TEST(TimeText, AgreesWithTheCLibraryAndReadsBack) {
  std::mt19937_64 rng(20261130);
  std::uniform_int_distribution<int64_t> any_time(0, 253'402'300'799'999);
  std::uniform_int_distribution<int64_t> near_now(1'600'000'000'000, 2'000'000'000'000);
  for (int i = 0; i < 100'000; ++i) {
    const int64_t ms = i % 2 ? any_time(rng) : near_now(rng);
    const std::string text = format_time_ms(ms);
    ASSERT_EQ(text, reference(ms)) << ms;
    int64_t back = -1;
    ASSERT_TRUE(parse_time_ms(text, &back)) << text;
    ASSERT_EQ(back, ms) << text;
  }
}

}  // namespace
}  // namespace runledger::testing
