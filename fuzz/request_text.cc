// Parsing and printing of the HTTP fuzzer's request text (request_text.h).
#include "fuzz/request_text.h"

#include "http/request_parser.h"

namespace runledger::fuzz {
namespace {

// The next line of `text` from `*pos` without its LF (and a CR before it).
std::string_view next_line(std::string_view text, size_t* pos) {
  size_t end = text.find('\n', *pos);
  if (end == std::string_view::npos) end = text.size();
  std::string_view line = text.substr(*pos, end - *pos);
  *pos = end < text.size() ? end + 1 : end;
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line;
}

bool parse_one(std::string_view text, RequestText* out) {
  size_t pos = 0;
  std::string_view first = next_line(text, &pos);
  size_t space = first.find(' ');
  if (space == std::string_view::npos || space == 0) return false;
  out->method = std::string(first.substr(0, space));
  out->target = std::string(first.substr(space + 1));
  while (pos < text.size()) {
    std::string_view line = next_line(text, &pos);
    if (line.empty()) break;
    size_t colon = line.find(':');
    if (colon == std::string_view::npos || out->headers.size() >= kHeadersPerRequestMax) continue;
    std::string_view value = line.substr(colon + 1);
    if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
    out->headers.emplace_back(std::string(line.substr(0, colon)), std::string(value));
  }
  out->body = std::string(text.substr(pos));
  return true;
}

void replace_all(std::string& s, std::string_view from, std::string_view to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) {
    s.replace(at, from.size(), to);
  }
}

void substitute_in(std::string& s, const Captures& c) {
  if (s.find("{{") == std::string::npos) return;
  replace_all(s, "{{n}}", c.n);
  replace_all(s, "{{lease_token}}", c.lease_token);
  replace_all(s, "{{sync_id}}", c.sync_id);
  replace_all(s, "{{id}}", c.id);
}

}  // namespace

const std::string* RequestText::header(std::string_view name) const {
  return http::find_header(headers, name);
}

std::vector<RequestText> split_requests(std::string_view bytes) {
  std::vector<RequestText> out;
  size_t pos = 0;
  while (pos <= bytes.size() && out.size() < kRequestsPerInputMax) {
    size_t end = bytes.find(kRequestSeparator, pos);
    if (end == std::string_view::npos) end = bytes.size();
    RequestText r;
    if (parse_one(bytes.substr(pos, end - pos), &r)) out.push_back(std::move(r));
    pos = end + kRequestSeparator.size();
  }
  return out;
}

std::string join_request(const RequestText& r) {
  std::string out = r.method + " " + r.target + "\n";
  for (const auto& [k, v] : r.headers) out += k + ": " + v + "\n";
  out += "\n";
  out += r.body;
  return out;
}

void substitute(RequestText& r, const Captures& c) {
  substitute_in(r.target, c);
  for (auto& h : r.headers) substitute_in(h.second, c);
  substitute_in(r.body, c);
}

}  // namespace runledger::fuzz
