#include "execute/thread_pool.h"

#include <atomic>
#include <chrono>
#include <cstdlib>
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#include "qdq/qdq.hpp"

namespace qdq::exec {
namespace {

// How long a thread polls before it sleeps: a worker for the next job, the caller for the last
// task. Calls that follow each other closely (a model's layers, a benchmark) then skip the
// futex wake-up, tens of microseconds each way; an idle pool still sleeps.
constexpr std::chrono::microseconds kSpinTime{100};

void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#else
  std::this_thread::yield();
#endif
}

// Polls ready() for up to kSpinTime; true when it became true.
template <typename Ready>
bool spin_until(Ready ready) {
  const auto deadline = std::chrono::steady_clock::now() + kSpinTime;
  for (;;) {
    for (int i = 0; i < 64; ++i) {
      if (ready()) return true;
      cpu_relax();
    }
    if (std::chrono::steady_clock::now() >= deadline) return ready();
  }
}

}  // namespace

struct ThreadPool::Job {
  void (*task)(void*, uint64_t) = nullptr;
  void* context = nullptr;
  uint64_t count = 0;
  std::atomic<uint64_t> next{0};
  std::atomic<uint64_t> finished{0};
};

ThreadPool::ThreadPool(int threads) {
  for (int i = 1; i < threads; ++i) workers_.emplace_back([this] { work(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (std::thread& worker : workers_) worker.join();
}

void ThreadPool::drain(Job& job) {
  for (uint64_t i = job.next.fetch_add(1); i < job.count; i = job.next.fetch_add(1)) {
    job.task(job.context, i);
    job.finished.fetch_add(1);
  }
}

void ThreadPool::work() {
  uint64_t seen = 0;
  for (;;) {
    std::shared_ptr<Job> job;
    spin_until([&] { return generation_.load(std::memory_order_acquire) != seen || stopping_.load(); });
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || generation_ != seen; });
      if (stopping_) return;
      seen = generation_;
      job = job_;
    }
    drain(*job);
    if (job->finished.load() == job->count) {
      std::lock_guard<std::mutex> lock(mutex_);  // pairs with the waiter's predicate check
      done_.notify_all();
    }
  }
}

void ThreadPool::parallel_for(void (*task)(void*, uint64_t), void* context, uint64_t count) {
  if (count == 0) return;
  if (workers_.empty() || count == 1) {
    for (uint64_t i = 0; i < count; ++i) task(context, i);
    return;
  }
  std::lock_guard<std::mutex> call(call_mutex_);
  auto job = std::make_shared<Job>();
  job->task = task;
  job->context = context;
  job->count = count;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    job_ = job;
    ++generation_;
  }
  wake_.notify_all();
  drain(*job);
  if (spin_until([&] { return job->finished.load() == count; })) return;
  std::unique_lock<std::mutex> lock(mutex_);
  done_.wait(lock, [&] { return job->finished.load() == count; });
}

namespace {

std::mutex g_pool_mutex;
std::shared_ptr<ThreadPool> g_pool;
int g_requested_threads = 0;  // 0: QDQ_NUM_THREADS or the hardware count

int resolved_thread_count() {
  if (g_requested_threads > 0) return g_requested_threads;
  if (const char* env = std::getenv("QDQ_NUM_THREADS")) {
    const int value = std::atoi(env);
    if (value > 0 && value <= 1024) return value;
  }
  const unsigned hardware = std::thread::hardware_concurrency();
  return hardware > 0 ? static_cast<int>(hardware) : 1;
}

}  // namespace

std::shared_ptr<ThreadPool> default_pool() {
  std::lock_guard<std::mutex> lock(g_pool_mutex);
  if (!g_pool || g_pool->threads() != resolved_thread_count()) {
    g_pool = std::make_shared<ThreadPool>(resolved_thread_count());
  }
  return g_pool;
}

}  // namespace qdq::exec

namespace qdq {

void set_num_threads(int threads) {
  std::lock_guard<std::mutex> lock(exec::g_pool_mutex);
  exec::g_requested_threads = threads > 0 ? std::min(threads, 1024) : 0;
}

int num_threads() {
  std::lock_guard<std::mutex> lock(exec::g_pool_mutex);
  return exec::resolved_thread_count();
}

}  // namespace qdq
