// The qdq command's own definition of hwy::platform::TimerResolution, to keep Highway's benchmark
// timer out of the command's start.
//
// libhwy 1.0.3 (Debian 12's libhwy1) calls TimerResolution() from a static initializer when the
// library is loaded: its nanobenchmark caches the timer's resolution in a namespace-scope variable,
// measured by spinning on the timer. That took 2.5 ms of every process that loads libhwy.so here, 60%
// of `qdq --version` (4.2 ms, against 1.2 ms for an empty C++ program; a program that only links
// libhwy took 3.7). Highway made the variable a lazy local in 2025 (google/highway pull request
// 2440), after the release Debian 12 ships.
//
// libhwy's initializer reaches the function through its PLT, so a definition in the executable
// takes its place: the linker exports this one because libhwy.so references the symbol, and the
// dynamic linker binds libhwy's call to the executable first. qdq never measures with Highway's
// nanobenchmark (the only user of the value), so the command returns a resolution of one tick
// without measuring it. A libhwy without the initializer never calls this; one without the function
// leaves it unused. python/tests/test_cli.py checks the binding with LD_DEBUG.
#include <cstdint>

#include "hwy/nanobenchmark.h"  // the declaration: a libhwy that changes the signature fails to compile here

namespace hwy::platform {

uint64_t TimerResolution() { return 1; }

}  // namespace hwy::platform
