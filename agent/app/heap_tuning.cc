// jemalloc's options for the agent, read by jemalloc at its first allocation (agent/base/heap.h
// says why the agent links it). Compiled into the executable only when it links jemalloc.
//   narenas:1         one arena: a dozen mostly idle threads, no allocation-heavy parallel work
//   tcache:false      no per-thread caches, which would each keep freed blocks resident
//   dirty_decay_ms    freed pages go back to the kernel within a second (the housekeeping loop
//   muzzy_decay_ms    also purges them after a big list: ReleaseFreeHeap)
// The replay benchmark measured the same CPU per change with these as with glibc's malloc.
extern "C" {
// NOLINTNEXTLINE(cppcoreguidelines-avoid-non-const-global-variables): jemalloc reads this symbol
const char* malloc_conf = "narenas:1,tcache:false,dirty_decay_ms:1000,muzzy_decay_ms:0";
}
