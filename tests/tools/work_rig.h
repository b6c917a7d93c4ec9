// A runledgerd subprocess and the HTTP calls the `runledger work` tests make
// to it as an operator: jobs enqueued, their view and their events read. The
// server can be killed and started again on the same data folder and port.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "tests/support/server_process.h"
#include "tests/support/subprocess.h"
#include "tests/support/test_support.h"

namespace runledger::testing {

class WorkRig {
 public:
  WorkRig() { start_server(0); }
  ~WorkRig() {
    if (server_ && server_->running()) server_->terminate();
  }

  bool start_server(int port) {
    server_ =
        std::make_unique<ServerProcess>(dir_.path() + "/data", std::vector<std::string>{}, port);
    const bool ready = server_->wait_ready();
    http_ = std::make_unique<httplib::Client>("127.0.0.1", server_->port());
    http_->set_read_timeout(std::chrono::seconds(20));
    return ready;
  }
  // kill -9, then a new server on the same data folder and port.
  bool restart_server_hard() {
    const int port = server_->port();
    server_->kill_hard();
    return start_server(port);
  }
  ServerProcess& server() { return *server_; }
  std::string path(const std::string& name) const { return dir_.path() + "/" + name; }

  nlohmann::json post(const std::string& path, const nlohmann::json& body) {
    auto r = http_->Post(path.c_str(), body.dump(), "application/json");
    return r ? nlohmann::json::parse(r->body, nullptr, false) : nlohmann::json();
  }
  nlohmann::json get(const std::string& path) {
    auto r = http_->Get(path.c_str());
    return r ? nlohmann::json::parse(r->body, nullptr, false) : nlohmann::json();
  }
  nlohmann::json job(const std::string& id) { return get("/v1/jobs/" + id); }
  bool enqueue(const std::string& id, const std::vector<std::string>& plan,
               const std::string& target, int max_attempts = 1) {
    const nlohmann::json j = post("/v1/jobs", {{"id", id},
                                               {"kind", "k"},
                                               {"target", target},
                                               {"plan", plan},
                                               {"max_attempts", max_attempts}});
    return j.value("id", "") == id;
  }
  // How many events of each type the job's stream holds.
  std::map<std::string, int> event_counts(const std::string& id) {
    std::map<std::string, int> counts;
    const nlohmann::json e = get("/v1/jobs/" + id + "/events");
    if (!e.contains("events")) return counts;
    for (const auto& ev : e["events"]) ++counts[ev.value("type", "")];
    return counts;
  }
  // Waits up to `wait` for the job's state to be one of `states`.
  bool wait_state(const std::string& id, const std::vector<std::string>& states,
                  std::chrono::milliseconds wait) {
    const auto until = std::chrono::steady_clock::now() + wait;
    while (std::chrono::steady_clock::now() < until) {
      const std::string s = job(id).value("state", "");
      for (const auto& want : states) {
        if (s == want) return true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
  }
  // The arguments of `runledger work` for `server`, with the state folder `state`.
  static std::vector<std::string> work_args(const std::string& server, const std::string& state,
                                            const std::vector<std::string>& extra,
                                            const std::string& wait_s = "0") {
    std::vector<std::string> args = {"work",        "--kind", "k",        "--server", server,
                                     "--state-dir", state,    "--wait-s", wait_s};
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  }

 private:
  TempDir dir_;
  std::unique_ptr<ServerProcess> server_;
  std::unique_ptr<httplib::Client> http_;
};

}  // namespace runledger::testing
