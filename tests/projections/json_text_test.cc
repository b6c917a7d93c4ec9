// JSON text as nlohmann's dump() writes it: strings escaped the same way,
// the same refusal of invalid UTF-8, and a check of "already dump() output"
// that never says yes to text whose parse and dump would differ.
#include "projections/json_text.h"

#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/projections/random_json.h"

namespace runledger {
namespace {

using nlohmann::json;

// dump()'s rendering of `s`, or "" when it throws (a JSON string is never "").
std::string dumped(const std::string& s) {
  try {
    return json(s).dump();
  } catch (const json::type_error&) {
    return "";
  }
}

std::string appended(const std::string& s) {
  std::string out;
  return json_text::append_string(out, s) ? out : "";
}

TEST(JsonTextString, EveryAsciiByteIsEscapedAsDumpEscapesIt) {
  for (int c = 0; c < 0x80; ++c) {
    std::string s = "x" + std::string(1, static_cast<char>(c)) + "y";
    EXPECT_EQ(appended(s), dumped(s)) << "byte " << c;
  }
  EXPECT_EQ(appended(std::string("\x01\x1f\x7f", 3)), R"("\u0001\u001f)"
                                                      "\x7f\"");
}

TEST(JsonTextString, MultiByteCharactersAreWrittenRaw) {
  for (const std::string s : {"caf\xC3\xA9", "\xE6\x97\xA5\xE6\x9C\xAC", "\xF0\x9F\x98\x80",
                              "\xF4\x8F\xBF\xBF", "\xEF\xBF\xBF", "\xED\x9F\xBF"}) {
    EXPECT_EQ(appended(s), "\"" + s + "\"");
    EXPECT_EQ(appended(s), dumped(s));
  }
}

TEST(JsonTextString, InvalidUtf8IsRefusedWhereDumpThrows) {
  for (const std::string s :
       {"\x80", "\xC1\xBF", "\xC0\xAF", "\xE0\x9F\xBF", "\xED\xA0\x80", "\xF0\x8F\xBF\xBF",
        "\xF4\x90\x80\x80", "\xF5\x80\x80\x80", "\xFF", "a\xE6\x97", "\xC3", "\xC3\x41"}) {
    std::string out;
    EXPECT_FALSE(json_text::append_string(out, s)) << ::testing::PrintToString(s);
    EXPECT_EQ(dumped(s), "") << ::testing::PrintToString(s);
  }
}

TEST(JsonTextString, RandomBytesMatchDumpOrAreRefusedWithIt) {
  std::mt19937 rng(7);
  int valid = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string s;
    for (int n = rng() % 8; n > 0; --n) {
      // Mostly bytes around the UTF-8 boundaries, so many strings are valid.
      static const unsigned char kBytes[] = {0x00, 0x08, 0x1f, 0x20, 0x22, 0x5c, 0x7f, 0x80,
                                             0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xc2, 0xdf,
                                             0xe0, 0xed, 0xef, 0xf0, 0xf4, 0xf5, 0xff, 'a'};
      s += static_cast<char>(kBytes[rng() % sizeof kBytes]);
    }
    EXPECT_EQ(appended(s), dumped(s)) << ::testing::PrintToString(s);
    valid += !dumped(s).empty();
  }
  EXPECT_GT(valid, 1000);
}

TEST(JsonTextNumbers, IntegersAndBooleansAsDumpWritesThem) {
  for (int64_t v : {int64_t{0}, int64_t{-1}, int64_t{42}, INT64_MIN, INT64_MAX}) {
    std::string out;
    json_text::append_int(out, v);
    EXPECT_EQ(out, json(v).dump());
  }
  std::string out;
  json_text::append_bool(out, true);
  json_text::append_bool(out, false);
  EXPECT_EQ(out, "truefalse");
}

TEST(JsonTextDumpForm, DumpOutputIsRecognized) {
  for (const std::string t :
       {"null", "true", "false", "0", "-1", "18446744073709551615", "-9223372036854775808", "1.5",
        "-0.0", "1.0", "\"\"", "\"\\u0000\\u001f\\b\\f\\n\\r\\t\\\"\\\\\"", "\"\x7f/\"",
        "\"caf\xC3\xA9\"", "[]", "{}", "[[],{}]", R"({"a":1,"ab":[true,null],"b":{"":0}})"}) {
    EXPECT_TRUE(json_text::is_dump_form(t)) << t;
    EXPECT_EQ(json::parse(t).dump(), t) << "the case itself must be dump() output";
  }
  for (double v : {1e20, 1e-7, 0.1, -2.5e300, 5e-324, 123456789.125}) {
    EXPECT_TRUE(json_text::is_dump_form(json(v).dump())) << json(v).dump();
  }
}

TEST(JsonTextDumpForm, TextThatDumpWouldChangeIsNot) {
  for (const std::string t : {"",
                              " 1",
                              "1 ",
                              "{\"a\": 1}",
                              R"({"b":1,"a":2})",
                              R"({"a":1,"a":2})",
                              "-0",
                              "1.50",
                              "1E2",
                              "1e2",
                              "0.10",
                              "18446744073709551616",
                              "-9223372036854775809",
                              "1e400",
                              "01",
                              R"("\/")",
                              R"("\u0041")",
                              R"("\u001F")",
                              R"("\u000a")",
                              R"("\u0008")",
                              "\"\x01\"",
                              "\"\xFF\"",
                              "[1,]",
                              "tru",
                              "nul",
                              "{\"a\"}",
                              "[1",
                              "\"abc",
                              "\xEF\xBB\xBF"
                              "1",
                              R"({"\u0061":1})",
                              "+1",
                              ".5",
                              "1.",
                              "1e"}) {
    EXPECT_FALSE(json_text::is_dump_form(t)) << t;
    json parsed = json::parse(t, nullptr, false);
    if (!parsed.is_discarded()) {
      EXPECT_NE(parsed.dump(), t) << "the case itself must not be dump() output";
    }
  }
}

TEST(JsonTextDumpForm, DeepNestingIsLeftToTheParser) {
  const std::string deep = std::string(100, '[') + std::string(100, ']');
  EXPECT_FALSE(json_text::is_dump_form(deep));
  const std::string shallow = std::string(60, '[') + std::string(60, ']');
  EXPECT_TRUE(json_text::is_dump_form(shallow));
}

// Random values, their dumps and mutations of those: whenever the check says
// yes, parse and dump give the text back; for plain dumps it says yes.
TEST(JsonTextDumpForm, NeverYesForTextThatParseAndDumpWouldChange) {
  testing::RandomJson r(
      11, {"a", "b", "B", "\"", "\\", "/", "\n", "\x01", "\xC3\xA9", "\xF0\x9F\x98\x80", ""},
      /*max_depth=*/2, /*max_pieces=*/2);
  auto pick = [&](int n) { return r.pick(n); };
  static const std::string kSyntax = "{}[]:,\" \\-+.0123456789eEa\x01";
  int recognized = 0;
  for (int i = 0; i < 20000; ++i) {
    const std::string dump = r.value().dump();
    recognized += json_text::is_dump_form(dump);
    // Keys with escapes are left to the parser; everything else is recognized.
    if (dump.find('\\') == std::string::npos) {
      EXPECT_TRUE(json_text::is_dump_form(dump)) << dump;
    }
    std::string t = dump;
    for (int n = 1 + pick(2); n > 0 && !t.empty(); --n) {
      const size_t at = static_cast<size_t>(pick(static_cast<int>(t.size())));
      switch (pick(3)) {
        case 0:
          t.erase(at, 1);
          break;
        case 1:
          t.insert(at, 1, kSyntax[pick(static_cast<int>(kSyntax.size()))]);
          break;
        default:
          t[at] = kSyntax[pick(static_cast<int>(kSyntax.size()))];
          break;
      }
    }
    for (const std::string* text : {&dump, static_cast<const std::string*>(&t)}) {
      if (!json_text::is_dump_form(*text)) continue;
      json parsed = json::parse(*text, nullptr, false);
      ASSERT_FALSE(parsed.is_discarded()) << *text;
      ASSERT_EQ(parsed.dump(), *text);
    }
  }
  EXPECT_GT(recognized, 10000);
}

}  // namespace
}  // namespace runledger
