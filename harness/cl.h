// The one place that configures and includes the Khronos OpenCL C++ bindings.
#pragma once

#ifndef CL_HPP_TARGET_OPENCL_VERSION
#define CL_HPP_TARGET_OPENCL_VERSION 120  // nothing newer is used; 2.x+ targets trip a header bug with minimum 1.2
#endif
#ifndef CL_HPP_MINIMUM_OPENCL_VERSION
// 1.2 is what PoCL's OpenCL C, Mali, Adreno and Apple offer; nothing newer is required.
#define CL_HPP_MINIMUM_OPENCL_VERSION 120
#endif
#define CL_HPP_ENABLE_EXCEPTIONS

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wconversion"
#pragma GCC diagnostic ignored "-Wshadow"
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#pragma GCC diagnostic ignored "-Wignored-attributes"
#include <CL/opencl.hpp>
#pragma GCC diagnostic pop
