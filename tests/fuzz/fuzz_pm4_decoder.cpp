// Arbitrary dwords as a PM4 stream, decoded for gfx11 and gfx12 and formatted as `zinc-rt pm4
// decode` prints them. The decoder must stay inside the span (ASan), and what it reports must
// add up: without an error the packets cover the stream exactly; with one, the error sits where
// the decoded packets end.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "pm4/decoder.h"

using namespace zinc::pm4;

namespace {

void check(bool ok, const char* what) {
    if (ok) return;
    std::fprintf(stderr, "fuzz_pm4_decoder: %s\n", what);
    std::abort();
}

void decodeAs(std::span<const uint32_t> stream, Gfx gfx) {
    const Decoded d = decode(stream, gfx);
    uint64_t covered = 0;
    for (const DecodedPacket& p : d.packets) {
        check(p.view.offset == covered, "packets are not contiguous");
        check(p.view.dwords >= 1 && p.view.body.size() + 1 == p.view.dwords, "body length differs from the header's");
        covered += p.view.dwords;
    }
    check(covered <= stream.size(), "packets run past the stream");
    if (d.error) {
        check(d.error->offset == covered, "the error is not where decoding stopped");
        (void)d.error->describe();
    } else {
        check(covered == stream.size(), "no error, yet the packets do not cover the stream");
    }
    (void)formatStream(d, gfx);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::vector<uint32_t> dwords(size / 4);
    if (!dwords.empty()) std::memcpy(dwords.data(), data, dwords.size() * 4);
    decodeAs(dwords, Gfx::Gfx11);
    decodeAs(dwords, Gfx::Gfx12);
    return 0;
}
