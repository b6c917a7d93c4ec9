// SimHost: see sim_host.h.
#include "tests/engine/sim_host.h"

#include <stdlib.h>

#include <filesystem>
#include <stdexcept>

namespace runledger::testing {
namespace {

// tmpfs first: the simulation measures the engine's logic, not the disk.
std::string make_folder() {
  for (const char* parent : {"/dev/shm", "/tmp"}) {
    std::error_code ec;
    if (!std::filesystem::is_directory(parent, ec)) continue;
    std::string tmpl = std::string(parent) + "/runledger-sim-XXXXXX";
    if (mkdtemp(tmpl.data()) != nullptr) return tmpl;
  }
  throw std::runtime_error("no temporary folder for the simulation");
}

}  // namespace

SimHost::SimHost(EngineOptions options) : options_(std::move(options)), folder_(make_folder()) {
  open();
}

SimHost::~SimHost() {
  close();
  std::error_code ec;
  std::filesystem::remove_all(folder_, ec);
}

void SimHost::open() {
  std::unique_ptr<EventStore> rocks;
  Status st = open_rocksdb_store(folder_, StoreOptions{}, &rocks);
  if (!st.ok()) throw std::runtime_error("opening the store failed: " + st.ToString());
  store_ = std::make_shared<FaultyStore>(std::move(rocks));
  st = Engine::open(store_, clock, options_, &engine_);
  if (!st.ok()) throw std::runtime_error("opening the engine failed: " + st.ToString());
}

void SimHost::close() {
  if (engine_) engine_->shutdown();
  engine_.reset();
  store_.reset();  // the last owner: closes RocksDB and frees its LOCK
}

void SimHost::restart(int64_t down_ms) {
  close();
  clock.advance_ms(down_ms);
  open();
  engine_->record_schedule_gaps();
}

}  // namespace runledger::testing
