// Auth: bearer tokens with roles (docs/operations.md "Authentication").
//
// The tokens file has one token per line: `NAME ROLE TOKEN`, where ROLE is
// reader (GET only), worker (the job and sync worker calls, and GET) or
// operator (everything). Blank lines and lines starting with '#' are
// skipped. Only SHA-256 digests of the tokens are kept in memory. The
// token's NAME is the actor recorded in the events its requests cause.
// Thread-safe after load (lookups only read).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace runledger::http {

enum class Role : uint8_t { kReader, kWorker, kOperator };

struct Principal {
  std::string name;
  Role role;
};

class Auth {
 public:
  static constexpr size_t kTokenCharsMin = 16;

  Status load(const std::string& path);
  bool enabled() const { return !by_hash_.empty(); }
  // The principal behind an `Authorization` header value, or nullopt.
  std::optional<Principal> authenticate(std::string_view authorization) const;

 private:
  std::map<std::string, Principal> by_hash_;  // hex SHA-256 of the token
};

// "reader", "worker" or "operator", as the tokens file says it.
std::string_view role_name(Role role);

// Whether `role` may call METHOD on PATH.
bool allowed(Role role, std::string_view method, std::string_view path);

}  // namespace runledger::http
