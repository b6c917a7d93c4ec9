// Asks the kernel for transparent huge pages under tcmalloc's heap.
//
// Why: on the virtual machines runledger was measured on, a first touch of
// a 4 KiB page costs about 14 µs, and the writer touches fresh memory all
// the time while a process is young: each event lands in RocksDB's memtable
// arena. A W1 run of 440,000 commands took 36,000 page faults (144 MB),
// about a tenth of its CPU; with the heap advised MADV_HUGEPAGE, 2,100.
// Later, the arenas of flushed memtables are reused and faults are rarer.
//
// The kernel decides: with /sys/kernel/mm/transparent_hugepage/enabled at
// "never" the advice is ignored, at "madvise" it is followed for this heap,
// and at "always" it is the case already.
//
// Linked into runledgerd and runledger only when they allocate through
// tcmalloc (CMakeLists.txt); it installs itself before main() runs, and
// what was allocated before keeps its small pages.
#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <new>

#include <gperftools/malloc_extension.h>

namespace runledger {
namespace {

constexpr uintptr_t kSmallPage = 4096;
constexpr size_t kHugePage = size_t{2} << 20;

// Grows the heap as tcmalloc's own system allocator does, then advises
// huge pages for what it got.
class HugePageHeap final : public SysAllocator {
 public:
  explicit HugePageHeap(SysAllocator* next) : next_(next) {}

  // In whole huge pages: a huge page is only mapped where its whole 2 MiB
  // lies in advised memory when first touched, and the heap grows by less.
  void* Alloc(size_t size, size_t* actual_size, size_t alignment) override {
    if (size <= SIZE_MAX - kHugePage) {  // else the request fails as it is
      size = (size + kHugePage - 1) & ~(kHugePage - 1);
      if (alignment < kHugePage) alignment = kHugePage;
    }
    void* p = next_->Alloc(size, actual_size, alignment);
    if (p != nullptr) {
      const uintptr_t begin = (reinterpret_cast<uintptr_t>(p) + kSmallPage - 1) & ~(kSmallPage - 1);
      const uintptr_t end = (reinterpret_cast<uintptr_t>(p) + *actual_size) & ~(kSmallPage - 1);
      // Advice only: where the kernel refuses it, the memory still works.
      if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
    }
    return p;
  }

 private:
  SysAllocator* const next_;
};

struct Install {
  Install() {
    MallocExtension* m = MallocExtension::instance();
    SysAllocator* current = m->GetSystemAllocator();
    if (current == nullptr) return;
    // Never destroyed: tcmalloc may grow its heap while other statics are
    // destroyed at exit.
    alignas(HugePageHeap) static unsigned char storage[sizeof(HugePageHeap)];
    m->SetSystemAllocator(new (storage) HugePageHeap(current));
  }
};

const Install installed;

}  // namespace
}  // namespace runledger
