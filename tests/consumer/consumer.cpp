// An installed ocltune from C++ (ocltune/ocltune.hpp): one softmax on device argv[1] against a
// double reference, and a refused call that must raise ocltune::api::Error. Exit 0 on success.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <ocltune/ocltune.hpp>

int main(int argc, char** argv) {
  const int device = argc > 1 ? std::atoi(argv[1]) : 0;
  try {
    ocltune::api::Runtime rt = ocltune::api::Runtime::for_index(device);
    const std::int64_t dims[2] = {7, 129};
    std::vector<float> x(7 * 129), y(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 17) / 4.0f - 2.0f;
    cl_int err = CL_SUCCESS;
    cl_mem dx = clCreateBuffer(rt.context(), CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, x.size() * 4, x.data(), &err);
    cl_mem dy = clCreateBuffer(rt.context(), CL_MEM_READ_WRITE, y.size() * 4, nullptr, &err);
    ocltune_softmax_args args;
    ocltune_softmax_args_init(&args, 2, dims, 1, dx, dy);
    const ocltune_level level = rt.softmax(args);
    clEnqueueReadBuffer(rt.queue(), dy, CL_TRUE, 0, y.size() * 4, y.data(), 0, nullptr, nullptr);
    int wrong = 0;
    for (int r = 0; r < 7; ++r) {
      double max = -INFINITY, sum = 0;
      for (int j = 0; j < 129; ++j) max = std::fmax(max, x[r * 129 + j]);
      for (int j = 0; j < 129; ++j) sum += std::exp(x[r * 129 + j] - max);
      for (int j = 0; j < 129; ++j) {
        const double want = std::exp(x[r * 129 + j] - max) / sum;
        if (std::fabs(y[r * 129 + j] - want) > 1e-5 * (1 + want)) ++wrong;
      }
    }
    bool refused = false;
    args.axis = 5;  // out of range: the library must refuse it with INVALID_ARGUMENT
    try {
      rt.softmax(args);
    } catch (const ocltune::api::Error& e) {
      refused = e.status() == OCLTUNE_INVALID_ARGUMENT;
    }
    clReleaseMemObject(dx);
    clReleaseMemObject(dy);
    std::printf("consumer_cpp: softmax at level %s, %d wrong elements, bad axis refused: %s\n",
                ocltune_level_name(level), wrong, refused ? "yes" : "no");
    return wrong == 0 && refused ? 0 : 1;
  } catch (const ocltune::api::Error& e) {
    std::fprintf(stderr, "consumer_cpp: %s\n", e.what());
    return 1;
  }
}
