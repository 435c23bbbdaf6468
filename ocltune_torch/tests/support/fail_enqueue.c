/* A test shim, loaded with LD_PRELOAD into a child process of test_launch_errors.py: while the
 * environment variable OCLTUNE_TEST_FAIL_ENQUEUE holds an OpenCL error code (e.g. -5,
 * CL_OUT_OF_RESOURCES), every clEnqueueNDRangeKernel returns it without enqueuing anything, as a
 * driver does when a launch cannot get its resources; unset, the call goes to the real driver. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>

#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>

typedef cl_int (*enqueue_fn)(cl_command_queue, cl_kernel, cl_uint, const size_t*, const size_t*, const size_t*, cl_uint,
                             const cl_event*, cl_event*);

CL_API_ENTRY cl_int CL_API_CALL clEnqueueNDRangeKernel(cl_command_queue queue, cl_kernel kernel, cl_uint dims,
                                                       const size_t* offset, const size_t* global, const size_t* local,
                                                       cl_uint num_wait, const cl_event* wait, cl_event* event) {
  const char* fail = getenv("OCLTUNE_TEST_FAIL_ENQUEUE");
  if (fail && *fail) return (cl_int)atoi(fail);
  /* The ICD loader's own: it is not in the global scope (Python loads the backend, and with it
   * libOpenCL, RTLD_LOCAL), so RTLD_NEXT cannot find it. */
  static enqueue_fn real = NULL;
  if (!real) {
    void* icd = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (!icd) icd = dlopen("libOpenCL.so.1", RTLD_NOW);
    if (icd) real = (enqueue_fn)dlsym(icd, "clEnqueueNDRangeKernel");
    if (!real) return CL_INVALID_OPERATION; /* no driver to forward to: a refusal, not a crash */
  }
  return real(queue, kernel, dims, offset, global, local, num_wait, wait, event);
}
