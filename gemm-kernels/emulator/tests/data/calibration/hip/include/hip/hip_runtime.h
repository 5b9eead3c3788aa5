// Stand-in for <hip/hip_runtime.h> for the calibration kernels (see ../calib_hip.h).
#pragma once
#include "../calib_hip.h"
