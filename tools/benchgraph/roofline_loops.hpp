// The roofline's read loops: the max of n floats, each compiled for its
// ISA alone (roofline_avx512.cpp, roofline_avx2.cpp); callers pick one at
// run time. benchgraph's roofline and bench/ab_builds read with these.
#pragma once

#include <cstddef>

namespace benchgraph {

float max_f32_avx512(const float *p, size_t n);
float max_f32_avx2(const float *p, size_t n);

} // namespace benchgraph
