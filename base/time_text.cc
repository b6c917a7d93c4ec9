// RFC 3339 time text: see time_text.h.
#include "base/time_text.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace runledger {

namespace {

// (year, month, day) of a day count since 1970-01-01, in the proleptic
// Gregorian calendar (H. Hinnant's civil_from_days).
void civil_from_days(int64_t z, int64_t* y, unsigned* m, unsigned* d) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const auto doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  *d = doy - (153 * mp + 2) / 5 + 1;
  *m = mp < 10 ? mp + 3 : mp - 9;
  *y = static_cast<int64_t>(yoe) + era * 400 + (*m <= 2);
}

// Writes `v` as exactly `n` decimal digits ending before `end`.
void put_digits(uint64_t v, int n, char* end) {
  for (int i = 0; i < n; ++i, v /= 10) *--end = static_cast<char>('0' + v % 10);
}

}  // namespace

// Arithmetic instead of gmtime_r + snprintf: every view of a job carries a
// handful of times, and those two took a twentieth of the sequencer.
std::string format_time_ms(int64_t ms) {
  if (ms < 0) ms = 0;
  const int64_t secs = ms / 1000;
  const int64_t days = secs / 86400;
  const int64_t sod = secs % 86400;
  int64_t year;
  unsigned month, day;
  civil_from_days(days, &year, &month, &day);
  // The year takes four digits, or more once past 9999.
  int year_digits = 4;
  for (int64_t y = year / 10000; y > 0; y /= 10) ++year_digits;
  std::string out(static_cast<size_t>(year_digits) + 20, '\0');
  char* p = out.data();
  put_digits(static_cast<uint64_t>(year), year_digits, p + year_digits);
  p += year_digits;
  const auto field = [&p](char sep, uint64_t v, int n) {
    *p++ = sep;
    put_digits(v, n, p + n);
    p += n;
  };
  field('-', month, 2);
  field('-', day, 2);
  field('T', static_cast<uint64_t>(sod / 3600), 2);
  field(':', static_cast<uint64_t>(sod / 60 % 60), 2);
  field(':', static_cast<uint64_t>(sod % 60), 2);
  field('.', static_cast<uint64_t>(ms % 1000), 3);
  *p = 'Z';
  return out;
}

namespace {

bool digits(std::string_view s, size_t pos, size_t n, int* out) {
  if (pos + n > s.size()) return false;
  int v = 0;
  for (size_t i = pos; i < pos + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    v = v * 10 + (s[i] - '0');
  }
  *out = v;
  return true;
}

int64_t days_from_civil(int y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return static_cast<int64_t>(era) * 146097 + static_cast<int64_t>(doe) - 719468;
}

}  // namespace

bool parse_time_ms(std::string_view s, int64_t* ms) {
  // YYYY-MM-DDTHH:MM:SS[.fff...](Z|+hh:mm|-hh:mm)
  int y, mo, d, h, mi, se;
  if (s.size() < 20 || !digits(s, 0, 4, &y) || s[4] != '-' || !digits(s, 5, 2, &mo) ||
      s[7] != '-' || !digits(s, 8, 2, &d) || (s[10] != 'T' && s[10] != 't') ||
      !digits(s, 11, 2, &h) || s[13] != ':' || !digits(s, 14, 2, &mi) || s[16] != ':' ||
      !digits(s, 17, 2, &se)) {
    return false;
  }
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || se > 60 || y < 1970) {
    return false;
  }
  static const int kDays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  if (d > kDays[mo - 1] || (mo == 2 && d == 29 && !leap)) return false;
  size_t pos = 19;
  int frac_ms = 0;
  if (pos < s.size() && s[pos] == '.') {
    ++pos;
    size_t start = pos;
    int scale = 100;
    while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
      frac_ms += (s[pos] - '0') * scale;
      scale /= 10;
      ++pos;
    }
    if (pos == start || pos - start > 9) return false;
  }
  int64_t offset_s = 0;
  if (pos < s.size() && (s[pos] == 'Z' || s[pos] == 'z')) {
    ++pos;
  } else if (pos < s.size() && (s[pos] == '+' || s[pos] == '-')) {
    int oh, om;
    if (!digits(s, pos + 1, 2, &oh) || pos + 3 >= s.size() || s[pos + 3] != ':' ||
        !digits(s, pos + 4, 2, &om) || oh > 23 || om > 59) {
      return false;
    }
    offset_s = (oh * 3600 + om * 60) * (s[pos] == '+' ? 1 : -1);
    pos += 6;
  } else {
    return false;
  }
  if (pos != s.size()) return false;
  int64_t days = days_from_civil(y, static_cast<unsigned>(mo), static_cast<unsigned>(d));
  int64_t secs = days * 86400 + h * 3600 + mi * 60 + (se == 60 ? 59 : se) - offset_s;
  if (secs < 0) return false;
  *ms = secs * 1000 + frac_ms;
  return true;
}

}  // namespace runledger
