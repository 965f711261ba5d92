// The DirectML door of qdq._qdq (python/src/directml.cpp), registered by module.cpp.
#pragma once

#include <nanobind/nanobind.h>

// Adds _dml_feature_level and directml to the module; QdqError must already be registered.
void register_directml(nanobind::module_& m);
