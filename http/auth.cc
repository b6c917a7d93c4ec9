#include "http/auth.h"

#include <fstream>
#include <sstream>

#include "events/hash.h"

namespace runledger::http {
namespace {

std::optional<Role> parse_role(std::string_view s) {
  if (s == "reader") return Role::kReader;
  if (s == "worker") return Role::kWorker;
  if (s == "operator") return Role::kOperator;
  return std::nullopt;
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// The calls a worker makes: the job worker protocol and the sync loop's reports.
bool worker_call(std::string_view path) {
  if (path == "/v1/jobs/claim") return true;
  if (path.rfind("/v1/jobs/", 0) == 0) {
    for (auto s : {"/heartbeat", "/release", "/start", "/done", "/failed", "/cancel-ack",
                   "/outcome-unknown", "/reattach"}) {
      if (ends_with(path, s)) return true;
    }
    return false;
  }
  if (path.rfind("/v1/connectors/", 0) == 0 && path.find("/syncs/") != std::string_view::npos) {
    return ends_with(path, "/progress") || ends_with(path, "/succeeded") ||
           ends_with(path, "/failed");
  }
  return false;
}

}  // namespace

Status Auth::load(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::Invalid("cannot read the tokens file " + path);
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    std::istringstream fields(line);
    std::string name, role, token, extra;
    if (!(fields >> name) || name.front() == '#') continue;
    if (!(fields >> role >> token) || (fields >> extra)) {
      return Status::Invalid(path + ":" + std::to_string(n) + ": expected NAME ROLE TOKEN");
    }
    auto r = parse_role(role);
    if (!r) {
      return Status::Invalid(path + ":" + std::to_string(n) +
                             ": role must be reader, worker or operator");
    }
    if (token.size() < kTokenCharsMin) {
      return Status::Invalid(path + ":" + std::to_string(n) + ": token shorter than " +
                             std::to_string(kTokenCharsMin) + " characters");
    }
    by_hash_[sha256_hex(token)] = Principal{name, *r};
  }
  if (by_hash_.empty()) return Status::Invalid("the tokens file " + path + " has no tokens");
  return Status::Ok();
}

std::optional<Principal> Auth::authenticate(std::string_view authorization) const {
  constexpr std::string_view kBearer = "Bearer ";
  if (authorization.substr(0, kBearer.size()) != kBearer) return std::nullopt;
  auto it = by_hash_.find(sha256_hex(authorization.substr(kBearer.size())));
  if (it == by_hash_.end()) return std::nullopt;
  return it->second;
}

bool allowed(Role role, std::string_view method, std::string_view path) {
  if (method == "GET") return true;
  switch (role) {
    case Role::kReader:
      return false;
    case Role::kWorker:
      return worker_call(path);
    case Role::kOperator:
      return true;
  }
  return false;
}

}  // namespace runledger::http
