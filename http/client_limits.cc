#include "http/client_limits.h"

namespace runledger::http {

bool ClientLimits::take(const std::string& address, size_t Counts::*field) {
  const size_t max = field == &Counts::connections ? connections_max_ : streams_max_;
  std::lock_guard<std::mutex> lk(mu_);
  Counts& c = counts_[address];
  if (max != 0 && c.*field >= max) {
    if (c.connections == 0 && c.streams == 0) counts_.erase(address);
    return false;
  }
  ++(c.*field);
  return true;
}

void ClientLimits::release(const std::string& address, size_t Counts::*field) {
  std::lock_guard<std::mutex> lk(mu_);
  auto it = counts_.find(address);
  if (it == counts_.end() || it->second.*field == 0) return;
  --(it->second.*field);
  if (it->second.connections == 0 && it->second.streams == 0) counts_.erase(it);
}

}  // namespace runledger::http
