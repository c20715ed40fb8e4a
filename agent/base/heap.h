// The process heap: how many arenas it may grow, and handing freed memory back to the kernel.
// The agent links jemalloc (agent/app/heap_tuning.cc sets it up: one arena, no thread caches,
// freed pages returned within a second), because glibc's malloc kept about 15 MB of freed but
// resident memory with 10,000 objects: the short-lived bytes of a big list and the long-lived
// entries it leaves behind share pages, and the holes never make whole pages again
// (docs/fleet-cost.md). Tests and sanitizer builds run on glibc's malloc; these functions work
// with either, choosing at run time by whether jemalloc's mallctl is linked.
// Thread-safe.
#pragma once

#include <cstddef>

namespace nodehook {

// At most `arenas` malloc arenas from now on (glibc; jemalloc has its one from the start). Call
// early, before threads allocate.
void LimitHeapArenas(int arenas);

// When at least `min_free_bytes` of freed memory are still resident, returns them to the kernel
// (jemalloc: purges every arena's dirty pages; glibc: malloc_trim) and gives how many bytes that
// was; 0 when nothing was done.
size_t ReleaseFreeHeap(size_t min_free_bytes);

// "jemalloc" or "glibc": which allocator this process runs on.
const char* HeapAllocatorName();

}  // namespace nodehook
