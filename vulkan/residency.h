#pragma once
// How many workgroups of one pipeline a device runs at once: its compute units (DeviceCaps)
// times the workgroups a unit holds, which the pipeline's registers, threads and shared memory
// decide (its compiler statistics). Dispatches sized to it run in one wave: split attention
// takes as many splits as fit (op_attention.cpp), where a split past them would wait for a
// first wave to finish.
#include <cstdint>
#include <vector>

#include "vulkan/vk_device.h"
#include "vulkan/vk_pipeline.h"

namespace zinc::vk {

// Workgroups of `threads` threads resident at once; 0 where the device does not say its units
// (caps.computeUnits) or the statistics lack what the units are limited by.
uint32_t residentWorkgroups(const DeviceCaps& caps, const std::vector<PipelineStatistic>& stats, uint32_t threads);

}  // namespace zinc::vk
