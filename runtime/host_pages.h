#pragma once
// A GPU tier copies each weight out of the model file's read-only mapping into device memory
// once; after that the host copy only costs resident memory. giveBackPages() unmaps the whole
// pages of such a range from this process (madvise MADV_DONTNEED on the read-only file mapping):
// the contents stay, a page touched again faults back in from the page cache. It used to be
// MADV_PAGEOUT, which may also drop them from the page cache, so that the next load of the same
// file reads it from disk again.
#include <cstddef>
#include <cstdint>

namespace zinc::runtime {

void giveBackPages(const uint8_t* data, size_t bytes);

}  // namespace zinc::runtime
