// libFuzzer target: the incremental HTTP/1.1 request parser
// (http/request_parser.h) on arbitrary bytes, and parse_query
// (http/query_text.h) on the targets it accepts.
//
// Input: byte 0 seeds the split, byte 1 picks the limits (bit 0: the
// defaults or small ones that the fuzzer reaches easily) and the largest
// piece (bits 1-5: 1 to 32 bytes); the rest is the bytes of a connection,
// possibly several pipelined requests.
//
// The stream is parsed twice, request after request with reset() in between
// as a server does: once given all of it at each call, once as pieces of
// random sizes (from the seed) arrive, the unconsumed bytes passed again
// with the next piece. Beyond "never crash, no leak, no UB" it checks:
//   - a call never consumes more than it was given, nor anything in kDone
//     or kError;
//   - both runs give the same requests: same state, error status and
//     message, consumed bytes, method, target, version, headers, body,
//     keep_alive, expect_continue, started, headers_complete;
//   - a completed request is within its limits (body, target, header count)
//     and its body matches its Content-Length;
//   - an error status is one of 400 413 414 431 501 505, with a message;
//   - parse_query never decodes to more bytes than it was given.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "http/query_text.h"
#include "http/request_parser.h"

namespace runledger::fuzz {
namespace {

using http::RequestParser;
using State = RequestParser::State;

[[noreturn]] void fail(const std::string& why) {
  std::fprintf(stderr, "\n*** %s\n", why.c_str());
  std::abort();
}

// What one request's parse came to.
struct Result {
  State state = State::kNeedMore;
  int status = 0;
  std::string message;
  size_t consumed = 0;
  bool started = false;
  bool headers_complete = false;
  http::ParsedRequest request;
};

std::string render(const Result& r) {
  std::string s = "state " + std::to_string(static_cast<int>(r.state)) + " status " +
                  std::to_string(r.status) + " (" + r.message + ") consumed " +
                  std::to_string(r.consumed) + " started " + std::to_string(r.started) +
                  " headers_complete " + std::to_string(r.headers_complete) + "\n" +
                  r.request.method + " " + r.request.target + " HTTP/1." +
                  std::to_string(r.request.version_minor) + " keep_alive " +
                  std::to_string(r.request.keep_alive) + " expect_continue " +
                  std::to_string(r.request.expect_continue) + "\n";
  for (const auto& [name, value] : r.request.headers) s += name + ": [" + value + "]\n";
  s += "body " + std::to_string(r.request.body.size()) + " bytes: [" +
       r.request.body.substr(0, 256) + "]\n";
  return s;
}

bool same(const Result& a, const Result& b) {
  return a.state == b.state && a.status == b.status && a.message == b.message &&
         a.consumed == b.consumed && a.started == b.started &&
         a.headers_complete == b.headers_complete && a.request.method == b.request.method &&
         a.request.target == b.request.target &&
         a.request.version_minor == b.request.version_minor &&
         a.request.headers == b.request.headers && a.request.body == b.request.body &&
         a.request.keep_alive == b.request.keep_alive &&
         a.request.expect_continue == b.request.expect_continue;
}

// Random piece sizes in [1, max_piece], the same for the same seed.
class Pieces {
 public:
  Pieces(uint8_t seed, size_t max_piece)
      : state_((0x9e3779b9u ^ seed * 0x01000193u) | 1), max_(max_piece) {}
  size_t next() {
    state_ ^= state_ << 13;
    state_ ^= state_ >> 17;
    state_ ^= state_ << 5;
    return 1 + state_ % max_;
  }

 private:
  uint32_t state_;
  size_t max_;
};

// Feeds `p` and checks what any call must respect.
size_t feed(RequestParser& p, const char* data, size_t n) {
  const State before = p.state();
  const size_t c = p.feed(data, n);
  if (c > n) fail("feed consumed " + std::to_string(c) + " of " + std::to_string(n) + " bytes");
  if (before != State::kNeedMore && c != 0) fail("feed consumed bytes in kDone or kError");
  return c;
}

Result result_of(const RequestParser& p, size_t consumed) {
  return {p.state(),   p.error_status(),     p.error_message(), consumed,
          p.started(), p.headers_complete(), p.request()};
}

// The requests of `stream`, each given all the bytes left at every call.
std::vector<Result> parse_whole(std::string_view stream, const http::ParserLimits& limits) {
  std::vector<Result> out;
  RequestParser p(limits);
  size_t offset = 0;
  while (true) {
    p.reset();
    const size_t c = feed(p, stream.data() + offset, stream.size() - offset);
    // A second call with the same bytes finds nothing more to do.
    if (p.state() != State::kNeedMore)
      feed(p, stream.data() + offset + c, stream.size() - offset - c);
    out.push_back(result_of(p, c));
    offset += c;
    if (p.state() != State::kDone || offset == stream.size()) return out;
  }
}

// The requests of `stream`, arriving in pieces; what a call leaves is passed
// again with the next piece.
std::vector<Result> parse_in_pieces(std::string_view stream, const http::ParserLimits& limits,
                                    Pieces pieces) {
  std::vector<Result> out;
  RequestParser p(limits);
  std::string pending;
  size_t start = 0;  // of the unconsumed bytes in `pending`
  size_t next = 0;   // of the bytes of `stream` not yet arrived
  while (true) {
    p.reset();
    size_t consumed = 0;
    while (true) {
      const size_t c = feed(p, pending.data() + start, pending.size() - start);
      consumed += c;
      start += c;
      if (p.state() != State::kNeedMore || next == stream.size()) break;
      if (start > 4096) {
        pending.erase(0, start);
        start = 0;
      }
      const size_t piece = std::min(pieces.next(), stream.size() - next);
      pending.append(stream.substr(next, piece));
      next += piece;
    }
    out.push_back(result_of(p, consumed));
    if (p.state() != State::kDone || (start == pending.size() && next == stream.size())) {
      return out;
    }
  }
}

void check_result(const Result& r, const http::ParserLimits& limits) {
  if (r.state == State::kError) {
    switch (r.status) {
      case 400:
      case 413:
      case 414:
      case 431:
      case 501:
      case 505:
        break;
      default:
        fail("error status " + std::to_string(r.status) + "\n" + render(r));
    }
    if (r.message.empty()) fail("an error without a message\n" + render(r));
    return;
  }
  if (r.status != 0 || !r.message.empty()) fail("an error status without kError\n" + render(r));
  if (r.state != State::kDone) return;
  const auto& q = r.request;
  if (!r.started || !r.headers_complete) fail("done but not started or headers incomplete");
  if (q.body.size() > limits.body_bytes_max) fail("a body over the limit\n" + render(r));
  if (q.target.empty() || q.target[0] != '/' || q.target.size() > limits.target_bytes_max) {
    fail("a target outside the rules\n" + render(r));
  }
  if (q.method.empty() || q.method.size() > http::kMethodBytesMax)
    fail("a bad method\n" + render(r));
  if (q.version_minor != 0 && q.version_minor != 1) fail("a bad version\n" + render(r));
  if (q.headers.size() > limits.headers_max) fail("too many headers\n" + render(r));
  if (const std::string* length = q.header("Content-Length")) {
    uint64_t n = 0;
    for (char c : *length) n = n * 10 + static_cast<uint64_t>(c - '0');  // digits, checked
    if (n != q.body.size()) fail("a body that is not its Content-Length\n" + render(r));
  }
  const size_t question = q.target.find('?');
  if (question != std::string::npos) {
    const std::string_view query = std::string_view(q.target).substr(question + 1);
    size_t decoded = 0;
    for (const auto& [key, value] : http::parse_query(query)) decoded += key.size() + value.size();
    if (decoded > query.size()) fail("parse_query decoded to more bytes than its query");
  }
}

}  // namespace
}  // namespace runledger::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace runledger::fuzz;
  if (size < 2) return 0;
  runledger::http::ParserLimits limits;
  if (data[1] & 1) {
    limits.target_bytes_max = 24;
    limits.header_bytes_max = 160;
    limits.headers_max = 4;
    limits.body_bytes_max = 40;
  }
  const size_t max_piece = 1 + ((data[1] >> 1) & 31);
  const std::string_view stream(reinterpret_cast<const char*>(data) + 2, size - 2);

  const auto whole = parse_whole(stream, limits);
  const auto pieces = parse_in_pieces(stream, limits, Pieces(data[0], max_piece));
  for (const auto& r : whole) check_result(r, limits);
  for (size_t i = 0; i < whole.size() || i < pieces.size(); ++i) {
    if (i >= whole.size() || i >= pieces.size()) {
      fail("request " + std::to_string(i) + " is parsed in one run only");
    }
    if (!same(whole[i], pieces[i])) {
      fail("request " + std::to_string(i) + " differs when fed in pieces\n--- whole:\n" +
           render(whole[i]) + "--- in pieces:\n" + render(pieces[i]));
    }
  }
  return 0;
}
