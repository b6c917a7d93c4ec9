// The text form of the HTTP fuzzer's input: one or more requests, each
//
//   METHOD SP TARGET LF          e.g. "POST /v1/jobs/job-{{n}}/start?x=1"
//   (NAME ":" SP? VALUE LF)*     headers, until an empty line
//   LF
//   BODY                         the rest, up to the separator
//
// separated by kRequestSeparator. It reads like the request on the wire, so
// corpus files are readable and mutations stay meaningful. CR before LF is
// dropped. Within one input, placeholders chain requests the way a client
// would (see substitute()).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace runledger::fuzz {

inline constexpr std::string_view kRequestSeparator = "\n--next--\n";
// More requests than this in one input are ignored: inputs stay fast.
inline constexpr size_t kRequestsPerInputMax = 16;
inline constexpr size_t kHeadersPerRequestMax = 16;

struct RequestText {
  std::string method;
  std::string target;  // path and query, raw
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;

  // The first value of a header (names compare case-insensitively), or
  // nullptr: http::find_header, as the server looks headers up.
  const std::string* header(std::string_view name) const;
};

// Splits `bytes` into requests; a part without a request line is skipped.
std::vector<RequestText> split_requests(std::string_view bytes);

// The wire-like text of one request (the inverse of split_requests for one).
std::string join_request(const RequestText& r);

// What earlier replies of the same input handed out.
struct Captures {
  std::string n;            // unique per input: "{{n}}"
  std::string lease_token;  // last "lease_token" in a reply: "{{lease_token}}"
  std::string sync_id;      // last "sync_id" in a reply: "{{sync_id}}"
  std::string id;           // last "id" (or hold id) in a reply: "{{id}}"
};

// Replaces the placeholders above in the target, header values and body.
void substitute(RequestText& r, const Captures& c);

}  // namespace runledger::fuzz
