// The console's assets built into the binary (ui/dist at build time).
#include "http/console.h"

namespace runledger::http {
namespace {

struct ConsoleAsset {
  const char* path;  // "index.html", "assets/app-X.js"; nullptr ends the table
  const unsigned char* bytes;
  size_t size;
};

#include "http/console_assets.inc"

}  // namespace

std::shared_ptr<const Console> Console::built_in() {
  // Compressed and hashed once, on first use (at start).
  static const std::shared_ptr<const Console> built = [] {
    auto c = std::make_shared<Console>();
    for (const ConsoleAsset* a = kConsoleAssets; a->path != nullptr; ++a) {
      std::string bytes(reinterpret_cast<const char*>(a->bytes), a->size);
      c->files_.emplace(a->path, make_file(a->path, std::move(bytes)));
    }
    return c;
  }();
  return built;
}

}  // namespace runledger::http
