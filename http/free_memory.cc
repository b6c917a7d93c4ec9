// See free_memory.h.
#include "http/free_memory.h"

#include <malloc.h>

// tcmalloc's C entry point, when tcmalloc is linked in (the binaries);
// null otherwise (tests, sanitizer builds), which use malloc_trim.
extern "C" void MallocExtension_ReleaseFreeMemory() __attribute__((weak));

namespace runledger::http {

void return_free_memory_to_the_system() {
  if (MallocExtension_ReleaseFreeMemory != nullptr) {
    MallocExtension_ReleaseFreeMemory();
  } else {
    malloc_trim(0);
  }
}

}  // namespace runledger::http
