// Runs a lambda over task indices on the host's parallel-for (ExecuteOptions) or qdq's default
// pool: the threading the toolkit's passes share with execute().
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <type_traits>

#include "execute/thread_pool.h"
#include "qdq/qdq.hpp"

namespace qdq::exec {

// How many tasks to cut `work` units into: one below `minimum_per_task` units per thread's worth,
// else a few per thread (the host's pool decides how many run at once; 64 tasks balance it).
inline uint64_t task_count(const ParallelFor& host, uint64_t work, uint64_t minimum_per_task) {
  if (work < 2 * minimum_per_task) return 1;
  const uint64_t threads = host.run != nullptr ? 16 : static_cast<uint64_t>(default_pool()->threads());
  if (threads <= 1) return 1;
  const uint64_t most = work / minimum_per_task;
  return std::min<uint64_t>(threads * 4, most);
}

// Calls task(i) for i in [0, count), concurrently where count > 1.
template <class Task>
void parallel_tasks(const ParallelFor& host, uint64_t count, Task&& task) {
  if (count == 1) {
    task(uint64_t{0});
    return;
  }
  using Callable = std::remove_reference_t<Task>;
  auto trampoline = [](void* context, uint64_t index) { (*static_cast<Callable*>(context))(index); };
  void* context = const_cast<void*>(static_cast<const void*>(&task));
  if (host.run != nullptr) {
    host.run(host.host, trampoline, context, count);
  } else {
    default_pool()->parallel_for(trampoline, context, count);
  }
}

}  // namespace qdq::exec
