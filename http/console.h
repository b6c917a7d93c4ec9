// Console: the web console's files, served at /ui/ (docs/console.md).
//
// The files are the front end's built assets (ui/dist: index.html at the
// root, content-hashed assets under assets/), built into the binary by
// default, or read from a folder laid out the same way (--ui-dir, for
// developing the front end). The console reads only the public API, so the
// page itself holds no data and is served without a token.
//
// Every /ui path outside /ui/assets/ answers the page (each view is a deep
// link that survives a reload); a missing file under /ui/assets/ is 404.
// Replies carry their content type, an ETag (and 304 for a match), gzip when
// the client takes it and it saves bytes, `Cache-Control: immutable` for the
// hashed assets and `no-cache` for the page, and a Content-Security-Policy
// that allows nothing but this server's own files.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

#include "engine/reply.h"
#include "http/request_parser.h"

namespace runledger::http {

// Whether `path` is the console's: "/ui" or under "/ui/".
bool console_path(std::string_view path);

class Console {
 public:
  // A file as served: its bytes, their gzip form (empty when gzip saves
  // nothing), its type and its ETag.
  struct File {
    std::string body;
    std::string gzipped;
    std::string content_type;
    std::string etag;
  };

  // The assets built into this binary. Empty (every path 404, saying so)
  // when the binary was built without them.
  static std::shared_ptr<const Console> built_in();
  // The files of `dir`, read on each request. Nullptr with *error set when
  // `dir` has no index.html.
  static std::shared_ptr<const Console> from_folder(const std::string& dir, std::string* error);

  // True when serving reads files (from_folder): the server then answers on
  // a thread that may block.
  bool reads_files() const { return !dir_.empty(); }

  // The reply to GET (or HEAD) of `path` (a console path) with the request's
  // `headers` (Accept-Encoding, If-None-Match).
  Reply serve(std::string_view path, const HeaderList& headers) const;
  // The reply to another method on a console path.
  static Reply refuse_method(std::string_view method);

  // The file types served, by name ending; the type of any other is refused.
  static std::string_view content_type_of(std::string_view name);
  // The File of `bytes` named `name`: type, gzip form and ETag worked out.
  static File make_file(std::string_view name, std::string bytes);

 private:
  // Built in: every file by its path ("index.html", "assets/app-X.js").
  std::unordered_map<std::string, File> files_;
  std::string dir_;  // from_folder: read files from here instead
};

}  // namespace runledger::http
