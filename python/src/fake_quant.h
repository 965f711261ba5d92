// qdq._qdq's fused fake-quant functions, added to the module by module.cpp.
#pragma once

#include <nanobind/nanobind.h>

void register_fake_quant(nanobind::module_& m);
