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

// The max and the sum over each group of n consecutive threads (n a multiple of the subgroup
// size, or a subgroup holding whole groups' threads only where n >= it), as workgroupSum gives
// them where only one group's threads hold values: partials combined in subgroup order.
float groupMax(float x, uint n) {
    x = subgroupMax(x);
    if (subgroupElect()) reduceScratch_[gl_SubgroupID] = x;
    barrier();
    const uint per = max(n / gl_SubgroupSize, 1u), first = (gl_LocalInvocationID.x / n) * per;
    float m = reduceScratch_[first];
    for (uint i = 1u; i < per; ++i) m = max(m, reduceScratch_[first + i]);
    barrier();
    return m;
}
float groupSum(float x, uint n) {
    x = subgroupAdd(x);
    if (subgroupElect()) reduceScratch_[gl_SubgroupID] = x;
    barrier();
    const uint per = max(n / gl_SubgroupSize, 1u), first = (gl_LocalInvocationID.x / n) * per;
    float total = 0.0;
    for (uint i = 0u; i < per; ++i) total += reduceScratch_[first + i];
    barrier();
    return total;
}
