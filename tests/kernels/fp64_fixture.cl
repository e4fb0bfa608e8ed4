// A kernel with fp64 arithmetic: no_fp64.py must name it (its own check that it can fail).
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
__kernel void uses_fp64(__global float* x) { x[0] = (float)((double)x[0] * (double)x[1] + 1.0); }
