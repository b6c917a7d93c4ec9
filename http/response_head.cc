#include "http/response_head.h"

#include "projections/json_text.h"

namespace runledger::http {

std::string_view reason_phrase(int status) {
  switch (status) {
    case 100:
      return "Continue";
    case 200:
      return "OK";
    case 201:
      return "Created";
    case 202:
      return "Accepted";
    case 204:
      return "No Content";
    case 304:
      return "Not Modified";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 408:
      return "Request Timeout";
    case 409:
      return "Conflict";
    case 410:
      return "Gone";
    case 412:
      return "Precondition Failed";
    case 413:
      return "Payload Too Large";
    case 414:
      return "URI Too Long";
    case 422:
      return "Unprocessable Entity";
    case 423:
      return "Locked";
    case 429:
      return "Too Many Requests";
    case 431:
      return "Request Header Fields Too Large";
    case 500:
      return "Internal Server Error";
    case 501:
      return "Not Implemented";
    case 503:
      return "Service Unavailable";
    case 505:
      return "HTTP Version Not Supported";
    default:
      return "Unknown";
  }
}

void append_response_head(std::string& out, const ResponseHead& h) {
  out += "HTTP/1.1 ";
  json_text::append_int(out, h.status);
  out += ' ';
  out += reason_phrase(h.status);
  out += "\r\n";
  if (h.status != 204 && h.status != 304) {
    out += "Content-Type: ";
    out += h.content_type;
    out += "\r\nContent-Length: ";
    json_text::append_int(out, static_cast<int64_t>(h.body_bytes));
    out += "\r\n";
  }
  if (!h.allow.empty()) {
    out += "Allow: ";
    out += h.allow;
    out += "\r\n";
  }
  out += h.extra;
  if (!h.keep_alive) {
    out += "Connection: close\r\n";
  } else if (h.http10) {
    out += "Connection: keep-alive\r\n";
  }
  out += "\r\n";
}

}  // namespace runledger::http
