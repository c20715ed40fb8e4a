#include "agent/base/heap.h"

#include <malloc.h>

namespace nodehook {

void LimitHeapArenas(int arenas) { mallopt(M_ARENA_MAX, arenas); }

size_t ReleaseFreeHeap(size_t min_free_bytes) {
  struct mallinfo2 info = mallinfo2();
  // fordblks: free bytes inside the heap; mmapped blocks go back to the kernel on free anyway.
  if (info.fordblks < min_free_bytes) return 0;
  malloc_trim(0);
  return info.fordblks;
}

}  // namespace nodehook
