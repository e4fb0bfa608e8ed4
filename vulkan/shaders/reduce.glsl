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
