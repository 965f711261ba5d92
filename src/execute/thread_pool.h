// qdq's default thread pool: a fixed set of workers that a parallel-for hands task indices to.
// Hosts with their own pool (ONNX Runtime) bypass it through ParallelFor in ExecuteOptions.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace qdq::exec {

class ThreadPool {
 public:
  explicit ThreadPool(int threads);  // total threads including the caller's
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int threads() const { return static_cast<int>(workers_.size()) + 1; }

  // Runs task(context, i) for i in [0, count) on the workers and the calling thread; returns when
  // all have finished.
  void parallel_for(void (*task)(void* context, uint64_t index), void* context, uint64_t count);

 private:
  struct Job;
  void work();
  static void drain(Job& job);

  std::vector<std::thread> workers_;
  std::mutex call_mutex_;  // one parallel_for at a time
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable done_;
  std::atomic<uint64_t> generation_{0};  // written under mutex_, also polled without it
  std::atomic<bool> stopping_{false};
  std::shared_ptr<Job> job_;  // the current job; a worker that wakes late holds an exhausted one
};

// The process-wide default pool, sized by set_num_threads / QDQ_NUM_THREADS / the core count.
std::shared_ptr<ThreadPool> default_pool();

}  // namespace qdq::exec
