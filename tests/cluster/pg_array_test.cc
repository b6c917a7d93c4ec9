// BinaryArray (cluster/pg_array.h) against a real server: each element type
// reads back as what was added, a reused array holds only what was added
// since clear(), and an array of the wrong element type is refused.
#include <string>

#include <gtest/gtest.h>

#include "cluster/pg_array.h"
#include "tests/cluster/pg_schema_fixture.h"

namespace runledger::testing {
namespace {

using pg::BinaryArray;
using pg::Element;

class PgArrayTest : public PgSchemaTest {
 protected:
  // The text of `sql`'s one value, $1 being `array`.
  std::string read_back(const std::string& sql, BinaryArray& array) {
    pg::Result r;
    Status st = admin_->query(sql, {pg::Param::bytes(array.bytes())}, &r);
    EXPECT_TRUE(st.ok()) << sql << ": " << st.ToString();
    if (!st.ok() || r.rows() != 1) return "<no row>";
    return std::string(r.bytes(0, 0));
  }
};

TEST_F(PgArrayTest, EachElementTypeReadsBackAsAdded) {
  BinaryArray int8s(Element::kInt8);
  int8s.add_int8(1);
  int8s.add_int8(-2);
  int8s.add_int8(9'007'199'254'740'993);
  EXPECT_EQ(read_back("SELECT $1::int8[]::text", int8s), "{1,-2,9007199254740993}");

  BinaryArray int4s(Element::kInt4);
  int4s.add_int4(7);
  int4s.add_int4(-2'147'483'647);
  EXPECT_EQ(read_back("SELECT $1::int4[]::text", int4s), "{7,-2147483647}");

  BinaryArray texts(Element::kText);
  texts.add("job/a");
  texts.add("");
  texts.add("quote \" comma , brace } é");
  EXPECT_EQ(read_back("SELECT string_agg(t, '|' ORDER BY n) FROM unnest($1::text[]) "
                      "WITH ORDINALITY AS x(t, n)",
                      texts),
            "job/a||quote \" comma , brace } é");

  BinaryArray bytes(Element::kBytea);
  bytes.add(std::string("\0\x01\xff", 3));
  bytes.add("");
  EXPECT_EQ(read_back("SELECT string_agg(encode(b, 'hex'), ',' ORDER BY n) FROM "
                      "unnest($1::bytea[]) WITH ORDINALITY AS x(b, n)",
                      bytes),
            "0001ff,");

  BinaryArray times(Element::kTimestamptz);
  times.add_timestamptz_ms(1'764'979'200'123);  // 2025-12-06T00:00:00.123Z
  times.add_timestamptz_ms(0);
  EXPECT_EQ(read_back("SELECT string_agg(to_char(t AT TIME ZONE 'UTC', "
                      "'YYYY-MM-DD\"T\"HH24:MI:SS.MS'), ',' ORDER BY n) FROM "
                      "unnest($1::timestamptz[]) WITH ORDINALITY AS x(t, n)",
                      times),
            "2025-12-06T00:00:00.123,1970-01-01T00:00:00.000");

  BinaryArray docs(Element::kJsonb);
  docs.add_jsonb(R"({"b": [1, 2], "a": "x"})");
  docs.add_jsonb("null");
  EXPECT_EQ(read_back("SELECT $1::jsonb[]::text", docs),
            R"({"{\"a\": \"x\", \"b\": [1, 2]}","null"})");
}

TEST_F(PgArrayTest, ClearKeepsNothingOfWhatWasAdded) {
  BinaryArray a(Element::kInt8);
  a.add_int8(1);
  a.add_int8(2);
  EXPECT_EQ(a.size(), 2u);
  a.clear();
  EXPECT_EQ(a.size(), 0u);
  a.add_int8(3);
  EXPECT_EQ(read_back("SELECT $1::int8[]::text", a), "{3}");
}

// Positive control: the server checks the element type the array names.
TEST_F(PgArrayTest, AnArrayOfAnotherElementTypeIsRefused) {
  BinaryArray int4s(Element::kInt4);
  int4s.add_int4(1);
  pg::Result r;
  Status st = admin_->query("SELECT $1::int8[]::text", {pg::Param::bytes(int4s.bytes())}, &r);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("instead of expected 20"), std::string::npos) << st.ToString();
}

}  // namespace
}  // namespace runledger::testing
