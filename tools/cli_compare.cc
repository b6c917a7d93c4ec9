// The comparison of replay --compare: see cli_compare.h.
#include "tools/cli_compare.h"

#include <algorithm>
#include <set>

#include "engine/state_loader.h"
#include "engine/view_index.h"

namespace runledger::cli {

namespace {

using nlohmann::json;

// Values longer than this are cut in a difference line: a line is for a
// person, and the path already says where the two part.
constexpr size_t kValueCharsMax = 200;

std::string shown(const json& v) {
  std::string text = v.dump();
  if (text.size() > kValueCharsMax) text = text.substr(0, kValueCharsMax) + "...";
  return text;
}

std::string child(const std::string& path, const std::string& key) {
  return path.empty() ? key : path + "." + key;
}

void diff(const std::string& where, const std::string& path, const json& a, const json& b,
          std::vector<std::string>* out);

void diff_objects(const std::string& where, const std::string& path, const json& a, const json& b,
                  std::vector<std::string>* out) {
  std::set<std::string> keys;
  for (const auto& [k, v] : a.items()) keys.insert(k);
  for (const auto& [k, v] : b.items()) keys.insert(k);
  for (const auto& k : keys) {
    const std::string p = child(path, k);
    if (!a.contains(k)) {
      out->push_back(where + " " + p + ": replay has no field, server " + shown(b.at(k)));
    } else if (!b.contains(k)) {
      out->push_back(where + " " + p + ": replay " + shown(a.at(k)) + ", server has no field");
    } else {
      diff(where, p, a.at(k), b.at(k), out);
    }
  }
}

void diff_arrays(const std::string& where, const std::string& path, const json& a, const json& b,
                 std::vector<std::string>* out) {
  const size_t common = std::min(a.size(), b.size());
  for (size_t i = 0; i < common; ++i) {
    diff(where, path + "[" + std::to_string(i) + "]", a[i], b[i], out);
  }
  if (a.size() != b.size()) {
    out->push_back(where + " " + path + ": replay has " + std::to_string(a.size()) +
                   " items, server " + std::to_string(b.size()));
  }
}

void diff(const std::string& where, const std::string& path, const json& a, const json& b,
          std::vector<std::string>* out) {
  if (a == b) return;
  if (a.is_object() && b.is_object()) return diff_objects(where, path, a, b, out);
  if (a.is_array() && b.is_array()) return diff_arrays(where, path, a, b, out);
  out->push_back(where + " " + (path.empty() ? "(whole)" : path) + ": replay " + shown(a) +
                 ", server " + shown(b));
}

}  // namespace

Status server_views(const EventStore& store, ViewMap* out, uint64_t* seq) {
  State live;
  LoadReport report;
  LoadOptions options;  // snapshot + tail, finished entities evicted: the engine's start-up
  Status s = load_state(store, options, &live, &report);
  if (!s.ok()) return s;
  *out = views_of(live);
  *seq = live.last_seq;
  Status bad;
  s = store.scan_views("", "", [&](std::string_view key, std::string_view value) {
    if (key.starts_with(view_index::kKeyPrefix)) return true;  // checked by view_index::check
    json v = json::parse(value, nullptr, /*allow_exceptions=*/false);
    if (v.is_discarded()) {
      bad = Status::Corruption("the stored view of " + std::string(key) + " is not JSON");
      return false;
    }
    out->emplace(std::string(key), std::move(v));  // a live entity wins
    return true;
  });
  return s.ok() ? bad : s;
}

std::vector<std::string> differences(const ViewMap& replay, const ViewMap& server) {
  std::vector<std::string> out;
  auto r = replay.begin();
  auto v = server.begin();
  while (r != replay.end() || v != server.end()) {
    if (v == server.end() || (r != replay.end() && r->first < v->first)) {
      out.push_back(r->first + ": only in the replay");
      ++r;
    } else if (r == replay.end() || v->first < r->first) {
      out.push_back(v->first + ": only in the server's state");
      ++v;
    } else {
      diff(r->first, "", r->second, v->second, &out);
      ++r;
      ++v;
    }
  }
  return out;
}

}  // namespace runledger::cli
