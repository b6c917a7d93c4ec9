// Gives the memory the allocator holds free back to the system. The
// allocator keeps what big replies freed for reuse, so after a burst of big
// reads the process would stay as large as at the burst's peak for as long
// as it runs (docs/operations.md, "Limits": the reply budget). Works with
// tcmalloc (runledgerd's allocator) and with the C library's malloc.
#pragma once

#include <cstddef>

namespace runledger::http {

// Reply bytes written since the last release after which, once no reply is
// in flight, the free memory is given back.
inline constexpr size_t kReplyBytesBeforeRelease = size_t{64} << 20;

// Takes tens of milliseconds for hundreds of MB: not on the event loop.
void return_free_memory_to_the_system();

}  // namespace runledger::http
