// The toolkit's finish stage, open to tests: the vector finish (kernels::finish_groups, with
// finish() for the groups it leaves) must give finish()'s codes bit for bit.
#pragma once

#include <cstdint>

#include "kernels/reduce.h"
#include "qdq/toolkit.hpp"

namespace qdq::internal {

// Scale and zero-point codes of groups [0, count) from their extremes under `options`' method and
// types: through the vector finish where it applies (`vector`) or through finish() alone.
Status finish_codes_for_test(const QparamsOptions& options, const kernels::GroupExtremes& extremes, uint64_t count,
                             bool vector, uint32_t* scale_codes, uint32_t* zero_point_codes);

}  // namespace qdq::internal
