#pragma once
// What the compute units' caches may still hold an old copy of. On RDNA3 a global load reads
// through GL0 (per CU) and GL1 (per shader array), a scalar load through the scalar cache (GLK)
// and GL1; none of them snoops another CU's stores or the CP's writes. So memory written by a
// finished dispatch, or by the CP (WRITE_DATA, COPY_DATA, RELEASE_MEM data), is stale to later
// dispatches until an ACQUIRE_MEM/RELEASE_MEM invalidates those caches (GCR_CNTL GLV_INV/GLK_INV,
// with GL1_INV on gfx11; RDNA4 has no GL1). Sources: AMD "RDNA3 Instruction Set Architecture
// Reference Guide" §"Memory Model"/"Caches", PAL Gfx10AcquireMemGcrCntl.
//
// The model is adversarial, as a cache that happened to hold every line would be: a read of a
// stale byte returns kPoison, deterministically. Writes count from the end of their dispatch; a
// dispatch always sees its own stores. Writes by the host through a mapping are not tracked
// (the plan's first ACQUIRE_MEM invalidates everything anyway).
#include <cstddef>
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

namespace zinc::kfd::isa {

// Byte ranges [lo, hi) a dispatch's stores covered, in the order the stores ran.
using WrittenRanges = std::vector<std::pair<uint64_t, uint64_t>>;

class StaleMemory {
public:
    // [lo, hi) was written where the caches do not see it: stale to both kinds of load.
    void wrote(uint64_t lo, uint64_t hi);
    void wrote(WrittenRanges ranges);  // a finished dispatch's stores
    void invalidate(bool vector, bool scalar);

    bool anyVector() const { return !vector_.empty(); }
    bool anyScalar() const { return !scalar_.empty(); }
    bool vectorStale(uint64_t lo, uint64_t hi) const { return overlaps(vector_, lo, hi); }
    bool scalarStale(uint64_t lo, uint64_t hi) const { return overlaps(scalar_, lo, hi); }
    size_t vectorRanges() const { return vector_.size(); }

private:
    using Ranges = std::map<uint64_t, uint64_t>;  // lo -> hi; disjoint, not touching
    static void add(Ranges& ranges, uint64_t lo, uint64_t hi);
    static bool overlaps(const Ranges& ranges, uint64_t lo, uint64_t hi);
    Ranges vector_, scalar_;
};

}  // namespace zinc::kfd::isa
