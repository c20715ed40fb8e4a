// The process heap (glibc malloc): how many arenas it may grow, and handing freed memory back to
// the kernel. glibc keeps freed memory in the process (RSS) and gives each thread that allocates
// at the same time as another an arena of its own (up to 8 per core); an agent with a dozen
// threads and one big list at start would otherwise keep that peak for its whole life.
// Thread-safe.
#pragma once

#include <cstddef>

namespace nodehook {

// At most `arenas` malloc arenas from now on. Call early, before threads allocate.
void LimitHeapArenas(int arenas);

// When at least `min_free_bytes` of the heap are free, returns them to the kernel (malloc_trim)
// and gives how many bytes were free; 0 when nothing was done.
size_t ReleaseFreeHeap(size_t min_free_bytes);

}  // namespace nodehook
