// glibc's heap thresholds for message buffers (gossip/transport/zmq/buffer_heap.h).
#include "gossip/transport/zmq/buffer_heap.h"

#include <mutex>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace starling::gossip {

void keep_message_buffers_in_heap() {
#if defined(__GLIBC__)
  static std::once_flag once;
  std::call_once(once, [] {
    // Setting either threshold also stops glibc's own adjustment of both.
    mallopt(M_MMAP_THRESHOLD, 32 << 20);  // glibc's ceiling for this threshold
    mallopt(M_TRIM_THRESHOLD, 512 << 20);
  });
#endif
}

}  // namespace starling::gossip
