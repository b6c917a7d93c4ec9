// parse_query (http/query_text.h): splitting on '&' and '=', percent-decoding
// and '+' as a space in keys and values, malformed escapes kept as sent.
#include "http/query_text.h"

#include <map>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

namespace runledger::testing {
namespace {

using Pairs = std::vector<std::pair<std::string, std::string>>;

Pairs parsed(std::string_view query) {
  const auto m = http::parse_query(query);
  return Pairs(m.begin(), m.end());
}

TEST(QueryText, KeyValuePairsAreSplitOnAmpersandAndEquals) {
  // Given two parameters, When parsed, Then both are there, sorted by key
  EXPECT_EQ(parsed("limit=2&after=10"), (Pairs{{"after", "10"}, {"limit", "2"}}));
}

TEST(QueryText, AnEmptyQueryHasNoParameters) { EXPECT_TRUE(http::parse_query("").empty()); }

TEST(QueryText, EmptyPiecesAreSkipped) {
  // Given leading, doubled and trailing '&'
  // Then only the real pieces remain
  EXPECT_EQ(parsed("&a=1&&b=2&"), (Pairs{{"a", "1"}, {"b", "2"}}));
  EXPECT_TRUE(http::parse_query("&&&").empty());
}

TEST(QueryText, APieceWithoutEqualsHasAnEmptyValue) {
  EXPECT_EQ(parsed("verbose&x="), (Pairs{{"verbose", ""}, {"x", ""}}));
}

TEST(QueryText, OnlyTheFirstEqualsSplitsKeyFromValue) {
  EXPECT_EQ(parsed("f=a=b"), (Pairs{{"f", "a=b"}}));
}

TEST(QueryText, AnEmptyKeyIsKept) { EXPECT_EQ(parsed("=v"), (Pairs{{"", "v"}})); }

TEST(QueryText, PercentEscapesAreDecodedInKeysAndValues) {
  // Given escapes in either case, of reserved characters and of UTF-8 bytes
  // When parsed
  // Then each %XX is its byte; an escaped '&', '=' or '+' is literal
  EXPECT_EQ(parsed("na%6De=%2Fshop%2fa&k%3Dy=a%26b&p=1%2B1&u=%C3%A9"),
            (Pairs{{"k=y", "a&b"}, {"name", "/shop/a"}, {"p", "1+1"}, {"u", "\xc3\xa9"}}));
}

TEST(QueryText, PlusIsASpaceInKeysAndValues) {
  EXPECT_EQ(parsed("a+b=c+d++e"), (Pairs{{"a b", "c d  e"}}));
}

TEST(QueryText, AMalformedPercentSequenceIsKeptLiterally) {
  // Given '%' at the end, with one hex digit, with non-hex digits, and "%%41"
  // Then the bad '%' stays as sent, and a good escape after it is still decoded
  EXPECT_EQ(parsed("a=%&b=%4&c=%zz&d=%%41&e=100%"),
            (Pairs{{"a", "%"}, {"b", "%4"}, {"c", "%zz"}, {"d", "%A"}, {"e", "100%"}}));
}

TEST(QueryText, AnEscapedNulByteIsDecoded) {
  const auto m = http::parse_query("k=a%00b");
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m.begin()->second, std::string("a\0b", 3));
}

TEST(QueryText, ARepeatedKeyKeepsEveryValueInOrder) {
  // Given a key three times
  const auto m = http::parse_query("s=b&s=a&t=1&s=c");

  // Then its values are all there, in the order given
  auto [from, to] = m.equal_range("s");
  std::vector<std::string> values;
  for (auto it = from; it != to; ++it) values.push_back(it->second);
  EXPECT_EQ(values, (std::vector<std::string>{"b", "a", "c"}));
  EXPECT_EQ(m.count("t"), 1u);
}

}  // namespace
}  // namespace runledger::testing
