// json_too_deep (base/json_depth.h): levels counted outside strings only,
// the top-level key named, the limit exact.
#include "base/json_depth.h"

#include <string>

#include <gtest/gtest.h>

namespace runledger::testing {
namespace {

using runledger::json_too_deep;

std::string nested(size_t levels) {
  std::string text(levels, '[');
  text.append(levels, ']');
  return text;
}

TEST(JsonDepth, TheBodyItselfIsTheFirstLevel) {
  EXPECT_FALSE(json_too_deep("{}", 1));
  EXPECT_TRUE(json_too_deep("{}", 0));
  EXPECT_FALSE(json_too_deep(R"({"a":[[1]]})", 3));
  EXPECT_TRUE(json_too_deep(R"({"a":[[1]]})", 2));
}

TEST(JsonDepth, LevelsThatCloseDoNotAddUp) {
  // Given many siblings each two levels deep, Then the text is two deep.
  std::string wide = "[";
  for (int i = 0; i < 1000; ++i) wide += (i ? ",[1]" : "[1]");
  wide += "]";
  EXPECT_FALSE(json_too_deep(wide, 2));
  EXPECT_TRUE(json_too_deep(wide, 1));
}

TEST(JsonDepth, NamesTheTopLevelKeyWhoseValueGoesTooDeep) {
  auto deep = json_too_deep(R"({"kind":"k","input":{"x":)" + nested(10) + "}}", 5);
  ASSERT_TRUE(deep);
  EXPECT_EQ(deep->field, "input");
}

TEST(JsonDepth, AStringValueAtTheTopIsNotTakenForAKey) {
  auto deep = json_too_deep(R"({"kind":"input","output":)" + nested(10) + "}", 5);
  ASSERT_TRUE(deep);
  EXPECT_EQ(deep->field, "output");
}

TEST(JsonDepth, KeysOfDeeperObjectsAreNotTheField) {
  auto deep = json_too_deep(R"({"documents":{"pending":)" + nested(10) + "}}", 5);
  ASSERT_TRUE(deep);
  EXPECT_EQ(deep->field, "documents");
}

TEST(JsonDepth, BracketsInsideStringsAreText) {
  const std::string brackets(1000, '[');
  EXPECT_FALSE(json_too_deep(R"({"input":")" + brackets + R"("})", 2));
  EXPECT_FALSE(json_too_deep(R"({")" + brackets + R"(":1})", 2));
}

TEST(JsonDepth, AnEscapedQuoteDoesNotEndTheString) {
  // The string holds \"[[[ : its brackets are still text.
  EXPECT_FALSE(json_too_deep(R"({"input":"a\"[[[[","b":1})", 2));
  // An escaped backslash does end it: the bracket after is a level.
  EXPECT_TRUE(json_too_deep(R"({"input":"a\\","b":[[[1]]]})", 2));
}

TEST(JsonDepth, AnArrayAtTheTopNamesNoField) {
  auto deep = json_too_deep(nested(10), 5);
  ASSERT_TRUE(deep);
  EXPECT_EQ(deep->field, "");
}

TEST(JsonDepth, ALongKeyIsCutInTheReport) {
  const std::string key(1000, 'k');
  auto deep = json_too_deep("{\"" + key + "\":" + nested(10) + "}", 5);
  ASSERT_TRUE(deep);
  EXPECT_EQ(deep->field, key.substr(0, 64));
}

TEST(JsonDepth, AnUnterminatedStringEndsTheScan) {
  EXPECT_FALSE(json_too_deep(R"({"input":"[[[[[[)", 2));
}

}  // namespace
}  // namespace runledger::testing
