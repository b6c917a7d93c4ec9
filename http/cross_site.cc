#include "http/cross_site.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstring>

namespace runledger::http {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// An authority (`host[:port]`, `[v6]:port`) split into its host (lower
// case, no brackets) and its port ("" when none). False when it is not one.
bool split_authority(std::string_view authority, std::string* host, std::string* port) {
  if (authority.empty()) return false;
  std::string_view h = authority;
  std::string_view p;
  if (authority.front() == '[') {
    const size_t close = authority.find(']');
    if (close == std::string_view::npos) return false;
    h = authority.substr(1, close - 1);
    std::string_view rest = authority.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') return false;
      p = rest.substr(1);
    }
  } else {
    const size_t colon = authority.rfind(':');
    if (colon != std::string_view::npos) {
      h = authority.substr(0, colon);
      p = authority.substr(colon + 1);
    }
  }
  if (h.empty()) return false;
  for (char c : p) {
    if (c < '0' || c > '9') return false;
  }
  *host = lower(h);
  *port = std::string(p);
  return true;
}

// `host:port` as the browser would compare it: lower case, the default
// port of plain HTTP left out.
std::string same_origin_form(const std::string& host, const std::string& port) {
  std::string form = host.find(':') != std::string::npos ? "[" + host + "]" : host;
  if (!port.empty() && port != "80") form += ":" + port;
  return form;
}

std::optional<Reply> check_host(const std::string* host_header, const SiteRules& rules) {
  if (!rules.local_host_only || host_header == nullptr) return std::nullopt;
  std::string host;
  std::string port;
  if (split_authority(*host_header, &host, &port) &&
      (loopback_host(host) || host == lower(rules.listen_host))) {
    return std::nullopt;
  }
  return Reply::error(421, "misdirected_request",
                      "Host '" + *host_header +
                          "' is not served: without authentication this server answers only to "
                          "a loopback name or its listen address");
}

std::optional<Reply> check_origin(const HeaderList& headers, const std::string* host_header) {
  for (const auto& [name, origin] : headers) {
    if (!iequals(name, "Origin")) continue;
    bool same = false;
    constexpr std::string_view kHttp = "http://";
    std::string host;
    std::string port;
    std::string expected_host;
    std::string expected_port;
    if (host_header != nullptr && origin.size() > kHttp.size() &&
        iequals(std::string_view(origin).substr(0, kHttp.size()), kHttp) &&
        split_authority(std::string_view(origin).substr(kHttp.size()), &host, &port) &&
        split_authority(*host_header, &expected_host, &expected_port)) {
      same = same_origin_form(host, port) == same_origin_form(expected_host, expected_port);
    }
    if (!same) {
      return Reply::error(403, "cross_origin",
                          "requests from origin '" + origin +
                              "' are refused: only pages of this server's own origin may call it");
    }
  }
  return std::nullopt;
}

std::optional<Reply> check_content_type(const HeaderList& headers, std::string_view method,
                                        size_t body_bytes) {
  if (method == "GET" || method == "HEAD") return std::nullopt;
  const std::string* type = find_header(headers, "Content-Type");
  if (type == nullptr && body_bytes == 0) return std::nullopt;
  if (type != nullptr) {
    std::string_view media = *type;
    media = media.substr(0, media.find(';'));
    while (!media.empty() && (media.back() == ' ' || media.back() == '\t')) media.remove_suffix(1);
    if (iequals(media, "application/json")) return std::nullopt;
  }
  return Reply::error(
      415, "unsupported_media_type",
      "a request body must be JSON sent as Content-Type: application/json" +
          (type != nullptr ? ", not '" + *type + "'" : std::string(" (none given)")));
}

}  // namespace

bool loopback_host(std::string_view host) {
  const std::string h = lower(host);
  if (h == "localhost" || ends_with(h, ".localhost")) return true;
  in_addr v4{};
  if (inet_pton(AF_INET, h.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6{};
  if (inet_pton(AF_INET6, h.c_str(), &v6) == 1) {
    return std::memcmp(&v6, &in6addr_loopback, sizeof v6) == 0;
  }
  return false;
}

std::optional<Reply> refuse_cross_site(const HeaderList& headers, std::string_view method,
                                       size_t body_bytes, const SiteRules& rules) {
  const std::string* host = find_header(headers, "Host");
  if (auto refused = check_host(host, rules)) return refused;
  if (auto refused = check_origin(headers, host)) return refused;
  return check_content_type(headers, method, body_bytes);
}

}  // namespace runledger::http
