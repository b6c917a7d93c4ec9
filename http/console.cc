#include "http/console.h"

#include <zlib.h>

#include <array>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>

#include "base/ascii.h"
#include "base/sha256.h"

namespace runledger::http {
namespace {

constexpr std::string_view kRoot = "/ui";
constexpr std::string_view kAssets = "/ui/assets/";
constexpr std::string_view kPageFile = "index.html";

// Sent with every console reply. Same origin only: no inline script or
// style, no frames of it elsewhere, no <base> or form posted away.
constexpr std::string_view kSecurityHeaders =
    "Content-Security-Policy: default-src 'self'; frame-ancestors 'none'; base-uri 'none'; "
    "form-action 'self'\r\n"
    "X-Content-Type-Options: nosniff\r\n"
    "Referrer-Policy: no-referrer\r\n";
// The page names its assets by content hash: it must be asked for again
// each time, the assets never.
constexpr std::string_view kPageCache = "Cache-Control: no-cache\r\n";
constexpr std::string_view kAssetCache = "Cache-Control: public, max-age=31536000, immutable\r\n";

struct TypeByEnding {
  std::string_view ending;
  std::string_view type;
  bool compressible;
};
constexpr std::array<TypeByEnding, 10> kTypes{{
    {".html", "text/html; charset=utf-8", true},
    {".js", "text/javascript; charset=utf-8", true},
    {".css", "text/css; charset=utf-8", true},
    {".svg", "image/svg+xml", true},
    {".json", "application/json", true},
    {".map", "application/json", true},
    {".txt", "text/plain; charset=utf-8", true},
    {".png", "image/png", false},
    {".ico", "image/x-icon", false},
    {".woff2", "font/woff2", false},
}};

const TypeByEnding* type_by_ending(std::string_view name) {
  for (const TypeByEnding& t : kTypes) {
    if (name.size() > t.ending.size() && name.ends_with(t.ending)) return &t;
  }
  return nullptr;
}

// The gzip form of `bytes` at the best compression (the built-in files are
// compressed once, at start).
std::string gzip(std::string_view bytes) {
  z_stream z{};
  // 15 + 16: a gzip header and trailer rather than zlib's.
  if (deflateInit2(&z, Z_BEST_COMPRESSION, Z_DEFLATED, 15 + 16, 9, Z_DEFAULT_STRATEGY) != Z_OK) {
    return {};
  }
  std::string out(deflateBound(&z, bytes.size()), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  z.avail_in = static_cast<uInt>(bytes.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  const int rc = deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return rc == Z_STREAM_END ? out : std::string();
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Calls f(item) for each comma-separated item of a header value, trimmed.
template <typename F>
void for_each_item(std::string_view value, F f) {
  while (!value.empty()) {
    const size_t comma = value.find(',');
    std::string_view item = trim(value.substr(0, comma));
    if (!item.empty()) f(item);
    if (comma == std::string_view::npos) break;
    value.remove_prefix(comma + 1);
  }
}

// Whether Accept-Encoding takes gzip: named with a q above 0, or `*` so
// when gzip is not named (RFC 9110, 12.5.3).
bool takes_gzip(const HeaderList& headers) {
  std::optional<bool> named;
  bool any = false;
  for (const auto& [name, value] : headers) {
    if (!iequals(name, "Accept-Encoding")) continue;
    for_each_item(value, [&](std::string_view item) {
      const size_t semi = item.find(';');
      std::string_view coding = trim(item.substr(0, semi));
      bool acceptable = true;
      if (semi != std::string_view::npos) {
        std::string_view param = trim(item.substr(semi + 1));
        if (param.size() > 2 && (param[0] == 'q' || param[0] == 'Q') && param[1] == '=') {
          std::string_view q = param.substr(2);
          acceptable = q.find_first_not_of("0.") != std::string_view::npos;
        }
      }
      if (iequals(coding, "gzip") || iequals(coding, "x-gzip")) {
        named = acceptable;
      } else if (coding == "*") {
        any = acceptable;
      }
    });
  }
  return named.value_or(any);
}

// Whether If-None-Match names `etag` (weak comparison, RFC 9110 13.1.2).
bool none_match_names(const HeaderList& headers, std::string_view etag) {
  bool found = false;
  for (const auto& [name, value] : headers) {
    if (!iequals(name, "If-None-Match")) continue;
    for_each_item(value, [&](std::string_view tag) {
      if (tag == "*") found = true;
      if (tag.starts_with("W/")) tag.remove_prefix(2);
      if (tag == etag) found = true;
    });
  }
  return found;
}

// The ETag of the gzip form: a different representation, so another tag.
std::string gzip_etag(const std::string& etag) {
  return etag.substr(0, etag.size() - 1) + "-gzip\"";
}

Reply not_found(std::string message) {
  Reply r = Reply::error(404, "not_found", message);
  r.headers = kSecurityHeaders;
  return r;
}

// A path below the folder: segments of [A-Za-z0-9._-], none "." or "..".
bool safe_relative_path(std::string_view rel) {
  if (rel.empty()) return false;
  while (true) {
    const size_t slash = rel.find('/');
    std::string_view segment = rel.substr(0, slash);
    if (segment.empty() || segment == "." || segment == "..") return false;
    for (char c : segment) {
      const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '.' || c == '_' || c == '-';
      if (!ok) return false;
    }
    if (slash == std::string_view::npos) return true;
    rel.remove_prefix(slash + 1);
  }
}

std::optional<std::string> read_regular_file(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return std::nullopt;
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return std::move(bytes).str();
}

}  // namespace

bool console_path(std::string_view path) {
  return path == kRoot ||
         (path.starts_with(kRoot) && path.size() > kRoot.size() && path[kRoot.size()] == '/');
}

std::string_view Console::content_type_of(std::string_view name) {
  const TypeByEnding* t = type_by_ending(name);
  return t == nullptr ? std::string_view() : t->type;
}

Console::File Console::make_file(std::string_view name, std::string bytes) {
  File f;
  const TypeByEnding* t = type_by_ending(name);
  f.content_type = t == nullptr ? "application/octet-stream" : t->type;
  if (t != nullptr && t->compressible) {
    std::string z = gzip(bytes);
    if (!z.empty() && z.size() < bytes.size()) f.gzipped = std::move(z);
  }
  f.etag = "\"" + sha256_hex(bytes).substr(0, 32) + "\"";
  f.body = std::move(bytes);
  return f;
}

std::shared_ptr<const Console> Console::from_folder(const std::string& dir, std::string* error) {
  const std::filesystem::path page = std::filesystem::path(dir) / kPageFile;
  std::error_code ec;
  if (!std::filesystem::is_regular_file(page, ec)) {
    *error = "--ui-dir " + dir + " has no index.html: it must be laid out as the built assets are";
    return nullptr;
  }
  auto c = std::make_shared<Console>();
  c->dir_ = dir;
  return c;
}

Reply Console::refuse_method(std::string_view method) {
  Reply r = Reply::error(405, "method_not_allowed",
                         std::string(method) + " is not allowed on the console's files");
  r.headers = kSecurityHeaders;
  return r;
}

Reply Console::serve(std::string_view path, const HeaderList& headers) const {
  const bool page = !path.starts_with(kAssets);
  const std::string rel =
      page ? std::string(kPageFile) : std::string(path.substr(kRoot.size() + 1));

  std::optional<File> read;
  const File* file = nullptr;
  if (!dir_.empty()) {
    if (safe_relative_path(rel) && !content_type_of(rel).empty()) {
      if (auto bytes = read_regular_file(std::filesystem::path(dir_) / rel)) {
        read = make_file(rel, std::move(*bytes));
        file = &*read;
      }
    }
  } else if (auto it = files_.find(rel); it != files_.end()) {
    file = &it->second;
  }
  if (file == nullptr) {
    if (page) return not_found("the console is not built into this server; see docs/console.md");
    return not_found("no such console file: " + std::string(path));
  }

  const bool zipped = !file->gzipped.empty() && takes_gzip(headers);
  const std::string etag = zipped ? gzip_etag(file->etag) : file->etag;
  Reply r;
  r.content_type = file->content_type;
  r.headers = kSecurityHeaders;
  r.headers += page ? kPageCache : kAssetCache;
  r.headers += "ETag: " + etag + "\r\n";
  // A cache must keep the gzip and the plain form apart.
  if (!file->gzipped.empty()) r.headers += "Vary: Accept-Encoding\r\n";
  if (none_match_names(headers, file->etag) || none_match_names(headers, gzip_etag(file->etag))) {
    r.status = 304;
    return r;
  }
  r.status = 200;
  if (zipped) {
    r.headers += "Content-Encoding: gzip\r\n";
    r.body = file->gzipped;
  } else {
    r.body = file->body;
  }
  return r;
}

}  // namespace runledger::http
