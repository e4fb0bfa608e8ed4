#pragma once
// A GPU tier copies each weight out of the model file's read-only mapping into device memory
// once; after that the host copy only costs resident memory. giveBackPages() asks the kernel
// to reclaim the whole pages of such a range (madvise MADV_PAGEOUT): the contents stay, a page
// touched again is read back from the file. Best effort: a kernel without MADV_PAGEOUT keeps
// the pages.
#include <cstddef>
#include <cstdint>

namespace zinc::runtime {

void giveBackPages(const uint8_t* data, size_t bytes);

}  // namespace zinc::runtime
