// The incremental HTTP/1.1 request parser (http/request_parser.h): what it
// accepts, what it refuses with which status, its limits exactly at and one
// past their value, pipelining and reset(), and that how the bytes are split
// between calls never changes the outcome.
#include "http/request_parser.h"

#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

namespace runledger::testing {
namespace {

using http::ParserLimits;
using http::RequestParser;
using State = RequestParser::State;

// Everything the parser says after a run, one line per part, so that two runs
// compare with one EXPECT_EQ and a readable difference.
std::string describe(const RequestParser& p, size_t consumed) {
  std::ostringstream o;
  const char* state = p.state() == State::kDone    ? "done"
                      : p.state() == State::kError ? "error"
                                                   : "need-more";
  o << "state=" << state << " status=" << p.error_status() << " message=" << p.error_message()
    << "\nconsumed=" << consumed << " started=" << p.started()
    << " headers_complete=" << p.headers_complete();
  const auto& r = p.request();
  o << "\n"
    << r.method << " " << r.target << " HTTP/1." << r.version_minor
    << " keep_alive=" << r.keep_alive << " expect_continue=" << r.expect_continue;
  for (const auto& [name, value] : r.headers) o << "\n" << name << ": [" << value << "]";
  o << "\nbody=[" << r.body << "]";
  return o.str();
}

// Feeds `text` in one call; returns what was consumed.
size_t feed_whole(RequestParser& p, std::string_view text) {
  return p.feed(text.data(), text.size());
}

// Feeds `text` the way a connection does: the bytes arrive in pieces ending
// at `cuts`; what a call leaves unconsumed is passed again with the next
// piece. Returns the bytes consumed in all.
size_t feed_in_pieces(RequestParser& p, std::string_view text, const std::vector<size_t>& cuts) {
  std::string pending;
  size_t consumed = 0;
  size_t from = 0;
  std::vector<size_t> ends = cuts;
  ends.push_back(text.size());
  for (size_t end : ends) {
    pending.append(text.substr(from, end - from));
    from = end;
    const size_t c = p.feed(pending.data(), pending.size());
    EXPECT_LE(c, pending.size());
    consumed += c;
    pending.erase(0, c);
    if (p.state() != State::kNeedMore) break;
  }
  return consumed;
}

std::string parse_whole(std::string_view text, ParserLimits limits = {}) {
  RequestParser p(limits);
  const size_t consumed = feed_whole(p, text);
  return describe(p, consumed);
}

// Every split of `text` in two, and byte by byte, gives the outcome of one
// feed of the whole. Returns that outcome.
std::string expect_same_under_every_split(std::string_view text, ParserLimits limits = {}) {
  const std::string whole = parse_whole(text, limits);
  for (size_t cut = 0; cut <= text.size(); ++cut) {
    RequestParser p(limits);
    const size_t consumed = feed_in_pieces(p, text, {cut});
    EXPECT_EQ(describe(p, consumed), whole) << "split at byte " << cut;
  }
  std::vector<size_t> every_byte;
  for (size_t i = 1; i < text.size(); ++i) every_byte.push_back(i);
  RequestParser p(limits);
  const size_t consumed = feed_in_pieces(p, text, every_byte);
  EXPECT_EQ(describe(p, consumed), whole) << "byte by byte";
  return whole;
}

// --- accepted requests -----------------------------------------------------

TEST(RequestParser, ASimpleGetIsParsedWithAllItsParts) {
  // Given a GET with a query and two headers
  const std::string text =
      "GET /v1/jobs?limit=2 HTTP/1.1\r\nHost: localhost\r\nAccept: */*\r\n\r\n";
  RequestParser p;

  // When it is fed in one call
  const size_t consumed = feed_whole(p, text);

  // Then the whole request is consumed and every part is there
  EXPECT_EQ(p.state(), State::kDone);
  EXPECT_EQ(consumed, text.size());
  EXPECT_EQ(p.error_status(), 0);
  EXPECT_TRUE(p.started());
  EXPECT_TRUE(p.headers_complete());
  const auto& r = p.request();
  EXPECT_EQ(r.method, "GET");
  EXPECT_EQ(r.target, "/v1/jobs?limit=2");
  EXPECT_EQ(r.version_minor, 1);
  ASSERT_EQ(r.headers.size(), 2u);
  EXPECT_EQ(r.headers[0].first, "Host");
  EXPECT_EQ(r.headers[0].second, "localhost");
  EXPECT_EQ(r.headers[1].first, "Accept");
  EXPECT_EQ(r.headers[1].second, "*/*");
  EXPECT_EQ(r.body, "");
  EXPECT_TRUE(r.keep_alive);
  EXPECT_FALSE(r.expect_continue);
}

TEST(RequestParser, TheTargetIsKeptRawAndTheMethodAsSent) {
  // Given an encoded target and a lower-case extension method
  RequestParser p;
  const std::string text = "purge /v1/a%2Fb?x=%20+y HTTP/1.1\r\n\r\n";

  // When it is parsed
  feed_whole(p, text);

  // Then neither is decoded nor normalised
  ASSERT_EQ(p.state(), State::kDone);
  EXPECT_EQ(p.request().method, "purge");
  EXPECT_EQ(p.request().target, "/v1/a%2Fb?x=%20+y");
}

TEST(RequestParser, HeaderValuesLoseSurroundingSpacesAndTabsButNotInnerOnes) {
  // Given values padded with spaces and tabs, and an empty value
  RequestParser p;
  feed_whole(p, "GET / HTTP/1.1\r\nX-A: \t a  b \t\r\nX-Empty:\r\nX-B:c\r\n\r\n");

  // Then the padding is gone, the inner spaces stay
  ASSERT_EQ(p.state(), State::kDone);
  const auto& h = p.request().headers;
  ASSERT_EQ(h.size(), 3u);
  EXPECT_EQ(h[0].second, "a  b");
  EXPECT_EQ(h[1].second, "");
  EXPECT_EQ(h[2].second, "c");
}

TEST(RequestParser, HeaderLookupIgnoresCaseAndReturnsTheFirstOfItsName) {
  // Given two fields of one name in different cases
  RequestParser p;
  feed_whole(p, "GET / HTTP/1.1\r\nX-Token: first\r\nx-token: second\r\n\r\n");
  ASSERT_EQ(p.state(), State::kDone);

  // When they are looked up
  const std::string* found = p.request().header("X-TOKEN");
  const std::string* absent = p.request().header("X-Other");

  // Then the first one is found, names are kept as sent, and an absent name is nullptr
  ASSERT_NE(found, nullptr);
  EXPECT_EQ(*found, "first");
  EXPECT_EQ(absent, nullptr);
  EXPECT_EQ(p.request().headers[1].first, "x-token");
}

TEST(RequestParser, BareLineFeedsAreAcceptedLikeCrlf) {
  // Given the same request with LF and with CRLF line ends
  const std::string lf = "POST /x HTTP/1.1\nHost: h\nContent-Length: 3\n\nabc";
  const std::string crlf = "POST /x HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nabc";

  // When both are parsed
  RequestParser a;
  RequestParser b;
  const size_t consumed_lf = feed_whole(a, lf);
  feed_whole(b, crlf);

  // Then they give the same request
  ASSERT_EQ(a.state(), State::kDone);
  EXPECT_EQ(consumed_lf, lf.size());
  EXPECT_EQ(a.request().target, b.request().target);
  EXPECT_EQ(a.request().headers, b.request().headers);
  EXPECT_EQ(a.request().body, "abc");
}

TEST(RequestParser, EmptyLinesBeforeTheRequestLineAreConsumedAndIgnored) {
  // Given empty lines (CRLF and LF) before a request line that has not arrived yet
  RequestParser p;
  const std::string leading = "\r\n\n\r\n";

  // When they are fed
  const size_t consumed = feed_whole(p, leading);

  // Then they are consumed, but the request has not started
  EXPECT_EQ(consumed, leading.size());
  EXPECT_EQ(p.state(), State::kNeedMore);
  EXPECT_FALSE(p.started());

  // And when the request follows, it is parsed
  const std::string rest = "GET / HTTP/1.1\r\n\r\n";
  EXPECT_EQ(feed_whole(p, rest), rest.size());
  EXPECT_EQ(p.state(), State::kDone);
  EXPECT_EQ(p.request().method, "GET");
}

TEST(RequestParser, StartedAndHeadersCompleteFollowTheLinesConsumed) {
  RequestParser p;
  // Given an incomplete request line: not consumed, not started
  EXPECT_EQ(feed_whole(p, "POST /x HTTP/1.1"), 0u);
  EXPECT_FALSE(p.started());
  // When the request line completes: started, headers not complete
  const std::string head = "POST /x HTTP/1.1\r\nContent-Length: 2\r\n";
  EXPECT_EQ(feed_whole(p, head), head.size());
  EXPECT_TRUE(p.started());
  EXPECT_FALSE(p.headers_complete());
  // When the empty line arrives: headers complete, body still awaited
  EXPECT_EQ(feed_whole(p, "\r\n"), 2u);
  EXPECT_TRUE(p.headers_complete());
  EXPECT_EQ(p.state(), State::kNeedMore);
  // Then the body completes the request
  EXPECT_EQ(feed_whole(p, "ok"), 2u);
  EXPECT_EQ(p.state(), State::kDone);
  EXPECT_EQ(p.request().body, "ok");
}

TEST(RequestParser, AContentLengthBodyIsReadAsItComes) {
  // Given headers announcing 10 bytes, then the body in two parts
  RequestParser p;
  const std::string head = "POST /v1/jobs HTTP/1.1\r\nContent-Length: 10\r\n\r\n";
  ASSERT_EQ(feed_whole(p, head), head.size());

  // When 4 bytes come, then the 6 others and bytes of a next request
  EXPECT_EQ(feed_whole(p, "0123"), 4u);
  EXPECT_EQ(p.state(), State::kNeedMore);
  EXPECT_EQ(feed_whole(p, "456789GET"), 6u);

  // Then exactly the body is consumed
  EXPECT_EQ(p.state(), State::kDone);
  EXPECT_EQ(p.request().body, "0123456789");
}

TEST(RequestParser, ContentLengthZeroIsDoneAtTheEndOfTheHeaders) {
  // Given a POST with Content-Length: 0 followed by a next request
  const std::string first = "POST /x HTTP/1.1\r\nContent-Length: 0\r\n\r\n";
  RequestParser p;

  // When both are fed at once
  const size_t consumed = feed_whole(p, first + "GET / HTTP/1.1\r\n\r\n");

  // Then the first is done with an empty body and the second is left
  EXPECT_EQ(p.state(), State::kDone);
  EXPECT_EQ(consumed, first.size());
  EXPECT_EQ(p.request().body, "");
}

TEST(RequestParser, WithoutContentLengthOrTransferEncodingTheBodyIsEmpty) {
  // Given a POST without any body framing, followed by other bytes
  const std::string head = "POST /x HTTP/1.1\r\nHost: h\r\n\r\n";
  RequestParser p;

  // When fed with the bytes after it
  const size_t consumed = feed_whole(p, head + "{\"a\":1}");

  // Then the request ends with its headers: those bytes are not its body
  EXPECT_EQ(p.state(), State::kDone);
  EXPECT_EQ(consumed, head.size());
  EXPECT_EQ(p.request().body, "");
}

TEST(RequestParser, RepeatedEqualContentLengthsAreAccepted) {
  RequestParser p;
  feed_whole(p, "POST /x HTTP/1.1\r\nContent-Length: 2\r\ncontent-length: 002\r\n\r\nhi");
  EXPECT_EQ(p.state(), State::kDone);
  EXPECT_EQ(p.request().body, "hi");
}

TEST(RequestParser, AChunkedBodyWithExtensionsAndTrailersIsDechunked) {
  // Given chunks with extensions (one with a quoted value), a size in
  // upper-case hex, a last chunk with an extension and two trailers
  const std::string text =
      "POST /v1/jobs HTTP/1.1\r\n"
      "Transfer-Encoding: chunked\r\n"
      "\r\n"
      "5;name=value\r\nhello\r\n"
      "1 ; a ; b=\"x;y\"\r\n,\r\n"
      "B\r\n 0123456789\r\n"
      "0;last\r\n"
      "X-Checksum: abc\r\n"
      "X-Other: def\r\n"
      "\r\n";
  RequestParser p;

  // When it is parsed, followed by a next request
  const size_t consumed = feed_whole(p, text + "GET / HTTP/1.1\r\n\r\n");

  // Then the body is the data of the chunks, the trailers are not headers,
  // and the next request is left
  ASSERT_EQ(p.state(), State::kDone) << p.error_message();
  EXPECT_EQ(consumed, text.size());
  EXPECT_EQ(p.request().body, "hello, 0123456789");
  ASSERT_EQ(p.request().headers.size(), 1u);
  EXPECT_EQ(p.request().header("X-Checksum"), nullptr);
}

// The header section may end its lines in bare LFs; a chunked body may not:
// there a reader that took a bare LF for a line end and one that did not
// would see different bodies (request smuggling).
TEST(RequestParser, BareLineFeedsInAChunkedBodyAreRefused) {
  const std::string head = "POST /x HTTP/1.1\nTransfer-Encoding: chunked\n\n";
  for (const std::string& body :
       {std::string("3\nabc\r\n0\r\n\r\n"), std::string("3\r\nabc\n0\r\n\r\n"),
        std::string("3\r\nabc\r\n0\n\r\n"), std::string("3\r\nabc\r\n0\r\nX-T: 1\n\r\n")}) {
    RequestParser p;
    feed_whole(p, head + body);
    EXPECT_EQ(p.state(), State::kError) << body;
    EXPECT_EQ(p.error_status(), 400) << body;
  }
  RequestParser crlf;
  feed_whole(crlf, head + "3\r\nabc\r\n0\r\n\r\n");
  EXPECT_EQ(crlf.state(), State::kDone) << crlf.error_message();
  EXPECT_EQ(crlf.request().body, "abc");
}

// Found by fuzz_request_parser: a chunk-size line over the limit that also
// ends in a bare LF got 400 whole and 413 in pieces. Its content is judged
// first either way.
TEST(RequestParser, AChunkLineOverTheLimitEndingInABareLfGetsOneVerdictHoweverSplit) {
  ParserLimits limits;
  limits.body_bytes_max = 40;
  const std::string text =
      "PATCH /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n14\r\n01234567890123456789\r\n"
      "15\rc%201 HT\n0123456789012345678901\r\n0\r\n\r\n";
  const std::string outcome = expect_same_under_every_split(text, limits);
  EXPECT_NE(outcome.find("status=413"), std::string::npos) << outcome;
}

TEST(RequestParser, ChunkExtensionsCountAgainstTheBodyLimit) {
  // Given a limit of 100 bytes and chunks of one byte with long extensions
  ParserLimits limits;
  limits.body_bytes_max = 100;
  RequestParser p(limits);
  std::string text = "POST /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n";
  for (int i = 0; i < 10; ++i) text += "1;ext=" + std::string(20, 'e') + "\r\nx\r\n";
  text += "0\r\n\r\n";
  // When it is read
  feed_whole(p, text);
  // Then 10 bytes of data with 260 bytes of extensions are over the limit
  EXPECT_EQ(p.state(), State::kError);
  EXPECT_EQ(p.error_status(), 413);
  // and without the extensions the same data passes
  RequestParser plain(limits);
  std::string short_text = "POST /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n";
  for (int i = 0; i < 10; ++i) short_text += "1\r\nx\r\n";
  feed_whole(plain, short_text + "0\r\n\r\n");
  EXPECT_EQ(plain.state(), State::kDone) << plain.error_message();
}

TEST(RequestParser, AnAbsoluteFormTargetIsItsOriginFormWithTheAuthorityApart) {
  struct Case {
    std::string target, path, authority;
  };
  for (const Case& c : std::vector<Case>{
           {"http://127.0.0.1:8080/v1/health?x=1", "/v1/health?x=1", "127.0.0.1:8080"},
           {"HTTPS://localhost/v1/jobs", "/v1/jobs", "localhost"},
           {"http://[::1]:80", "/", "[::1]:80"},
           {"http://h?a=b", "/?a=b", "h"},
           {"/v1/jobs", "/v1/jobs", ""}}) {
    RequestParser p;
    feed_whole(p, "GET " + c.target + " HTTP/1.1\r\nHost: x\r\n\r\n");
    ASSERT_EQ(p.state(), State::kDone) << c.target << ": " << p.error_message();
    EXPECT_EQ(p.request().target, c.path) << c.target;
    EXPECT_EQ(p.request().authority, c.authority) << c.target;
  }
  for (const std::string bad : {"ftp://h/x", "http:///x", "http://user@h/x", "h/x", "http:/x"}) {
    RequestParser p;
    feed_whole(p, "GET " + bad + " HTTP/1.1\r\nHost: x\r\n\r\n");
    EXPECT_EQ(p.state(), State::kError) << bad;
    EXPECT_EQ(p.error_status(), 400) << bad;
  }
}

TEST(RequestParser, TransferEncodingIsCaseInsensitiveAndAList) {
  // Given "chunked" in another case, in a list with empty elements
  RequestParser p;
  feed_whole(p, "POST /x HTTP/1.1\r\nTransfer-Encoding: , CHUNKED ,\r\n\r\n2\r\nok\r\n0\r\n\r\n");

  // Then it is the chunked coding
  EXPECT_EQ(p.state(), State::kDone) << p.error_message();
  EXPECT_EQ(p.request().body, "ok");
}

TEST(RequestParser, AChunkSizeOfSixteenHexDigitsIsAccepted) {
  RequestParser p;
  feed_whole(
      p,
      "POST /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0000000000000002\r\nok\r\n0\r\n\r\n");
  EXPECT_EQ(p.state(), State::kDone) << p.error_message();
  EXPECT_EQ(p.request().body, "ok");
}

// --- keep-alive and Expect ---------------------------------------------------

TEST(RequestParser, KeepAliveFollowsTheVersionAndTheConnectionTokens) {
  struct Case {
    std::string version;
    std::string connection_headers;
    bool keep_alive;
  };
  const std::vector<Case> cases = {
      {"1.1", "", true},
      {"1.1", "Connection: close\r\n", false},
      {"1.1", "Connection: CLOSE\r\n", false},
      {"1.1", "Connection: Upgrade, close\r\n", false},
      {"1.1", "Connection: keep-alive\r\n", true},
      {"1.1", "Connection: closed\r\n", true},  // a token, not a prefix
      {"1.1", "Connection: upgrade\r\nConnection: close\r\n", false},
      {"1.0", "", false},
      {"1.0", "Connection: keep-alive\r\n", true},
      {"1.0", "Connection: Keep-Alive\r\n", true},
      {"1.0", "Connection: foo,\tkeep-alive \r\n", true},
      {"1.0", "Connection: keep-alive, close\r\n", false},
      {"1.0", "Connection: keep-alive-ish\r\n", false},
  };
  for (const auto& c : cases) {
    // Given a request of that version with those Connection fields
    const std::string text = "GET / HTTP/" + c.version + "\r\n" + c.connection_headers + "\r\n";
    SCOPED_TRACE(text);
    RequestParser p;

    // When it is parsed
    feed_whole(p, text);

    // Then keep_alive is as the rules say
    ASSERT_EQ(p.state(), State::kDone);
    EXPECT_EQ(p.request().version_minor, c.version == "1.1" ? 1 : 0);
    EXPECT_EQ(p.request().keep_alive, c.keep_alive);
  }
}

TEST(RequestParser, ExpectContinueIsKnownAsSoonAsTheHeadersAreComplete) {
  // Given the headers of an HTTP/1.1 POST expecting 100-continue, body not sent
  RequestParser p;
  const std::string head = "POST /x HTTP/1.1\r\nExpect: 100-Continue\r\nContent-Length: 2\r\n\r\n";

  // When they are fed
  EXPECT_EQ(feed_whole(p, head), head.size());

  // Then the server can tell it may answer 100 Continue
  EXPECT_EQ(p.state(), State::kNeedMore);
  EXPECT_TRUE(p.headers_complete());
  EXPECT_TRUE(p.request().expect_continue);

  // And the body then completes the request
  feed_whole(p, "hi");
  EXPECT_EQ(p.state(), State::kDone);
  EXPECT_EQ(p.request().body, "hi");
}

TEST(RequestParser, ExpectContinueCountsOnlyOnHttp11AndOnlyFor100Continue) {
  RequestParser p10;
  feed_whole(p10, "POST /x HTTP/1.0\r\nExpect: 100-continue\r\nContent-Length: 0\r\n\r\n");
  ASSERT_EQ(p10.state(), State::kDone);
  EXPECT_FALSE(p10.request().expect_continue);

  RequestParser other;
  feed_whole(other, "POST /x HTTP/1.1\r\nExpect: 200-ok\r\nContent-Length: 0\r\n\r\n");
  ASSERT_EQ(other.state(), State::kDone);
  EXPECT_FALSE(other.request().expect_continue);
}

// --- pipelining and reset ----------------------------------------------------

TEST(RequestParser, PipelinedRequestsInOneBufferAreParsedOneAfterTheOther) {
  // Given three requests in one buffer: a GET, a POST with a body, a chunked POST
  const std::string a = "GET /a HTTP/1.1\r\nHost: h\r\n\r\n";
  const std::string b = "POST /b HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello";
  const std::string c =
      "POST /c HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nxyz\r\n0\r\n\r\n";
  const std::string buffer = a + b + c;
  RequestParser p;
  size_t offset = 0;
  struct Expected {
    std::string target;
    std::string body;
    size_t size;
  };
  const std::vector<Expected> expected = {
      {"/a", "", a.size()}, {"/b", "hello", b.size()}, {"/c", "xyz", c.size()}};
  for (const auto& e : expected) {
    // When the parser is fed the rest of the buffer
    const size_t consumed = p.feed(buffer.data() + offset, buffer.size() - offset);

    // Then it stops exactly at the end of the next request
    ASSERT_EQ(p.state(), State::kDone) << e.target << ": " << p.error_message();
    EXPECT_EQ(consumed, e.size);
    EXPECT_EQ(p.request().target, e.target);
    EXPECT_EQ(p.request().body, e.body);
    // And consumes nothing more until reset
    EXPECT_EQ(p.feed(buffer.data() + offset + consumed, buffer.size() - offset - consumed), 0u);
    offset += consumed;
    p.reset();
  }
  EXPECT_EQ(offset, buffer.size());
}

TEST(RequestParser, ResetReadsTheNextRequestWithNothingLeftOfTheFirst) {
  // Given a parser that read a first request with a body, Expect and Connection: close
  RequestParser p;
  feed_whole(p,
             "POST /first HTTP/1.1\r\nConnection: close\r\nExpect: 100-continue\r\n"
             "X-A: 1\r\nX-B: 2\r\nContent-Length: 3\r\n\r\nabc");
  ASSERT_EQ(p.state(), State::kDone);

  // When it is reset and reads a plain HTTP/1.0 GET
  p.reset();
  EXPECT_EQ(p.state(), State::kNeedMore);
  EXPECT_FALSE(p.started());
  EXPECT_FALSE(p.headers_complete());
  feed_whole(p, "GET /second HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");

  // Then only the second request shows
  ASSERT_EQ(p.state(), State::kDone);
  const auto& r = p.request();
  EXPECT_EQ(r.method, "GET");
  EXPECT_EQ(r.target, "/second");
  EXPECT_EQ(r.version_minor, 0);
  ASSERT_EQ(r.headers.size(), 1u);
  EXPECT_EQ(r.headers[0].first, "Connection");
  EXPECT_EQ(r.body, "");
  EXPECT_TRUE(r.keep_alive);
  EXPECT_FALSE(r.expect_continue);
}

TEST(RequestParser, ResetAfterAnErrorClearsTheError) {
  RequestParser p;
  feed_whole(p, "GET / HTTP/2.0\r\n\r\n");
  ASSERT_EQ(p.error_status(), 505);
  p.reset();
  EXPECT_EQ(p.error_status(), 0);
  EXPECT_EQ(p.error_message(), "");
  feed_whole(p, "GET / HTTP/1.1\r\n\r\n");
  EXPECT_EQ(p.state(), State::kDone);
}

TEST(RequestParser, ResetKeepsTheCapacityOfTheBodyAndOfHeaderStrings) {
  // Given a first request with a large body and long header values
  RequestParser p;
  const std::string long_value(200, 'v');
  const std::string body(5000, 'b');
  feed_whole(
      p, "POST /x HTTP/1.1\r\nX-Long: " + long_value + "\r\nContent-Length: 5000\r\n\r\n" + body);
  ASSERT_EQ(p.state(), State::kDone);
  const size_t body_capacity = p.request().body.capacity();
  const char* header_buffer = p.request().headers[0].second.data();

  // When it is reset and reads a smaller request with one header
  p.reset();
  feed_whole(p, "POST /y HTTP/1.1\r\nX-Short: s\r\nContent-Length: 2\r\n\r\nhi");

  // Then the body kept its buffer, and a header string reuses an old one
  ASSERT_EQ(p.state(), State::kDone);
  EXPECT_EQ(p.request().body, "hi");
  EXPECT_GE(p.request().body.capacity(), body_capacity);
  bool reused = false;
  for (const auto& [name, value] : p.request().headers) {
    reused = reused || name.data() == header_buffer || value.data() == header_buffer;
  }
  EXPECT_TRUE(reused) << "no header string reuses the 200-byte buffer of the first request";
  EXPECT_EQ(p.request().headers[0].first, "X-Short");
  EXPECT_EQ(p.request().headers[0].second, "s");
}

TEST(RequestParser, NothingIsConsumedInDoneOrError) {
  RequestParser done;
  feed_whole(done, "GET / HTTP/1.1\r\n\r\n");
  ASSERT_EQ(done.state(), State::kDone);
  EXPECT_EQ(feed_whole(done, "GET / HTTP/1.1\r\n\r\n"), 0u);

  RequestParser error;
  feed_whole(error, "BAD\r\n");
  ASSERT_EQ(error.state(), State::kError);
  EXPECT_EQ(feed_whole(error, "GET / HTTP/1.1\r\n\r\n"), 0u);
  EXPECT_EQ(error.error_status(), 400);
}

TEST(RequestParser, TheLineAtFaultIsNotCountedAsConsumed) {
  // Given a good header line and a bad one after it
  const std::string good = "GET / HTTP/1.1\r\nHost: h\r\n";
  RequestParser p;

  // When fed at once
  const size_t consumed = feed_whole(p, good + "Bad Name: x\r\n\r\n");

  // Then the good lines are consumed, the bad one is not
  EXPECT_EQ(p.error_status(), 400);
  EXPECT_EQ(consumed, good.size());
}

// --- how the bytes are split never matters ----------------------------------

TEST(RequestParser, EverySplitOfAcceptedRequestsGivesTheSameRequest) {
  const std::vector<std::string> texts = {
      "GET /v1/jobs?limit=2 HTTP/1.1\r\nHost: localhost\r\nX-Pad: \t v \t\r\n\r\n",
      "\r\n\nPOST /v1/jobs HTTP/1.0\nConnection: keep-alive\nContent-Length: "
      "12\n\n{\"kind\":\"k\"}",
      "POST /c HTTP/1.1\r\nTransfer-Encoding: chunked\r\nExpect: 100-continue\r\n\r\n"
      "4;ext=\"v\"\r\nwiki\r\n5\r\npedia\r\nE\r\n in\r\n\r\nchunks.\r\n0\r\nT: 1\r\n\r\n",
      // two pipelined requests: only the first is taken
      "GET /1 HTTP/1.1\r\n\r\nGET /2 HTTP/1.1\r\n\r\n",
  };
  for (const auto& text : texts) {
    SCOPED_TRACE(text);
    // Given the outcome of one feed, When fed in any two pieces or byte by byte,
    // Then the outcome is the same (checked inside)
    const std::string outcome = expect_same_under_every_split(text);
    EXPECT_NE(outcome.find("state=done"), std::string::npos) << outcome;
  }
}

// --- refusals ----------------------------------------------------------------

struct Refusal {
  std::string what;
  std::string text;
  int status;
  ParserLimits limits = {};
};

// Each refusal gives its status whole, in any two pieces and byte by byte.
void expect_refused(const std::vector<Refusal>& refusals) {
  for (const auto& r : refusals) {
    SCOPED_TRACE(r.what + ": " + r.text.substr(0, 200));
    RequestParser p(r.limits);
    feed_whole(p, r.text);
    EXPECT_EQ(p.state(), State::kError);
    EXPECT_EQ(p.error_status(), r.status) << p.error_message();
    EXPECT_FALSE(p.error_message().empty());
    EXPECT_FALSE(p.request().keep_alive);
    expect_same_under_every_split(r.text, r.limits);
  }
}

TEST(RequestParser, AMalformedRequestLineIs400) {
  expect_refused({
      {"empty method", " / HTTP/1.1\r\n\r\n", 400},
      {"method of 21 characters", std::string(21, 'G') + " / HTTP/1.1\r\n\r\n", 400},
      {"method with a non-token character", "GE(T / HTTP/1.1\r\n\r\n", 400},
      {"method with a non-ASCII byte", "G\xc3\xa9T / HTTP/1.1\r\n\r\n", 400},
      {"absolute-form target of another scheme", "GET ftp://h/ HTTP/1.1\r\n\r\n", 400},
      {"absolute-form target without a host", "GET http:///x HTTP/1.1\r\n\r\n", 400},
      {"asterisk-form target", "OPTIONS * HTTP/1.1\r\n\r\n", 400},
      {"empty target (two spaces)", "GET  / HTTP/1.1\r\n\r\n", 400},
      {"control character in the target", "GET /a\x01z HTTP/1.1\r\n\r\n", 400},
      {"DEL in the target", "GET /a\x7fz HTTP/1.1\r\n\r\n", 400},
      {"tab in the target", "GET /a\tz HTTP/1.1\r\n\r\n", 400},
      {"CR inside the line", "GET /a\rz HTTP/1.1\r\n\r\n", 400},
      {"space in the target", "GET /a z HTTP/1.1\r\n\r\n", 400},
      {"no version", "GET /\r\n\r\n", 400},
      {"nothing but a method", "GET\r\n\r\n", 400},
      {"lower-case version", "GET / http/1.1\r\n\r\n", 400},
      {"short version", "GET / HTTP/1\r\n\r\n", 400},
      {"two-digit major", "GET / HTTP/10.1\r\n\r\n", 400},
      {"space after the version", "GET / HTTP/1.1 \r\n\r\n", 400},
      {"garbage without a line end", std::string("\x16\x03\x01\x02\x00\x01", 6), 400},
  });
}

TEST(RequestParser, AnotherHttpVersionIs505) {
  expect_refused({
      {"HTTP/2.0", "GET / HTTP/2.0\r\n\r\n", 505},
      {"HTTP/1.2", "GET / HTTP/1.2\r\n\r\n", 505},
      {"HTTP/0.9", "GET / HTTP/0.9\r\n\r\n", 505},
  });
}

TEST(RequestParser, AMalformedHeaderLineIs400) {
  expect_refused({
      {"empty name", "GET / HTTP/1.1\r\n: v\r\n\r\n", 400},
      {"space before the colon", "GET / HTTP/1.1\r\nHost : h\r\n\r\n", 400},
      {"space inside the name", "GET / HTTP/1.1\r\nX Y: h\r\n\r\n", 400},
      {"obs-fold with a space", "GET / HTTP/1.1\r\nX-A: a\r\n  b\r\n\r\n", 400},
      {"obs-fold with a tab", "GET / HTTP/1.1\r\nX-A: a\r\n\tb\r\n\r\n", 400},
      {"no colon", "GET / HTTP/1.1\r\nHost\r\n\r\n", 400},
      {"control character in a value", "GET / HTTP/1.1\r\nX-A: a\x01z\r\n\r\n", 400},
      {"NUL in a value", std::string("GET / HTTP/1.1\r\nX-A: a\0z\r\n\r\n", 28), 400},
      {"DEL in a value", "GET / HTTP/1.1\r\nX-A: a\x7fz\r\n\r\n", 400},
      {"bare CR in a value", "GET / HTTP/1.1\r\nX-A: a\rz\r\n\r\n", 400},
  });
}

TEST(RequestParser, ATabInsideAValueIsAccepted) {
  RequestParser p;
  feed_whole(p, "GET / HTTP/1.1\r\nX-A: a\tb\r\n\r\n");
  ASSERT_EQ(p.state(), State::kDone);
  EXPECT_EQ(p.request().headers[0].second, "a\tb");
}

TEST(RequestParser, ABadContentLengthIs400) {
  expect_refused({
      {"letters", "POST / HTTP/1.1\r\nContent-Length: abc\r\n\r\n", 400},
      {"empty", "POST / HTTP/1.1\r\nContent-Length:\r\n\r\n", 400},
      {"negative", "POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n", 400},
      {"plus sign", "POST / HTTP/1.1\r\nContent-Length: +1\r\n\r\n", 400},
      {"inner space", "POST / HTTP/1.1\r\nContent-Length: 1 2\r\n\r\n", 400},
      {"a list", "POST / HTTP/1.1\r\nContent-Length: 1, 1\r\n\r\n", 400},
      {"past 2^64", "POST / HTTP/1.1\r\nContent-Length: 18446744073709551616\r\n\r\n", 400},
      {"two different values",
       "POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab", 400},
      {"both Content-Length and Transfer-Encoding",
       "POST / HTTP/1.1\r\nContent-Length: 1\r\nTransfer-Encoding: "
       "chunked\r\n\r\n1\r\na\r\n0\r\n\r\n",
       400},
      {"Transfer-Encoding before Content-Length",
       "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 1\r\n\r\n", 400},
  });
}

TEST(RequestParser, AContentLengthOverTheLimitIs413AtTheEndOfTheHeaders) {
  // Given a limit of 100 body bytes
  ParserLimits limits;
  limits.body_bytes_max = 100;

  // When headers announce 101 bytes, none of which was sent
  RequestParser p(limits);
  feed_whole(p, "POST / HTTP/1.1\r\nContent-Length: 101\r\n\r\n");

  // Then it is refused at once, with the header section known complete
  EXPECT_EQ(p.state(), State::kError);
  EXPECT_EQ(p.error_status(), 413);
  EXPECT_TRUE(p.headers_complete());

  // And the largest Content-Length of all is 413 as well
  expect_refused(
      {{"2^64 - 1", "POST / HTTP/1.1\r\nContent-Length: 18446744073709551615\r\n\r\n", 413}});
}

TEST(RequestParser, AnUnimplementedTransferCodingIs501) {
  expect_refused({
      {"gzip", "POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n", 501},
      {"chunked then gzip", "POST / HTTP/1.1\r\nTransfer-Encoding: chunked, gzip\r\n\r\n", 501},
      {"chunked then gzip in two fields",
       "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: gzip\r\n\r\n", 501},
      {"gzip then chunked (not decoded)",
       "POST / HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", 501},
      {"chunked with a parameter", "POST / HTTP/1.1\r\nTransfer-Encoding: chunked;x=1\r\n\r\n",
       501},
  });
}

TEST(RequestParser, ABadTransferEncodingIs400) {
  expect_refused({
      {"chunked in HTTP/1.0",
       "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n1\r\na\r\n0\r\n\r\n", 400},
      {"chunked twice", "POST / HTTP/1.1\r\nTransfer-Encoding: chunked, chunked\r\n\r\n", 400},
      {"empty", "POST / HTTP/1.1\r\nTransfer-Encoding: \r\n\r\n", 400},
  });
}

TEST(RequestParser, AMalformedChunkIs400) {
  const std::string head = "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n";
  expect_refused({
      {"not hex", head + "xyz\r\n", 400},
      {"empty size line", head + "\r\n", 400},
      {"extension without a size", head + ";a=b\r\n", 400},
      {"17 hex digits", head + "00000000000000001\r\na\r\n0\r\n\r\n", 400},
      {"negative size", head + "-1\r\n", 400},
      {"space after the size without an extension", head + "1 \r\na\r\n0\r\n\r\n", 400},
      {"control character in an extension", head + "1;a\x01\r\na\r\n0\r\n\r\n", 400},
      {"data longer than its size", head + "1\r\nab\r\n0\r\n\r\n", 400},
      {"data followed by a bare CR", head + "1\r\na\rX0\r\n\r\n", 400},
      {"chunk size line over its limit",
       head + "1;" + std::string(http::kChunkLineBytesMax - 1, 'e') + "\r\na\r\n0\r\n\r\n", 400},
  });
}

TEST(RequestParser, AChunkSizeLineAtItsLimitIsAccepted) {
  // Given a chunk-size line of exactly kChunkLineBytesMax bytes
  const std::string line = "1;" + std::string(http::kChunkLineBytesMax - 2, 'e');
  RequestParser p;

  // When parsed
  feed_whole(p,
             "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n" + line + "\r\na\r\n0\r\n\r\n");

  // Then it is accepted
  EXPECT_EQ(p.state(), State::kDone) << p.error_message();
  EXPECT_EQ(p.request().body, "a");
}

TEST(RequestParser, AChunkedBodyOverTheLimitIs413BeforeItsDataArrives) {
  ParserLimits limits;
  limits.body_bytes_max = 10;
  const std::string head = "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n";
  {
    // Given 6 bytes read, When a chunk of 5 is announced (no data yet)
    RequestParser p(limits);
    feed_whole(p, head + "6\r\nabcdef\r\n5\r\n");
    // Then it is refused at once
    EXPECT_EQ(p.error_status(), 413);
  }
  {
    // Given a single chunk of 2^64 - 1 bytes: refused, no overflow
    RequestParser p(limits);
    feed_whole(p, head + "FFFFFFFFFFFFFFFF\r\n");
    EXPECT_EQ(p.error_status(), 413);
  }
  expect_refused({
      {"one chunk over", head + "b\r\n", 413, limits},
      {"two chunks over", head + "6\r\nabcdef\r\n5\r\nabcde\r\n0\r\n\r\n", 413, limits},
  });
}

// --- limits: at the limit accepted, one past refused --------------------------

TEST(RequestParser, ATargetAtItsLimitIsAcceptedAndOneByteLongerIs414) {
  ParserLimits limits;
  limits.target_bytes_max = 50;
  const std::string at_limit = "/" + std::string(49, 'a');
  const std::string past = at_limit + "a";

  // Given a target of exactly 50 bytes: accepted
  RequestParser p(limits);
  feed_whole(p, "GET " + at_limit + " HTTP/1.1\r\n\r\n");
  EXPECT_EQ(p.state(), State::kDone);
  EXPECT_EQ(p.request().target, at_limit);

  // Given 51 bytes: 414, also when the line has not ended yet
  expect_refused({
      {"complete line", "GET " + past + " HTTP/1.1\r\n\r\n", 414, limits},
      {"line without its end", "GET " + past, 414, limits},
  });
}

TEST(RequestParser, ADefaultLimitTargetWithoutALineEndFailsAtOnceWith414) {
  // Given the default limits and 9000 bytes of a target, no line end
  const std::string text = "GET /" + std::string(9000, 'a');
  RequestParser p;

  // When fed
  feed_whole(p, text);

  // Then it fails without waiting for the line end
  EXPECT_EQ(p.state(), State::kError);
  EXPECT_EQ(p.error_status(), 414);
}

TEST(RequestParser, AnIncompleteValidRequestLineWaits) {
  // Given a request line of the longest valid shape, without its line end
  ParserLimits limits;
  limits.target_bytes_max = 100;
  const std::string line = std::string(20, 'M') + " /" + std::string(99, 'a') + " HTTP/1.1";
  RequestParser p(limits);

  // When fed (the CR included)
  const size_t consumed = feed_whole(p, line + "\r");

  // Then the parser waits for the rest
  EXPECT_EQ(p.state(), State::kNeedMore);
  EXPECT_EQ(consumed, 0u);
  EXPECT_EQ(feed_whole(p, line + "\r\n\r\n"), line.size() + 4);
  EXPECT_EQ(p.state(), State::kDone);
}

TEST(RequestParser, AMethodOfTwentyCharactersIsAccepted) {
  RequestParser p;
  const std::string method(20, 'M');
  std::string text = method;
  text += " / HTTP/1.1\r\n\r\n";  // appended: GCC 12 misjudges `string + literal` here
  feed_whole(p, text);
  EXPECT_EQ(p.state(), State::kDone);
  EXPECT_EQ(p.request().method, method);
}

TEST(RequestParser, AHeaderSectionAtItsLimitIsAcceptedAndOneByteLongerIs431) {
  // Given a header section of some size, line ends and the final empty line included
  const std::string text = "GET / HTTP/1.1\r\nHost: h\r\nX-A: 12345\r\n\r\n";
  ParserLimits at;
  at.header_bytes_max = text.size();
  ParserLimits under = at;
  under.header_bytes_max = text.size() - 1;

  // When the limit is exactly its size: accepted
  RequestParser p(at);
  EXPECT_EQ(feed_whole(p, text), text.size());
  EXPECT_EQ(p.state(), State::kDone);

  // When the limit is one byte less: 431, whether the last byte is the CR or the LF,
  // and for LF-only line ends too
  expect_refused({
      {"CRLF", text, 431, under},
      {"LF", "GET / HTTP/1.1\nHost: h\nX-A: 12345\n\n", 431,
       ParserLimits{8192, text.size() - 4 - 1, 100, 1 << 20}},
  });
}

TEST(RequestParser, AHeaderLineWithoutALineEndFailsAtOnceWith431) {
  // Given a limit of 200 header bytes and a header line of 300 bytes, no line end
  ParserLimits limits;
  limits.header_bytes_max = 200;
  const std::string text = "GET / HTTP/1.1\r\nX-Big: " + std::string(300, 'v');
  RequestParser p(limits);

  // When fed
  const size_t consumed = feed_whole(p, text);

  // Then it fails without waiting, having consumed the request line only
  EXPECT_EQ(p.state(), State::kError);
  EXPECT_EQ(p.error_status(), 431);
  EXPECT_EQ(consumed, 16u);
}

TEST(RequestParser, AHeaderLineOverTheLimitIs431EvenWithAFaultPastTheLimit) {
  // Given a header line that passes the limit and has faults only beyond it
  ParserLimits limits;
  limits.header_bytes_max = 64;
  const std::string over = "GET / HTTP/1.1\r\nX-A: " + std::string(60, 'v');

  // Then it is 431 whether or not the faulty rest has arrived: the fault is
  // never reached, so the outcome does not depend on where the bytes stop
  expect_refused({
      {"control character past the limit", over + "\x01\r\n\r\n", 431, limits},
      {"no colon, past the limit", "GET / HTTP/1.1\r\nX-A" + std::string(60, 'v') + "\r\n\r\n", 431,
       limits},
  });
}

TEST(RequestParser, TooManyEmptyLinesBeforeTheRequestAre431) {
  ParserLimits limits;
  limits.header_bytes_max = 64;
  std::string text;
  for (int i = 0; i < 40; ++i) text += "\r\n";
  expect_refused({{"80 bytes of empty lines", text + "GET / HTTP/1.1\r\n\r\n", 431, limits}});
}

TEST(RequestParser, TrailersCountAgainstTheHeaderSectionLimit) {
  // Given a request whose headers and trailers together are exactly the limit
  const std::string head = "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n";
  const std::string chunks = "1\r\na\r\n0\r\n";
  const std::string trailers = "X-T: 1234567890\r\n\r\n";
  ParserLimits at;
  at.header_bytes_max = head.size() + trailers.size();
  ParserLimits under = at;
  under.header_bytes_max -= 1;

  // Then at the limit it is accepted, one byte less is 431
  RequestParser p(at);
  feed_whole(p, head + chunks + trailers);
  EXPECT_EQ(p.state(), State::kDone) << p.error_message();
  expect_refused({{"one byte over", head + chunks + trailers, 431, under}});
}

TEST(RequestParser, HeadersAtTheirMaximumCountAreAcceptedAndOneMoreIs431) {
  ParserLimits limits;
  limits.headers_max = 3;
  const std::string three = "GET / HTTP/1.1\r\nA: 1\r\nB: 2\r\nC: 3\r\n";

  RequestParser p(limits);
  feed_whole(p, three + "\r\n");
  EXPECT_EQ(p.state(), State::kDone);
  EXPECT_EQ(p.request().headers.size(), 3u);

  expect_refused({{"four fields", three + "D: 4\r\n\r\n", 431, limits}});
}

TEST(RequestParser, ABodyAtItsLimitIsAcceptedAndOneByteLongerIs413) {
  ParserLimits limits;
  limits.body_bytes_max = 5;

  // Given bodies of exactly 5 bytes by Content-Length and by chunks: accepted
  RequestParser by_length(limits);
  feed_whole(by_length, "POST / HTTP/1.1\r\nContent-Length: 5\r\n\r\n12345");
  EXPECT_EQ(by_length.state(), State::kDone);
  EXPECT_EQ(by_length.request().body, "12345");
  RequestParser by_chunks(limits);
  feed_whole(
      by_chunks,
      "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n12\r\n3\r\n345\r\n0\r\n\r\n");
  EXPECT_EQ(by_chunks.state(), State::kDone) << by_chunks.error_message();
  EXPECT_EQ(by_chunks.request().body, "12345");

  // Given 6 bytes: 413
  expect_refused({
      {"Content-Length 6", "POST / HTTP/1.1\r\nContent-Length: 6\r\n\r\n123456", 413, limits},
      {"chunks of 6",
       "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n12\r\n4\r\n3456\r\n0\r\n\r\n",
       413, limits},
  });
}

}  // namespace
}  // namespace runledger::testing
