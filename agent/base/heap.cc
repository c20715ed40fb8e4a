#include "agent/base/heap.h"

#include <malloc.h>

#include <cstdint>

// jemalloc's control interface; null unless the executable links jemalloc (weak: tests and
// sanitizer builds do not, and ASan brings its own malloc).
extern "C" int mallctl(const char* name, void* oldp, size_t* oldlenp, void* newp, size_t newlen)
    __attribute__((weak));

namespace nodehook {
namespace {

// MALLCTL_ARENAS_ALL in jemalloc 5: the statistics and purge of every arena at once.
constexpr const char* kAllArenasDirtyPages = "stats.arenas.4096.pdirty";
constexpr const char* kPurgeAllArenas = "arena.4096.purge";

size_t JemallocDirtyBytes() {
  uint64_t epoch = 1;  // statistics are a snapshot taken when the epoch advances
  size_t size = sizeof(epoch);
  if (mallctl("epoch", &epoch, &size, &epoch, size) != 0) return 0;
  size_t pages = 0;
  size = sizeof(pages);
  if (mallctl(kAllArenasDirtyPages, &pages, &size, nullptr, 0) != 0) return 0;
  size_t page = 0;
  size = sizeof(page);
  if (mallctl("arenas.page", &page, &size, nullptr, 0) != 0) return 0;
  return pages * page;
}

}  // namespace

void LimitHeapArenas(int arenas) {
  if (mallctl == nullptr) mallopt(M_ARENA_MAX, arenas);
}

size_t ReleaseFreeHeap(size_t min_free_bytes) {
  if (mallctl != nullptr) {
    size_t dirty = JemallocDirtyBytes();
    if (dirty < min_free_bytes || mallctl(kPurgeAllArenas, nullptr, nullptr, nullptr, 0) != 0) return 0;
    return dirty;
  }
  struct mallinfo2 info = mallinfo2();
  // fordblks: free bytes inside the heap; mmapped blocks go back to the kernel on free anyway.
  if (info.fordblks < min_free_bytes) return 0;
  malloc_trim(0);
  return info.fordblks;
}

const char* HeapAllocatorName() { return mallctl != nullptr ? "jemalloc" : "glibc"; }

}  // namespace nodehook
