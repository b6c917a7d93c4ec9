// ClientLimits: what one client address may hold at once: open connections
// and live event streams (docs/operations.md, Limits). Without them one
// client opening slow connections fast fills the whole connection table and
// every other client is turned away; with them it fills its own share.
// Behind a reverse proxy every client has the proxy's address: raise the
// caps there, or set them to 0 (no cap).
// Thread-safe: connections end on whichever thread drops them last.
#pragma once

#include <cstddef>
#include <mutex>
#include <string>
#include <unordered_map>

namespace runledger::http {

class ClientLimits {
 public:
  // 0: no cap.
  ClientLimits(size_t connections_max, size_t streams_max)
      : connections_max_(connections_max), streams_max_(streams_max) {}

  // One more connection (or live stream) of `address`; false when it holds
  // its most, and nothing is counted then.
  bool take_connection(const std::string& address) { return take(address, &Counts::connections); }
  bool take_stream(const std::string& address) { return take(address, &Counts::streams); }
  void release_connection(const std::string& address) { release(address, &Counts::connections); }
  void release_stream(const std::string& address) { release(address, &Counts::streams); }

  size_t connections_max() const { return connections_max_; }
  size_t streams_max() const { return streams_max_; }

 private:
  struct Counts {
    size_t connections = 0;
    size_t streams = 0;
  };
  bool take(const std::string& address, size_t Counts::*field);
  void release(const std::string& address, size_t Counts::*field);

  const size_t connections_max_;
  const size_t streams_max_;
  std::mutex mu_;
  // Addresses with anything open: an entry goes when its counts reach 0.
  std::unordered_map<std::string, Counts> counts_;  // GUARDED_BY(mu_)
};

}  // namespace runledger::http
