// Every zinc-rt GPU kernel in one translation unit: compiled by clang-19 into one code
// object per gfx target at build time, and built from this same text by PoCL at run time.
#include "embed.cl"
#include "norm.cl"
#include "rope.cl"
#include "quantize.cl"
#include "matvec.cl"
#include "weight_types.cl"
#include "attention.cl"
#include "elementwise.cl"
#include "moe.cl"
#include "argmax.cl"
#include "sample.cl"
#include "deltanet.cl"
