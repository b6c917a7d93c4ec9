// An incremental HTTP/1.1 request parser for an event-driven server: the
// connection feeds it the bytes it has received, as often as they come, and
// learns when a request is complete, or why it is refused (the status and a
// sentence for the error body).
//
// The caller owns the bytes. feed() consumes whole lines only (request line,
// header lines, chunk-size lines, trailer lines) and body bytes as they come;
// the bytes it leaves (an incomplete line) are passed again, followed by more,
// at the next call. It stops right after the end of one request, so the bytes
// of a pipelined next request stay with the caller for the next reset().
//
// What it accepts (RFC 9112, strictly where leniency would allow request
// smuggling):
//   - lines end in CRLF or a bare LF, but for the lines of a chunked body
//     (chunk-size lines, the line end after a chunk's data, trailer lines),
//     which must end in CRLF: a bare LF there is where two readers of the
//     same bytes would disagree on a body's end. Empty lines before a request
//     line are ignored (they count against header_bytes_max, so they are
//     bounded);
//   - a request line METHOD SP target SP HTTP/1.x: a method of 1-20 token
//     characters, an origin-form target (it begins with '/' and holds no
//     space or control character; bytes >= 0x80 pass) or an absolute-form
//     one (http:// or https://, an authority, then the origin form, which
//     the request then has as its target and the authority apart),
//     HTTP/1.0 or HTTP/1.1 (another HTTP/<d>.<d> is 505);
//   - header lines name ":" OWS value OWS; no obs-fold, no space before the
//     colon, no control character but tab in a value;
//   - a body by Content-Length (digits only; repeated fields must agree) or
//     by Transfer-Encoding: chunked (HTTP/1.1 only; no other transfer coding
//     is implemented: 501); neither means no body. Both at once is 400.
//   - chunks: 1-16 hex digits, optional ";extensions" (ignored, but their
//     bytes count against the body limit, so that they cannot carry an
//     unbounded body), line end, data, line end; a 0 chunk, then trailer
//     lines (ignored) up to an empty line.
//
// Limits (ParserLimits) are checked as early as the bytes allow: a line that
// cannot end within its limit fails at once, before its line end arrives; a
// Content-Length or chunk size that would take the body past its limit fails
// at its line, before any body byte. Every verdict depends only on the bytes,
// never on how they were split between calls: a line's checks run left to
// right, and a check on an incomplete line fires only where the whole line
// would fail in the same way.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/ascii.h"

namespace runledger::http {

struct ParserLimits {
  size_t target_bytes_max = 8192;  // request target longer: 414
  // The header section longer: 431. It is counted in bytes as sent, line ends
  // included, from the first empty line before the request line (if any) to
  // the end of the empty line that ends the header section; the trailer
  // section of a chunked body (its lines and the empty line ending it) is
  // added to the same count.
  size_t header_bytes_max = 16384;
  size_t headers_max = 100;         // more header fields: 431
  size_t body_bytes_max = 1 << 20;  // body (Content-Length or de-chunked) larger: 413
};

// A chunk-size line (size and extensions, line end excluded) longer than
// this is refused with 400: it does not count against header_bytes_max.
inline constexpr size_t kChunkLineBytesMax = 4096;
// Longest request method: longer is 400.
inline constexpr size_t kMethodBytesMax = 20;

// Header fields in the order sent: names as sent, values without
// surrounding spaces or tabs.
using HeaderList = std::vector<std::pair<std::string, std::string>>;

// The first value of a header (names compare case-insensitively), or nullptr.
const std::string* find_header(const HeaderList& headers, std::string_view name);

struct ParsedRequest {
  std::string method;     // as sent, e.g. "POST"
  std::string target;     // raw request target, e.g. "/v1/jobs?limit=2" (not decoded)
  std::string authority;  // of an absolute-form target ("127.0.0.1:8080"), else empty
  int version_minor = 1;  // HTTP/1.<minor>
  HeaderList headers;
  std::string body;  // de-chunked
  // HTTP/1.1: unless "Connection: close"; HTTP/1.0: only with
  // "Connection: keep-alive" (token lists, case-insensitive; close wins).
  // Set when the header section is complete; false after an error.
  bool keep_alive = true;
  bool expect_continue = false;  // "Expect: 100-continue" on HTTP/1.1

  const std::string* header(std::string_view name) const { return find_header(headers, name); }
};

class RequestParser {
 public:
  enum class State { kNeedMore, kDone, kError };

  explicit RequestParser(ParserLimits limits = {});

  // Consumes bytes of `data` and returns how many (see the top of this file).
  // In kDone or kError it consumes nothing. When a call ends in kError, the
  // line at fault is not counted as consumed.
  size_t feed(const char* data, size_t n);

  State state() const { return state_; }
  // The header section was read (the server may then answer 100-continue or
  // refuse early). It stays true when the header section itself led to an
  // error (413 for a Content-Length over the limit, 501, ...).
  bool headers_complete() const { return headers_complete_; }
  // The request line was consumed. Empty lines before it do not count, nor
  // does a request line still incomplete (the caller holds those bytes).
  bool started() const { return started_; }
  // When kError: 400, 413, 414, 431, 501 or 505; else 0.
  int error_status() const { return error_status_; }
  // When kError: a short English sentence for an API error body, e.g.
  // "the request line is malformed"; else empty.
  const std::string& error_message() const { return error_message_; }
  // Valid when kDone; while reading, holds what was read so far.
  ParsedRequest& request() { return request_; }
  const ParsedRequest& request() const { return request_; }
  const ParserLimits& limits() const { return limits_; }

  // For the next request on the same connection. Keeps the capacity of every
  // string (header names and values included), so a long-lived connection
  // stops allocating once it has seen its largest request.
  void reset();

 private:
  enum class Phase {
    kRequestLine,
    kHeaderLine,
    kBody,          // Content-Length bytes
    kChunkSize,     // chunk-size line
    kChunkData,     // chunk bytes
    kChunkDataEnd,  // the line end after a chunk's bytes
    kTrailerLine,
    kOver,  // kDone or kError
  };
  struct Verdict {
    int status = 0;  // 0: fine (so far)
    const char* message = "";
  };

  size_t line_allowance() const;
  size_t section_room() const;
  Verdict check_line(std::string_view content, bool complete, size_t line_end_bytes);
  Verdict scan_line(std::string_view content, bool complete);
  Verdict scan_request_line(std::string_view s, bool complete);
  Verdict scan_header_line(std::string_view s, bool complete);
  Verdict scan_chunk_size_line(std::string_view s, bool complete);
  void check_incomplete_line(const char* data, size_t n);
  bool take_line(std::string_view content);
  bool take_header(std::string_view line);
  bool finish_headers();
  void finish();
  void fail(int status, const char* message);
  void fail(const Verdict& v) { fail(v.status, v.message); }
  void add_header(std::string_view name, std::string_view value);

  ParserLimits limits_;
  ParsedRequest request_;
  // Header pairs of earlier requests, kept for their string capacities.
  std::vector<std::pair<std::string, std::string>> spare_headers_;
  State state_ = State::kNeedMore;
  Phase phase_ = Phase::kRequestLine;
  bool headers_complete_ = false;
  bool started_ = false;
  int error_status_ = 0;
  std::string error_message_;

  size_t section_bytes_ = 0;  // counted against header_bytes_max
  uint64_t remaining_ = 0;    // bytes left of the body or of the current chunk
  // Found by scan_line on the last complete line.
  size_t method_end_ = 0;
  size_t target_end_ = 0;
  int minor_ = 1;
  size_t colon_ = 0;
  uint64_t chunk_size_ = 0;
  uint64_t extension_bytes_ = 0;  // of the chunk extensions so far: counted as body
  // What the header lines said, judged when the section is complete.
  bool content_length_seen_ = false;
  uint64_t content_length_ = 0;
  bool transfer_encoding_seen_ = false;
  int chunked_codings_ = 0;
  bool other_codings_ = false;
  bool connection_close_ = false;
  bool connection_keep_alive_ = false;
  bool expect_continue_ = false;
};

}  // namespace runledger::http
