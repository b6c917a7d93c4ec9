// The status line and headers of a reply, written by hand: the event loop
// writes them beside the body (no copy of the body) for every reply.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace runledger::http {

// The reason phrase of an HTTP status ("Unprocessable Entity" for 422).
std::string_view reason_phrase(int status);

struct ResponseHead {
  int status = 200;
  std::string_view content_type = "application/json";
  size_t body_bytes = 0;
  bool keep_alive = true;
  // HTTP/1.0 clients keep a connection only when told so in a header.
  bool http10 = false;
  // The methods the path takes, sent as Allow (a 405 must say them).
  std::string_view allow;
  // Further header lines, each ending in CRLF, sent as they are.
  std::string_view extra;
};

// Appends "HTTP/1.1 <status> <reason>", Content-Type and Content-Length
// (neither for 204 or 304), Allow when given, the extra lines, and
// Connection, then the blank line.
void append_response_head(std::string& out, const ResponseHead& head);

}  // namespace runledger::http
