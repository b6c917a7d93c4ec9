#include "http/auth.h"

#include <algorithm>
#include <fstream>
#include <initializer_list>
#include <set>
#include <sstream>

#include "base/sha256.h"
#include "http/path_segments.h"
#include "http/request_parser.h"

namespace runledger::http {
namespace {

std::optional<Role> parse_role(std::string_view s) {
  if (s == "reader") return Role::kReader;
  if (s == "worker") return Role::kWorker;
  if (s == "operator") return Role::kOperator;
  return std::nullopt;
}

bool one_of(std::string_view s, std::initializer_list<std::string_view> names) {
  return std::find(names.begin(), names.end(), s) != names.end();
}

// The calls a worker makes: the job worker protocol and the sync loop's
// reports. Matched on the decoded segments, as the router matches them, so
// that a percent-encoded or doubled slash reaches neither more nor less than
// the route it names.
bool worker_call(const std::vector<std::string>& p) {
  if (p.size() < 3 || p[0] != "v1") return false;
  if (p[1] == "jobs") {
    if (p.size() == 3) return p[2] == "claim";
    if (p.size() == 4) {
      return one_of(p[3], {"heartbeat", "release", "start", "cancel-ack", "outcome-unknown",
                           "reattach", "yield"});
    }
    return p.size() == 6 && p[3] == "steps" && one_of(p[5], {"start", "done", "failed"});
  }
  if (p[1] == "connectors") {
    return p.size() == 6 && p[3] == "syncs" && one_of(p[5], {"progress", "succeeded", "failed"});
  }
  return false;
}

}  // namespace

Status Auth::load(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::Invalid("cannot read the tokens file " + path);
  std::string line;
  int n = 0;
  std::set<std::string> names;
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
    // A token of two names would make one of them the actor of the other's
    // requests; a name of two tokens, two callers who share idempotency keys.
    if (!by_hash_.emplace(sha256_hex(token), Principal{name, *r}).second) {
      return Status::Invalid(path + ":" + std::to_string(n) +
                             ": this token is given on an earlier line already");
    }
    if (!names.insert(name).second) {
      return Status::Invalid(path + ":" + std::to_string(n) + ": the name " + name +
                             " is given to an earlier token already");
    }
  }
  if (by_hash_.empty()) return Status::Invalid("the tokens file " + path + " has no tokens");
  return Status::Ok();
}

std::optional<Principal> Auth::authenticate(std::string_view authorization) const {
  // RFC 9110 11.1: the scheme compares case-blind, and one or more spaces follow it.
  constexpr std::string_view kBearer = "bearer";
  if (authorization.size() <= kBearer.size() ||
      !iequals(authorization.substr(0, kBearer.size()), kBearer) ||
      authorization[kBearer.size()] != ' ') {
    return std::nullopt;
  }
  std::string_view credentials = authorization.substr(kBearer.size());
  while (!credentials.empty() && credentials.front() == ' ') credentials.remove_prefix(1);
  auto it = by_hash_.find(sha256_hex(credentials));
  if (it == by_hash_.end()) return std::nullopt;
  return it->second;
}

std::string_view role_name(Role role) {
  switch (role) {
    case Role::kReader:
      return "reader";
    case Role::kWorker:
      return "worker";
    case Role::kOperator:
      return "operator";
  }
  return "reader";
}

bool allowed(Role role, std::string_view method, std::string_view path) {
  if (method == "GET") return true;
  switch (role) {
    case Role::kReader:
      return false;
    case Role::kWorker:
      return worker_call(split_path(path));
    case Role::kOperator:
      return true;
  }
  return false;
}

}  // namespace runledger::http
