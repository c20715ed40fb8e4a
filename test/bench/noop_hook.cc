// The cheapest possible hook for test/bench/throughput.py: exits 0 at once, without reading its
// input (the agent must cope with a hook that leaves stdin unread). Linked statically so the
// bench measures the agent's cost of a process start, not the dynamic loader's.
int main() { return 0; }
