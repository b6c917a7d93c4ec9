// Log fingerprints: see sim_log_hash.h.
#include "tests/engine/sim_log_hash.h"

#include <array>
#include <cctype>
#include <string_view>

#include "base/sha256.h"
#include "events/event_codec.h"
#include "events/event_json.h"

namespace runledger::testing {
namespace {

// Prefixes of the ids the engine's random IdSource makes, longest first so
// "sync-" is not read as "c-".
constexpr std::array<std::string_view, 3> kRandomIdPrefixes = {"hold-", "sync-", "c-"};
constexpr size_t kRandomIdHexDigits = 16;

bool word_char(char ch) {
  return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '-';
}

// The length of a random id starting at `i` of `text`, 0 when none starts there.
size_t random_id_at(std::string_view text, size_t i, std::string_view* prefix) {
  if (i > 0 && word_char(text[i - 1])) return 0;
  for (std::string_view p : kRandomIdPrefixes) {
    if (text.substr(i, p.size()) != p) continue;
    size_t end = i + p.size() + kRandomIdHexDigits;
    if (end > text.size()) return 0;
    for (size_t k = i + p.size(); k < end; ++k) {
      if (!std::isxdigit(static_cast<unsigned char>(text[k]))) return 0;
    }
    if (end < text.size() && word_char(text[end])) return 0;
    *prefix = p;
    return end - i;
  }
  return 0;
}

}  // namespace

std::string normalize_ids(const std::string& text, std::map<std::string, std::string>& names) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    std::string_view prefix;
    size_t n = random_id_at(text, i, &prefix);
    if (n == 0) {
      out += text[i++];
      continue;
    }
    std::string id = text.substr(i, n);
    auto it = names.find(id);
    if (it == names.end()) {
      std::string name =
          std::string(prefix.substr(0, prefix.size() - 1)) + "#" + std::to_string(names.size() + 1);
      it = names.emplace(id, name).first;
    }
    out += it->second;
    i += n;
  }
  return out;
}

LogFingerprint log_fingerprint(const EventStore& store) {
  LogFingerprint fp;
  std::map<std::string, std::string> names;
  Hash chain{};
  Status st = store.read_range(0, 0, [&](const fb::Event& e, std::string_view) {
    std::string text = normalize_ids(event_json(e).dump(), names);
    chain = sha256(to_hex(chain) + text);
    ++fp.events;
    return true;
  });
  if (!st.ok()) fp.error = st.ToString();
  fp.last_event_hash = to_hex(chain);
  fp.raw_last_hash = to_hex(store.last_hash());
  return fp;
}

}  // namespace runledger::testing
