// See free_memory.h.
#include "base/free_memory.h"

#include <malloc.h>

#include "base/thread_name.h"

// tcmalloc's C entry points, when tcmalloc is linked in (the binaries); null
// otherwise (tests, sanitizer builds), which use the C library's malloc.
extern "C" void MallocExtension_ReleaseFreeMemory() __attribute__((weak));
extern "C" int MallocExtension_GetNumericProperty(const char* property, size_t* value)
    __attribute__((weak));

namespace runledger {
namespace {

uint64_t tcmalloc_property(const char* name) {
  size_t v = 0;
  return MallocExtension_GetNumericProperty(name, &v) != 0 ? uint64_t{v} : 0;
}

}  // namespace

bool tcmalloc_linked() { return MallocExtension_GetNumericProperty != nullptr; }

HeapFigures heap_figures() {
  HeapFigures h;
  if (tcmalloc_linked()) {
    h.in_use_bytes = tcmalloc_property("generic.current_allocated_bytes");
    // Mapped free pages, and the free objects of the caches in front of them
    // (the unmapped pages are what a release already gave back).
    h.free_resident_bytes = tcmalloc_property("tcmalloc.pageheap_free_bytes") +
                            tcmalloc_property("tcmalloc.central_cache_free_bytes") +
                            tcmalloc_property("tcmalloc.transfer_cache_free_bytes") +
                            tcmalloc_property("tcmalloc.thread_cache_free_bytes");
    return h;
  }
  const struct mallinfo2 m = mallinfo2();
  h.in_use_bytes = m.uordblks + m.hblkhd;
  // malloc_trim gives back free pages but keeps counting their chunks as
  // free: after a release this overstates what is resident.
  h.free_resident_bytes = m.fordblks;
  return h;
}

void return_free_memory_to_the_system() {
  if (MallocExtension_ReleaseFreeMemory != nullptr) {
    MallocExtension_ReleaseFreeMemory();
  } else {
    malloc_trim(0);
  }
}

bool return_free_memory_over(uint64_t kept_bytes) {
  if (heap_figures().free_resident_bytes <= kept_bytes) return false;
  return_free_memory_to_the_system();
  return true;
}

FreeMemoryKeeper::FreeMemoryKeeper(std::chrono::milliseconds every)
    : every_(every), thread_([this] { run(); }) {}

FreeMemoryKeeper::~FreeMemoryKeeper() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

uint64_t FreeMemoryKeeper::releases() const {
  std::lock_guard lock(mu_);
  return releases_;
}

void FreeMemoryKeeper::run() {
  name_this_thread("rl-free-memory");
  std::unique_lock lock(mu_);
  while (!wake_.wait_for(lock, every_, [this] { return stopping_; })) {
    lock.unlock();
    const bool released = return_free_memory_over(kFreeBytesKept);
    lock.lock();
    if (released) ++releases_;
  }
}

}  // namespace runledger
