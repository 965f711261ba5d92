// Execution of the fused fake-quant. Most plans run one kernel that computes the codes and their
// dequantized values in the same lanes (kernels::covers_fake_quant). The others walk each task's
// range in chunks small enough for the caches: a chunk goes through the quantize kernel into a
// per-task code buffer and at once through the dequantize kernel into y. Either way x is read
// from memory once and y written once. The straight-through mask is a third kernel run over each
// chunk while its x is still cached, or, in the one-kernel case, comes from the same lanes.
#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "execute/execute.h"
#include "execute/runs.h"
#include "execute/short_rows.h"
#include "kernels/kernels.h"
#include "qdq/fake_quant.hpp"

namespace qdq {
namespace {

// Elements per chunk: x (4 bytes each at most), the codes (at most 4) and y (at most 4) of one
// chunk take 96 KiB, within a core's L2. A multiple of the kernels' 1024-element blocks.
constexpr uint64_t kChunk = 8192;

struct Job {
  const QuantizeDequantizePlan* plan;
  Layout quantize_layout, dequantize_layout;
  MutableTensorView y;
  const MutableTensorView* mask;
  size_t code_bytes;  // per element in the buffer (sub-byte codes: one per byte)
  bool in_lanes;      // one kernel computes y from x (kernels::covers_fake_quant)
  // Short rows whose operands repeat within groups of rows (exec::group_short_rows): both plans
  // run as periodic runs, whose operands the kernels make from each group's row; rows_per_block
  // as exec::RowGroups has it (the two plans' layouts are the same).
  bool row_groups = false;
  uint64_t rows_per_block = 0;
};

// The buffers of a kernel run over the job's layouts: periodic runs where the rows are grouped.
kernels::RangeBuffers buffers_of(const Job& job) {
  kernels::RangeBuffers buffers;
  buffers.row_groups = job.row_groups;
  buffers.rows_per_block = job.rows_per_block;
  return buffers;
}

// Elements [first, last) of the straight-through mask (x is still in the cache from y's pass).
void run_mask(const Job& job, const Plan& quantize, const Layout& quantize_layout, uint64_t first, uint64_t last) {
  kernels::RangeBuffers mask = buffers_of(job);
  mask.range_mask = true;
  kernels::execute_range(quantize, quantize_layout, first, last, *job.mask, mask);
}

// Elements [first, last) of y (and of the mask) from the two plans over their layouts; `codes`
// holds kChunk codes where the plans do not run in lanes.
void run_chunk(const Job& job, const Plan& quantize, const Layout& quantize_layout, const Plan& dequantize,
               const Layout& dequantize_layout, uint64_t first, uint64_t last, unsigned char* codes) {
  if (job.in_lanes) {  // the codes never leave the registers; the mask comes from the same lanes
    kernels::RangeBuffers fused = buffers_of(job);
    fused.fused_dequantize = &dequantize;
    if (job.mask != nullptr) fused.fused_mask = static_cast<uint8_t*>(job.mask->data);
    kernels::execute_range(quantize, quantize_layout, first, last, job.y, fused);
    return;
  }
  const MutableTensorView code_view{quantize.output_type, quantize.shape, codes, SubByteLayout::kOneCodePerByte};
  kernels::RangeBuffers into_codes = buffers_of(job);
  into_codes.y_first = first;
  into_codes.allow_streaming = false;
  kernels::execute_range(quantize, quantize_layout, first, last, code_view, into_codes);
  kernels::RangeBuffers from_codes = buffers_of(job);
  from_codes.x_data = codes;
  from_codes.x_first = first;
  kernels::execute_range(dequantize, dequantize_layout, first, last, job.y, from_codes);
  if (job.mask != nullptr) run_mask(job, quantize, quantize_layout, first, last);
}

void run_range(void* context, uint64_t begin, uint64_t end) {
  const Job& job = *static_cast<const Job*>(context);
  const Plan& quantize = job.plan->quantize;
  const Plan& dequantize = job.plan->dequantize;
  const std::unique_ptr<unsigned char[]> codes(job.in_lanes ? nullptr : new unsigned char[kChunk * job.code_bytes]);
  if (job.in_lanes) {
    run_chunk(job, quantize, job.quantize_layout, dequantize, job.dequantize_layout, begin, end, nullptr);
  } else {
    for (uint64_t first = begin; first < end; first += kChunk) {
      run_chunk(job, quantize, job.quantize_layout, dequantize, job.dequantize_layout, first,
                std::min(end, first + kChunk), codes.get());
    }
  }
}

// The two scalar reference operators composed through a whole code tensor.
Status execute_reference(const QuantizeDequantizePlan& plan, const MutableTensorView& y) {
  const ElementType code_type = plan.quantize.output_type;
  std::vector<unsigned char> codes(storage_bytes(code_type, plan.element_count));
  ExecuteOptions reference;
  reference.path = ExecutionPath::kReference;
  if (Status s = execute(plan.quantize, {code_type, plan.shape, codes.data()}, reference); !s.ok()) return s;
  Plan dequantize = plan.dequantize;
  dequantize.x.data = codes.data();
  dequantize.x.layout = SubByteLayout::kPacked;
  return execute(dequantize, y, reference);
}

}  // namespace

Status execute(const QuantizeDequantizePlan& plan, const MutableTensorView& y, const MutableTensorView* mask,
               const ExecuteOptions& options) {
  const std::string& op = plan.operator_name;
  if (Status s = exec::check_output(op, "output buffer", plan.output_type, plan.shape, plan.element_count, y); !s.ok()) {
    return s;
  }
  if (mask != nullptr) {
    if (Status s = exec::check_output(op, "mask", ElementType::kUint8, plan.shape, plan.element_count, *mask); !s.ok()) {
      return s;
    }
    if (!kernels::covers_range_mask(plan.quantize)) {
      return Status::invalid_argument(op + ": no straight-through mask for " +
                                      std::string(name(plan.quantize.output_type)) +
                                      " codes (the mask covers every ONNX type and Quark's 8- and 16-bit ones)");
    }
    if (options.path == ExecutionPath::kReference) {
      return Status::invalid_argument(op + ": the reference path composes the two operators and has no mask; "
                                           "use ExecutionPath::kAuto for one");
    }
  }
  if (plan.element_count == 0) return {};
  if (options.path == ExecutionPath::kReference) return execute_reference(plan, y);
  if (!kernels::covers(plan.quantize) || !kernels::covers(plan.dequantize)) {
    return Status::internal(op + ": no kernel runs it (a planner accepted what no kernel covers)");
  }
  Job job{&plan,
          exec::canonical_layout(plan.quantize.layout),
          exec::canonical_layout(plan.dequantize.layout),
          y,
          mask,
          static_cast<size_t>(info(plan.quantize.output_type).bytes_per_element()),
          kernels::covers_fake_quant(plan.quantize)};
  // Short rows: both plans on tiled operands, or both as periodic runs (the same decision for
  // both, as their layouts are the same), as execute() does.
  QuantizeDequantizePlan tiled_pair;
  exec::TiledOperands tiled_quantize, tiled_dequantize;
  exec::RowGroups quantize_groups, dequantize_groups;
  if (exec::tile_short_rows(plan.quantize, job.quantize_layout, &tiled_quantize) &&
      exec::tile_short_rows(plan.dequantize, job.dequantize_layout, &tiled_dequantize)) {
    tiled_pair = plan;  // every field, then the two plans on their tiles
    tiled_pair.quantize = std::move(tiled_quantize.plan);
    tiled_pair.dequantize = std::move(tiled_dequantize.plan);
    job.plan = &tiled_pair;
    job.quantize_layout = tiled_quantize.layout;
    job.dequantize_layout = tiled_dequantize.layout;
  } else if (exec::group_short_rows(plan.quantize, job.quantize_layout, &quantize_groups) &&
             exec::group_short_rows(plan.dequantize, job.dequantize_layout, &dequantize_groups)) {
    job.row_groups = true;
    job.rows_per_block = static_cast<uint64_t>(quantize_groups.rows_per_block);
  }
  exec::run_ranges(plan.element_count, options.parallel_for, &run_range, &job);
  return {};
}

}  // namespace qdq
