// Workgroup reductions that hold for any subgroup size (lavapipe 8, NVIDIA 32, RADV 32/64):
// each subgroup reduces in registers, then every thread adds the per-subgroup partials.
shared float reduceScratch_[128];

float workgroupSum(float x) {
    x = subgroupAdd(x);
    if (subgroupElect()) reduceScratch_[gl_SubgroupID] = x;
    barrier();
    float total = 0.0;
    for (uint i = 0; i < gl_NumSubgroups; ++i) total += reduceScratch_[i];
    barrier();
    return total;
}

// The max (takeMax) or the sum over each group of n consecutive threads (n a multiple of the
// subgroup size, or a subgroup holding whole groups' threads only where n >= it), as
// workgroupSum gives them where only one group's threads hold values: partials combined in
// subgroup order (a sum from 0.0, a max from the first partial). takeMax is a constant at
// every call, so each caller's code keeps only its own operation.
float groupReduce(float x, uint n, bool takeMax) {
    x = takeMax ? subgroupMax(x) : subgroupAdd(x);
    if (subgroupElect()) reduceScratch_[gl_SubgroupID] = x;
    barrier();
    const uint per = max(n / gl_SubgroupSize, 1u), first = (gl_LocalInvocationID.x / n) * per;
    float r = takeMax ? reduceScratch_[first] : 0.0;
    for (uint i = takeMax ? 1u : 0u; i < per; ++i) r = takeMax ? max(r, reduceScratch_[first + i]) : r + reduceScratch_[first + i];
    barrier();
    return r;
}
float groupMax(float x, uint n) { return groupReduce(x, n, true); }
float groupSum(float x, uint n) { return groupReduce(x, n, false); }
