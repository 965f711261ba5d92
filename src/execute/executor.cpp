// execute(): checks the output buffer, cuts the plan into element ranges for the threads, and
// runs each range through the SIMD kernels, which cover every plan a front door makes
// (tests/kernel_coverage_test.cpp). ExecutionPath::kReference runs the scalar reference's own
// coordinate walk instead.
#include <algorithm>
#include <cstring>
#include <string>

#include "execute/by_table.h"
#include "execute/execute.h"
#include "execute/gathered.h"
#include "execute/runs.h"
#include "execute/short_rows.h"
#include "execute/thread_pool.h"
#include "kernels/kernels.h"
#include "plan/checks.h"
#include "qdq/qdq.hpp"
#include "reference/reference.h"
#include "types/codec.h"

namespace qdq {
namespace {

// Below twice this many elements a call stays on one thread: waking sleeping workers costs more
// than it saves. Workers poll for 100 us after a job (thread_pool.cpp), so back-to-back calls
// find them awake, and a smaller minimum measured faster alone: at 2^15, 64K elements of DQ
// uint8 -> float32 took 8.9 us instead of 16.7 (AVX2, 2 threads, C++ loop). But in a process
// that also runs ONNX Runtime, whose pool threads spin after each run, two tasks took 16.4-41 us
// against one thread's 15.8-28 (Python, best of 5 after each ORT run, twelve trials), and the
// 64K rows of compare.py's table scattered by up to 3x. So 64K stays on one thread.
constexpr uint64_t kMinElementsPerTask = uint64_t{1} << 16;
// Task boundaries are multiples of this, so that packed outputs never share a byte across tasks.
constexpr uint64_t kTaskAlignment = 64;

struct Ranges {
  void (*range)(void* context, uint64_t begin, uint64_t end);
  void* context;
  uint64_t count;
  uint64_t task_size;
};

void run_task(void* context, uint64_t task) {
  const Ranges& ranges = *static_cast<const Ranges*>(context);
  const uint64_t begin = task * ranges.task_size;
  const uint64_t end = std::min(ranges.count, begin + ranges.task_size);
  if (begin < end) ranges.range(ranges.context, begin, end);
}

}  // namespace

namespace exec {

Status check_output(const std::string& op, std::string_view role, ElementType type, std::span<const int64_t> shape,
                    uint64_t element_count, const MutableTensorView& y) {
  if (y.type != type) {
    const std::string given = find_element_type_info(y.type) != nullptr
                                  ? std::string(name(y.type))
                                  : "unknown code " + std::to_string(static_cast<int64_t>(y.type));
    return Status::invalid_argument(op + ": " + std::string(role) + " has type " + given + " but the operator produces " +
                                    std::string(name(type)));
  }
  if (!std::equal(y.shape.begin(), y.shape.end(), shape.begin(), shape.end())) {
    return Status::invalid_argument(op + ": " + std::string(role) + " has shape " + plan::shape_string(y.shape) +
                                    " but the output has x's shape " + plan::shape_string(shape));
  }
  if (element_count > 0 && y.data == nullptr) {
    return Status::invalid_argument(op + ": " + std::string(role) + " is null but the output has " +
                                    std::to_string(element_count) + " elements");
  }
  return {};
}

Status check_output(const Plan& plan, const MutableTensorView& y) {
  return check_output(plan.operator_name, "output buffer", plan.output_type, plan.shape, plan.element_count, y);
}

void run_ranges(uint64_t count, const ParallelFor& host, void (*range)(void* context, uint64_t begin, uint64_t end),
                void* context) {
  Ranges ranges{range, context, count, count};
  std::shared_ptr<ThreadPool> pool;
  uint64_t threads = 1;
  if (host.run != nullptr) {
    threads = 64;  // the host decides how many run at once; offer enough tasks to balance
  } else if (count >= 2 * kMinElementsPerTask) {
    pool = default_pool();
    threads = static_cast<uint64_t>(pool->threads());
  }
  uint64_t tasks = 1;
  if (threads > 1 && count >= 2 * kMinElementsPerTask) {
    // A few tasks per thread evens out uneven progress; never tasks smaller than the minimum.
    tasks = std::min(threads * 4, count / kMinElementsPerTask);
    uint64_t size = (count + tasks - 1) / tasks;
    size = (size + kTaskAlignment - 1) / kTaskAlignment * kTaskAlignment;
    ranges.task_size = size;
    tasks = (count + size - 1) / size;
  }
  if (tasks == 1) {
    range(context, 0, count);
  } else if (host.run != nullptr) {
    host.run(host.host, &run_task, &ranges, tasks);
  } else {
    pool->parallel_for(&run_task, &ranges, tasks);
  }
}

}  // namespace exec

Status execute(const Plan& plan, const MutableTensorView& y, const ExecuteOptions& options) {
  if (Status s = exec::check_output(plan, y); !s.ok()) return s;
  if (plan.element_count == 0) return {};
  if (info(plan.output_type).is_packed() && y.layout == SubByteLayout::kPacked) {
    // Padding bits of a partly used last byte are zeros, as ONNX packs them; every path stores
    // elements read-modify-write, so the zeros stay.
    static_cast<unsigned char*>(y.data)[storage_bytes(plan.output_type, plan.element_count) - 1] = 0;
  }
  if (options.path == ExecutionPath::kReference) {
    reference::execute(plan, y.data, y.layout);
    return {};
  }
  if (!kernels::covers(plan)) {
    return Status::internal(plan.operator_name + ": no kernel runs x " + std::string(name(plan.x.type)) +
                            " scale " + std::string(name(plan.scale.type)) + " -> " +
                            std::string(name(plan.output_type)) + " (a planner accepted what no kernel covers)");
  }
  if (exec::execute_by_table(plan, y, options.parallel_for)) return {};
  struct Job {
    const Plan* plan;
    Layout canonical;
    MutableTensorView y;
    bool gathered = false;  // a strided x or y (DirectML descriptions)
    exec::StridedWalk walk;
    const exec::RowGroups* groups = nullptr;  // short rows in groups: periodic runs, one a plane
  } job{&plan, exec::canonical_layout(plan.layout), y, false, {}};
  exec::TiledOperands tiled;
  exec::RowGroups groups;
  if (!plan.x_strides.empty() || !plan.y_strides.empty()) {
    job.gathered = true;
    job.walk = exec::strided_walk(plan);
  } else if (exec::tile_short_rows(plan, job.canonical, &tiled)) {
    job.plan = &tiled.plan;
    job.canonical = tiled.layout;
  } else if (exec::group_short_rows(plan, job.canonical, &groups)) {
    job.groups = &groups;
  }
  exec::run_ranges(
      plan.element_count, options.parallel_for,
      [](void* context, uint64_t begin, uint64_t end) {
        const Job& j = *static_cast<const Job*>(context);
        if (j.gathered) {
          exec::execute_gathered_range(*j.plan, j.walk, begin, end, j.y.data);
        } else if (j.groups != nullptr) {
          kernels::RangeBuffers periodic;
          periodic.row_groups = true;
          periodic.rows_per_block = static_cast<uint64_t>(j.groups->rows_per_block);
          kernels::execute_range(*j.plan, j.canonical, begin, end, j.y, periodic);
        } else {
          kernels::execute_range(*j.plan, j.canonical, begin, end, j.y);
        }
      },
      &job);
  return {};
}

void parallel_copy(void* destination, const void* source, uint64_t bytes) {
  struct Copy {
    unsigned char* destination;
    const unsigned char* source;
    uint64_t bytes;
    uint64_t task_size;
  };
  std::shared_ptr<exec::ThreadPool> pool = exec::default_pool();
  const uint64_t threads = static_cast<uint64_t>(pool->threads());
  const uint64_t tasks = bytes >= 2 * kMinElementsPerTask ? std::min(threads * 4, bytes / kMinElementsPerTask) : 1;
  Copy copy{static_cast<unsigned char*>(destination), static_cast<const unsigned char*>(source), bytes,
            (bytes + tasks - 1) / tasks};
  pool->parallel_for(
      [](void* context, uint64_t task) {
        const Copy& c = *static_cast<const Copy*>(context);
        const uint64_t begin = task * c.task_size;
        const uint64_t end = std::min(c.bytes, begin + c.task_size);
        if (begin < end) std::memcpy(c.destination + begin, c.source + begin, end - begin);
      },
      &copy, tasks);
}

std::vector<std::string> simd_targets() {
  std::vector<std::string> names;
  for (int64_t target : kernels::supported_targets()) names.push_back(kernels::target_name(target));
  return names;
}

std::string active_simd_target() {
  const std::vector<int64_t> targets = kernels::supported_targets();
  return targets.empty() ? std::string("none") : kernels::target_name(targets.front());
}

}  // namespace qdq
