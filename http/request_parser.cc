#include "http/request_parser.h"

#include <algorithm>
#include <array>
#include <cstring>

namespace runledger::http {
namespace {

// An incomplete line is scanned this far at every call, so that a connection
// sending garbage (a TLS handshake to the plain port, say) is refused at once
// rather than when the limit is reached; the whole of it is scanned only
// once it is longer than a valid line can be.
constexpr size_t kQuickScanBytes = 64;

// RFC 9110 tchar.
constexpr std::array<bool, 256> kTchar = [] {
  std::array<bool, 256> t{};
  for (int c = '0'; c <= '9'; ++c) t[c] = true;
  for (int c = 'a'; c <= 'z'; ++c) t[c] = true;
  for (int c = 'A'; c <= 'Z'; ++c) t[c] = true;
  for (unsigned char c : std::string_view("!#$%&'*+-.^_`|~")) t[c] = true;
  return t;
}();

bool is_tchar(char c) { return kTchar[static_cast<unsigned char>(c)]; }
bool is_ctl(char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_ows(char c) { return c == ' ' || c == '\t'; }

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool iprefix(std::string_view s, std::string_view prefix) {
  if (s.size() < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i) {
    if (ascii_lower(s[i]) != prefix[i]) return false;
  }
  return true;
}

// Of an absolute-form target (RFC 9112 3.2.2), "http://host[:port]/path":
// where its authority ends (the start of its path or query), and where it
// begins in *authority_at; 0 when it is not one (no such scheme, no host).
size_t authority_end(std::string_view target, size_t* authority_at = nullptr) {
  size_t at = 0;
  if (iprefix(target, "http://")) {
    at = 7;
  } else if (iprefix(target, "https://")) {
    at = 8;
  } else {
    return 0;
  }
  size_t end = at;
  while (end < target.size() && target[end] != '/' && target[end] != '?') ++end;
  if (end == at || target.substr(at, end - at).find('@') != std::string_view::npos) return 0;
  if (authority_at != nullptr) *authority_at = at;
  return end;
}

std::string_view trim_ows(std::string_view s) {
  while (!s.empty() && is_ows(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_ows(s.back())) s.remove_suffix(1);
  return s;
}

// Calls f(element) for each non-empty element of a comma list, trimmed.
template <typename F>
void for_each_element(std::string_view list, F&& f) {
  while (true) {
    const size_t comma = list.find(',');
    std::string_view element = trim_ows(list.substr(0, comma));
    if (!element.empty()) f(element);
    if (comma == std::string_view::npos) return;
    list.remove_prefix(comma + 1);
  }
}

// Digits only, no overflow.
bool parse_content_length(std::string_view s, uint64_t* out) {
  if (s.empty()) return false;
  uint64_t v = 0;
  for (char c : s) {
    if (!is_digit(c)) return false;
    const uint64_t d = static_cast<uint64_t>(c - '0');
    if (v > (UINT64_MAX - d) / 10) return false;
    v = v * 10 + d;
  }
  *out = v;
  return true;
}

}  // namespace

const std::string* find_header(const HeaderList& headers, std::string_view name) {
  for (const auto& [n, v] : headers) {
    if (iequals(n, name)) return &v;
  }
  return nullptr;
}

RequestParser::RequestParser(ParserLimits limits) : limits_(limits) {}

void RequestParser::reset() {
  request_.method.clear();
  request_.target.clear();
  request_.authority.clear();
  request_.version_minor = 1;
  for (auto& h : request_.headers) spare_headers_.push_back(std::move(h));
  request_.headers.clear();
  request_.body.clear();
  request_.keep_alive = true;
  request_.expect_continue = false;
  state_ = State::kNeedMore;
  phase_ = Phase::kRequestLine;
  headers_complete_ = false;
  started_ = false;
  error_status_ = 0;
  error_message_.clear();
  section_bytes_ = 0;
  remaining_ = 0;
  method_end_ = target_end_ = colon_ = 0;
  minor_ = 1;
  chunk_size_ = 0;
  extension_bytes_ = 0;
  content_length_seen_ = false;
  content_length_ = 0;
  transfer_encoding_seen_ = false;
  chunked_codings_ = 0;
  other_codings_ = false;
  connection_close_ = false;
  connection_keep_alive_ = false;
  expect_continue_ = false;
}

void RequestParser::fail(int status, const char* message) {
  state_ = State::kError;
  phase_ = Phase::kOver;
  error_status_ = status;
  error_message_ = message;
  request_.keep_alive = false;
}

void RequestParser::finish() {
  state_ = State::kDone;
  phase_ = Phase::kOver;
}

// What is left of header_bytes_max for the line being read.
size_t RequestParser::section_room() const {
  return limits_.header_bytes_max - std::min(section_bytes_, limits_.header_bytes_max);
}

// The longest content (line end excluded) the current line may have: every
// line ends in at least one byte, which the header section must hold too.
size_t RequestParser::line_allowance() const {
  if (phase_ == Phase::kChunkSize) return kChunkLineBytesMax;
  const size_t room = section_room();
  return room > 0 ? room - 1 : 0;
}

// The checks of one line's content, left to right, stopping at the first
// fault. When !complete, `s` is only the beginning of the line and nothing is
// said about what may follow: a fault found is one the whole line has too.
RequestParser::Verdict RequestParser::scan_line(std::string_view s, bool complete) {
  static constexpr Verdict kFine{};
  switch (phase_) {
    case Phase::kRequestLine:
      return scan_request_line(s, complete);
    case Phase::kHeaderLine:
      return scan_header_line(s, complete);
    case Phase::kChunkSize:
      return scan_chunk_size_line(s, complete);
    case Phase::kTrailerLine:  // trailers are ignored
    case Phase::kBody:
    case Phase::kChunkData:
    case Phase::kChunkDataEnd:
    case Phase::kOver:
      break;
  }
  return kFine;
}

// METHOD SP TARGET SP HTTP/1.x: sets method_end_, target_end_ and minor_.
RequestParser::Verdict RequestParser::scan_request_line(std::string_view s, bool complete) {
  static constexpr Verdict kFine{};
  static constexpr Verdict kMalformed{400, "the request line is malformed"};
  static constexpr Verdict kBadVersion{400, "the HTTP version of the request line is malformed"};
  if (s.empty()) return kFine;  // an empty line before the request line
  size_t i = 0;
  for (; i < s.size() && s[i] != ' '; ++i) {
    if (i == kMethodBytesMax) return {400, "the request method is longer than 20 characters"};
    if (!is_tchar(s[i])) return {400, "the request method is malformed"};
  }
  if (i == s.size()) return complete ? kMalformed : kFine;
  if (i == 0) return kMalformed;
  method_end_ = i;
  const size_t start = ++i;
  for (; i < s.size() && s[i] != ' '; ++i) {
    if (i == start && s[i] != '/' && ascii_lower(s[i]) != 'h') {
      return {400, "the request target must begin with '/' or http://"};
    }
    if (i - start == limits_.target_bytes_max) {
      return {414, "the request target is too long"};
    }
    if (is_ctl(s[i])) return {400, "the request target contains a control character"};
  }
  if (i == s.size()) return complete ? kMalformed : kFine;
  if (i == start) return {400, "the request target must begin with '/' or http://"};
  if (s[start] != '/' && authority_end(s.substr(start, i - start)) == 0) {
    return {400, "an absolute-form request target must be http:// or https:// and a host"};
  }
  target_end_ = i;
  static constexpr std::string_view kPattern = "HTTP/d.d";
  const size_t version = ++i;
  for (; i < s.size(); ++i) {
    const size_t k = i - version;
    if (k == kPattern.size()) return kBadVersion;
    if (kPattern[k] == 'd' ? !is_digit(s[i]) : s[i] != kPattern[k]) return kBadVersion;
  }
  if (!complete) return kFine;
  if (i - version != kPattern.size()) return kBadVersion;
  if (s[version + 5] != '1' || (s[version + 7] != '0' && s[version + 7] != '1')) {
    return {505, "the HTTP version is not supported"};
  }
  minor_ = s[version + 7] - '0';
  return kFine;
}

// NAME ":" VALUE: sets colon_.
RequestParser::Verdict RequestParser::scan_header_line(std::string_view s, bool complete) {
  static constexpr Verdict kFine{};
  if (s.empty()) return kFine;  // the end of the header section
  if (request_.headers.size() >= limits_.headers_max) {
    return {431, "the request has too many header fields"};
  }
  if (is_ows(s[0])) return {400, "a header line begins with a space (obsolete line folding)"};
  size_t i = 0;
  for (; i < s.size() && s[i] != ':'; ++i) {
    if (!is_tchar(s[i])) return {400, "a header field name is malformed"};
  }
  if (i == s.size()) return complete ? Verdict{400, "a header line has no colon"} : kFine;
  if (i == 0) return {400, "a header field name is empty"};
  colon_ = i;
  for (++i; i < s.size(); ++i) {
    if (is_ctl(s[i]) && s[i] != '\t') {
      return {400, "a header field value contains a control character"};
    }
  }
  return kFine;
}

// HEX-SIZE [OWS ";" extension]: sets chunk_size_ within the body's bound.
RequestParser::Verdict RequestParser::scan_chunk_size_line(std::string_view s, bool complete) {
  static constexpr Verdict kFine{};
  static constexpr Verdict kMalformed{400, "a chunk size line is malformed"};
  size_t i = 0;
  uint64_t size = 0;
  for (int d = 0; i < s.size() && (d = hex_digit(s[i])) >= 0; ++i) {
    if (i == 16) return {400, "a chunk size is longer than 16 hex digits"};
    size = size << 4 | static_cast<uint64_t>(d);
  }
  if (i == s.size() && !complete) return kFine;
  if (i == 0) return kMalformed;
  if (request_.body.size() + extension_bytes_ > limits_.body_bytes_max ||
      size > limits_.body_bytes_max - request_.body.size() - extension_bytes_) {
    return {413, "the request body is too large"};
  }
  chunk_size_ = size;
  const size_t digits = i;
  while (i < s.size() && is_ows(s[i])) ++i;
  if (i == s.size()) return complete && i != digits ? kMalformed : kFine;
  if (s[i] != ';') return kMalformed;
  for (++i; i < s.size(); ++i) {
    if (is_ctl(s[i]) && s[i] != '\t') {
      return {400, "a chunk extension contains a control character"};
    }
  }
  return kFine;
}

// A line's verdict: its content checks within its allowance, then its length.
// `line_end_bytes`: 1 or 2 when complete.
RequestParser::Verdict RequestParser::check_line(std::string_view content, bool complete,
                                                 size_t line_end_bytes) {
  const size_t allowance = line_allowance();
  const bool fits = content.size() <= allowance;
  Verdict v = scan_line(content.substr(0, allowance), complete && fits);
  if (v.status != 0) return v;
  if (phase_ == Phase::kChunkSize) {
    if (!fits) return {400, "a chunk size line is too long"};
    return v;
  }
  if (!fits || (complete && content.size() + line_end_bytes > section_room())) {
    return {431, "the request header section is too large"};
  }
  return v;
}

// `data` holds no line end yet. Fails when its beginning already has a fault
// the whole line will have, whatever follows.
void RequestParser::check_incomplete_line(const char* data, size_t n) {
  // A last CR may be the start of the line end.
  if (n > 0 && data[n - 1] == '\r') --n;
  size_t longest = line_allowance();
  if (phase_ == Phase::kRequestLine) {
    // method SP target SP HTTP/d.d: anything longer has a fault in it.
    constexpr size_t kRestBytes = kMethodBytesMax + 1 + 1 + 8;
    if (limits_.target_bytes_max < longest - std::min(longest, kRestBytes)) {
      longest = limits_.target_bytes_max + kRestBytes;
    }
  }
  const size_t scan = n > longest ? n : std::min(n, kQuickScanBytes);
  Verdict v = check_line({data, scan}, false, 0);
  if (v.status != 0) fail(v);
}

size_t RequestParser::feed(const char* data, size_t n) {
  size_t pos = 0;
  while (state_ == State::kNeedMore && pos < n) {
    switch (phase_) {
      case Phase::kBody:
      case Phase::kChunkData: {
        const size_t take = static_cast<size_t>(std::min<uint64_t>(n - pos, remaining_));
        request_.body.append(data + pos, take);
        pos += take;
        remaining_ -= take;
        if (remaining_ == 0) {
          if (phase_ == Phase::kBody) {
            finish();
          } else {
            phase_ = Phase::kChunkDataEnd;
          }
        }
        break;
      }
      case Phase::kChunkDataEnd: {
        size_t end_bytes = 0;
        if (data[pos] == '\r') {
          if (pos + 1 == n) return pos;  // the LF may follow
          if (data[pos + 1] == '\n') end_bytes = 2;
        }
        if (end_bytes == 0) {
          fail(400, "a chunk's data is not followed by CRLF");
          return pos;
        }
        pos += end_bytes;
        phase_ = Phase::kChunkSize;
        break;
      }
      case Phase::kRequestLine:
      case Phase::kHeaderLine:
      case Phase::kChunkSize:
      case Phase::kTrailerLine: {
        const auto* lf = static_cast<const char*>(std::memchr(data + pos, '\n', n - pos));
        if (lf == nullptr) {
          check_incomplete_line(data + pos, n - pos);
          return pos;
        }
        const size_t line_bytes = static_cast<size_t>(lf - (data + pos)) + 1;
        size_t content_bytes = line_bytes - 1;
        const bool crlf = content_bytes > 0 && data[pos + content_bytes - 1] == '\r';
        if (crlf) --content_bytes;
        const std::string_view content(data + pos, content_bytes);
        // The content's own checks first, as they run on a line still
        // incomplete: the verdict must not depend on where the bytes split.
        Verdict v = check_line(content, true, line_bytes - content_bytes);
        if (v.status == 0 && !crlf &&
            (phase_ == Phase::kChunkSize || phase_ == Phase::kTrailerLine)) {
          v = {400, "a line of a chunked body must end in CRLF"};
        }
        if (v.status != 0) {
          fail(v);
          return pos;
        }
        if (phase_ != Phase::kChunkSize) section_bytes_ += line_bytes;
        if (!take_line(content)) return pos;
        pos += line_bytes;
        break;
      }
      case Phase::kOver:
        return pos;
    }
  }
  return pos;
}

// A complete line that passed check_line. False when it led to an error.
bool RequestParser::take_line(std::string_view content) {
  switch (phase_) {
    case Phase::kRequestLine:
      if (content.empty()) return true;
      request_.method.assign(content.data(), method_end_);
      request_.target.assign(content.data() + method_end_ + 1, target_end_ - method_end_ - 1);
      request_.authority.clear();
      if (request_.target.front() != '/') {
        // Absolute form: the server's own name, then the origin form.
        size_t at = 0;
        const size_t end = authority_end(request_.target, &at);
        request_.authority.assign(request_.target, at, end - at);
        request_.target.erase(0, end);
        if (request_.target.empty() || request_.target.front() == '?') {
          request_.target.insert(0, "/");
        }
      }
      request_.version_minor = minor_;
      started_ = true;
      phase_ = Phase::kHeaderLine;
      return true;
    case Phase::kHeaderLine:
      return content.empty() ? finish_headers() : take_header(content);
    case Phase::kChunkSize:
      if (const size_t semicolon = content.find(';'); semicolon != std::string_view::npos) {
        extension_bytes_ += content.size() - semicolon;
        if (request_.body.size() + extension_bytes_ > limits_.body_bytes_max) {
          fail(413, "the request body is too large");
          return false;
        }
      }
      if (chunk_size_ == 0) {
        phase_ = Phase::kTrailerLine;
      } else {
        remaining_ = chunk_size_;
        phase_ = Phase::kChunkData;
      }
      return true;
    case Phase::kTrailerLine:
      if (content.empty()) finish();
      return true;
    case Phase::kBody:
    case Phase::kChunkData:
    case Phase::kChunkDataEnd:
    case Phase::kOver:
      break;
  }
  return true;
}

void RequestParser::add_header(std::string_view name, std::string_view value) {
  if (spare_headers_.empty()) {
    request_.headers.emplace_back(name, value);
    return;
  }
  auto& h = request_.headers.emplace_back(std::move(spare_headers_.back()));
  spare_headers_.pop_back();
  h.first.assign(name);
  h.second.assign(value);
}

bool RequestParser::take_header(std::string_view line) {
  const std::string_view name = line.substr(0, colon_);
  const std::string_view value = trim_ows(line.substr(colon_ + 1));
  add_header(name, value);
  if (iequals(name, "content-length")) {
    uint64_t length = 0;
    if (!parse_content_length(value, &length)) {
      fail(400, "the Content-Length is not a number");
      return false;
    }
    if (content_length_seen_ && length != content_length_) {
      fail(400, "the request has several different Content-Length values");
      return false;
    }
    content_length_seen_ = true;
    content_length_ = length;
  } else if (iequals(name, "transfer-encoding")) {
    transfer_encoding_seen_ = true;
    for_each_element(value, [&](std::string_view coding) {
      if (iequals(coding, "chunked")) {
        ++chunked_codings_;
      } else {
        other_codings_ = true;
      }
    });
  } else if (iequals(name, "connection")) {
    for_each_element(value, [&](std::string_view option) {
      if (iequals(option, "close")) connection_close_ = true;
      if (iequals(option, "keep-alive")) connection_keep_alive_ = true;
    });
  } else if (iequals(name, "expect")) {
    if (iequals(value, "100-continue")) expect_continue_ = true;
  }
  return true;
}

bool RequestParser::finish_headers() {
  headers_complete_ = true;
  const bool http11 = request_.version_minor == 1;
  request_.keep_alive = !connection_close_ && (http11 || connection_keep_alive_);
  request_.expect_continue = expect_continue_ && http11;
  if (transfer_encoding_seen_) {
    if (content_length_seen_) {
      fail(400, "the request has both a Content-Length and a Transfer-Encoding");
      return false;
    }
    if (other_codings_) {
      fail(501, "the only transfer coding implemented is chunked");
      return false;
    }
    if (chunked_codings_ != 1) {
      fail(400, "the Transfer-Encoding is malformed");
      return false;
    }
    if (!http11) {
      fail(400, "a chunked body is not allowed in HTTP/1.0");
      return false;
    }
    phase_ = Phase::kChunkSize;
    return true;
  }
  if (content_length_seen_) {
    if (content_length_ > limits_.body_bytes_max) {
      fail(413, "the request body is too large");
      return false;
    }
    if (content_length_ > 0) {
      // An announced length is not trusted for more than a modest reserve.
      constexpr uint64_t kReserveMax = 64 * 1024;
      request_.body.reserve(static_cast<size_t>(std::min(content_length_, kReserveMax)));
      remaining_ = content_length_;
      phase_ = Phase::kBody;
      return true;
    }
  }
  finish();
  return true;
}

}  // namespace runledger::http
