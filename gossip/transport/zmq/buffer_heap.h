#pragma once
// ZeroMQ allocates every received message with malloc and frees it when the consumer is
// done, so a peer moving megabytes per segment asks glibc for a fresh 1 MiB buffer for each
// one. By default glibc serves such a buffer with its own mmap, or trims it off the heap
// once freed, and every reuse then costs 256 page faults and a page clearing: measured on
// loopback, a third of the ring all-reduce's bandwidth. keep_message_buffers_in_heap()
// keeps them in the heap instead (mmap only above 32 MiB, trim only beyond 512 MiB of free
// heap), once per process; elsewhere than glibc it does nothing. The ZeroMQ link calls it.
namespace starling::gossip {

void keep_message_buffers_in_heap();

}  // namespace starling::gossip
