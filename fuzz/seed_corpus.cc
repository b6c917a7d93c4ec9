// fuzz_seed_corpus CORPUS_DIR: derives the seeds of the event decoder and
// JSON input fuzzers from the request corpus, so they start from real
// events and real bodies rather than from nothing.
//
// It runs every file of CORPUS_DIR/fuzz_http_request (in name order)
// through ApiUnderTest, then writes
//   CORPUS_DIR/fuzz_event_decoder/event-<Type>   the first event of each type,
//   CORPUS_DIR/fuzz_event_decoder/log-<file>     the events each request file
//                                                caused, as a log (the fuzzer's
//                                                length-prefixed form),
//   CORPUS_DIR/fuzz_json_input/body-<file>-<i>   each non-empty request body.
// Files are overwritten; nothing else is touched.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "events/event_codec.h"
#include "fuzz/api_under_test.h"
#include "fuzz/request_text.h"

namespace fs = std::filesystem;
using namespace runledger;

namespace {

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_file(const fs::path& p, const std::string& bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << bytes;
}

void append_record(std::string* log, std::string_view bytes) {
  const auto n = static_cast<uint32_t>(bytes.size());
  for (int i = 0; i < 4; ++i) log->push_back(static_cast<char>(n >> (8 * i) & 0xff));
  log->append(bytes);
}

// The seqs each request file appended: (after, until].
using SeqRanges = std::map<std::string, std::pair<uint64_t, uint64_t>>;

// Runs the request corpus; writes the bodies as JSON seeds.
SeqRanges run_requests(const fs::path& root, fuzz::ApiUnderTest& api) {
  SeqRanges ranges;
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(root / "fuzz_http_request")) {
    if (entry.is_regular_file()) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  int input = 0;
  for (const auto& file : files) {
    fuzz::Captures captures;
    captures.n = "seed" + std::to_string(++input);
    const uint64_t first = api.last_seq();
    int i = 0;
    for (auto& r : fuzz::split_requests(read_file(file))) {
      fuzz::substitute(r, captures);
      auto outcome = api.call(r);
      ++i;
      if (!r.body.empty()) {
        write_file(root / "fuzz_json_input" /
                       ("body-" + file.filename().string() + "-" + std::to_string(i)),
                   r.body);
      }
      if (!outcome) continue;
      auto j = nlohmann::json::parse(outcome->reply.body, nullptr, false);
      if (!j.is_object()) continue;
      if (j.contains("lease_token")) captures.lease_token = j["lease_token"];
      if (j.contains("sync_id")) captures.sync_id = j["sync_id"];
      if (j.contains("id") && j["id"].is_string()) captures.id = j["id"];
      if (j.contains("job") && j["job"].is_object()) captures.id = j["job"]["id"];
    }
    ranges[file.filename().string()] = {first, api.last_seq()};
  }
  return ranges;
}

// Writes one seed per event type and one log per request file.
void write_events(const fs::path& root, fuzz::ApiUnderTest& api, const SeqRanges& ranges) {
  std::set<std::string> types;
  for (const auto& [file, range] : ranges) {
    if (range.first == range.second) continue;
    std::string log;
    Status st = api.engine().store().read_range(
        range.first, range.second, [&](const fb::Event& e, std::string_view b) {
          std::string type(event_type_name(e.payload_type()));
          if (types.insert(type).second) {
            write_file(root / "fuzz_event_decoder" / ("event-" + type), std::string(b));
          }
          append_record(&log, b);
          return true;
        });
    if (!st.ok()) std::fprintf(stderr, "reading the log: %s\n", st.ToString().c_str());
    write_file(root / "fuzz_event_decoder" / ("log-" + file), log);
  }
  std::printf("%zu event types\n", types.size());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: fuzz_seed_corpus CORPUS_DIR\n");
    return 2;
  }
  const fs::path root = argv[1];
  fs::create_directories(root / "fuzz_event_decoder");
  fs::create_directories(root / "fuzz_json_input");
  fuzz::ApiUnderTest api;
  write_events(root, api, run_requests(root, api));
  return 0;
}
