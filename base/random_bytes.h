// Random bytes for ids, lease tokens and nonces, from the operating system's
// generator through OpenSSL, drawn from a pool each thread refills 4 KiB at
// a time. OpenSSL's RAND_bytes checks for a fork with a getpid() system call
// on every call; an HTTP command that enqueues or claims took one or two of
// them (docs/performance.md, "Where the time goes"). A forked child starts
// with an empty pool, so it never hands out its parent's bytes.
// Thread-safe; throws std::runtime_error when no randomness is available.
#pragma once

#include <cstddef>
#include <span>
#include <string>

namespace runledger {

inline constexpr size_t kRandomPoolBytes = 4096;

void random_bytes(std::span<unsigned char> out);

// `bytes` (at most 64) random bytes as 2 × `bytes` lowercase hex digits.
std::string random_hex(size_t bytes);

}  // namespace runledger
