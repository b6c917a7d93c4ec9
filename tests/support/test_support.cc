#include "tests/support/test_support.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <stdexcept>

namespace runledger::testing {

std::string CounterIds::next_id(std::string_view prefix) {
  return std::string(prefix) + "-" + std::to_string(++n_);
}

Given::Given() = default;

Context Given::ctx() {
  Context c;
  c.now_ms = now_ms;
  c.actor = actor;
  c.policy = &policy;
  c.ids = &ids;
  return c;
}

const std::vector<std::string>& Given::apply(const Decision& d) {
  last_.clear();
  for (const auto& ne : d.events) {
    EventDraft draft;
    draft.seq = state.last_seq + 1;
    draft.stream = ne.stream;
    draft.stream_version = ++versions_[ne.stream];
    draft.recorded_at_ms = now_ms;
    draft.actor = actor;
    const std::string command_id = "cmd-" + std::to_string(draft.seq);  // outlives the view
    draft.command_id = command_id;
    draft.prev_hash = state.last_hash;
    draft.payload = &ne.payload;
    std::string bytes;
    encode_event(draft, &bytes);
    const fb::Event* e = nullptr;
    Status st = decode_event(bytes, &e);
    if (!st.ok()) throw std::runtime_error("encoded event does not decode: " + st.ToString());
    evolve(state, *e);
    state.last_hash = sha256(bytes);
    log_.push_back(bytes);
    last_.push_back(std::move(bytes));
  }
  return last_;
}

std::vector<std::string> Given::types(const Decision& d) {
  std::vector<std::string> out;
  for (const auto& e : d.events) out.emplace_back(event_type_name(e.payload.type));
  return out;
}

TempDir::TempDir() {
  char tmpl[] = "/tmp/runledger-test-XXXXXX";
  char* p = mkdtemp(tmpl);
  if (p == nullptr) throw std::runtime_error("mkdtemp failed");
  path_ = p;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

namespace {

// `root`/`name`, appended step by step: GCC 12 reports a false
// -Warray-bounds on the chained operator+ of a string literal here.
std::string under(const char* root, const std::string& name) {
  std::string path = root;
  path.append("/").append(name);
  return path;
}

}  // namespace

std::string bin_path(const std::string& name) {
#ifdef RL_BIN_DIR
  return under(RL_BIN_DIR, name);
#else
  return under("build/bin", name);
#endif
}

long metric_in(const std::string& metrics_text, const std::string& name) {
  const std::string key = "\n" + name + " ";
  const size_t at = metrics_text.find(key);
  if (at == std::string::npos) return -1;
  return std::stol(metrics_text.substr(at + key.size()));
}

std::string source_path(const std::string& relative) {
#ifdef RL_SOURCE_DIR
  return under(RL_SOURCE_DIR, relative);
#else
  return relative;
#endif
}

int free_port() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    close(fd);
    throw std::runtime_error("bind failed");
  }
  socklen_t len = sizeof addr;
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  int port = ntohs(addr.sin_port);
  close(fd);
  return port;
}

uint64_t env_number(const char* name, uint64_t fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::strtoull(v, nullptr, 10) : fallback;
}

}  // namespace runledger::testing
