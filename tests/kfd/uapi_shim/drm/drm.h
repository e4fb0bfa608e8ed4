// Stand-in for libdrm's <drm/drm.h>, which Debian's <linux/kfd_ioctl.h> includes only for the
// __u32/__u64 types. This machine has linux-libc-dev (the KFD header) but not libdrm-dev; the
// uapi test compiles Debian's KFD header as an independent reference, so it needs no more.
#pragma once
#include <linux/types.h>
