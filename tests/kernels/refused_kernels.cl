// Kernels a launcher that fills only the kernarg pointer must refuse (code_object_test):
// one reads the hidden (implicit) arguments, one needs scratch memory.
__kernel void uses_hidden(__global int* out) {
    __constant ushort* implicit = (__constant ushort*)__builtin_amdgcn_implicitarg_ptr();
    out[0] = implicit[6];  // hidden_group_size_x
}

__kernel void uses_scratch(__global const int* index, __global float* out) {
    float table[256];
    for (int i = 0; i < 256; ++i) table[i] = out[i] * 2.0f;
    out[0] = table[index[0] & 255];
}
