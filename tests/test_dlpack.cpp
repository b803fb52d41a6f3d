// DLPack exchange: to_dlpack's DLManagedTensor fields for every dtype and layout, from_dlpack of
// hand-made ones (strides, byte offsets, null strides, ownership, errors), round trips without a
// copy on the CPU and on cuda:0. LibTorch on the other side: tests/interop/dlpack_torch.cpp.
#include <cstdint>
#include <vector>

#include "test_util.h"

#ifdef TL_TEST_WITH_DLPACK
#include <dlpack/dlpack.h>

namespace {

using tl::Tensor;

// A DLManagedTensor over a host vector, as another library would hand one over: counts its
// deleter's calls.
struct Foreign {
  std::vector<float> values;
  std::vector<int64_t> shape, strides;
  DLManagedTensor managed{};
  int* deleted = nullptr;

  Foreign(std::vector<float> v, std::vector<int64_t> sizes, std::vector<int64_t> st, int* counter)
      : values(std::move(v)), shape(std::move(sizes)), strides(std::move(st)), deleted(counter) {
    DLTensor& dl = managed.dl_tensor;
    dl.data = values.data();
    dl.device = {kDLCPU, 0};
    dl.ndim = static_cast<int32_t>(shape.size());
    dl.dtype = {kDLFloat, 32, 1};
    dl.shape = shape.data();
    dl.strides = strides.empty() ? nullptr : strides.data();
    dl.byte_offset = 0;
    managed.manager_ctx = this;
    managed.deleter = [](DLManagedTensor* self) {
      auto* f = static_cast<Foreign*>(self->manager_ctx);
      ++*f->deleted;
    };
  }
};

TEST_CASE("to_dlpack describes the tensor without copying, for every dtype and layout") {
  for (tl::DType dtype : tl_test::all_dtypes()) {
    CAPTURE(dtype);
    Tensor base = tl_test::random_tensor({5, 6}, dtype);
    for (const Tensor& t : {base, base.t(), base.slice(1, 1, 5, 2), base.slice(0, 5)}) {
      DLManagedTensor* m = tl::to_dlpack(t);
      const DLTensor& dl = m->dl_tensor;
      CHECK(dl.data == t.data_ptr());
      CHECK(dl.byte_offset == 0);
      CHECK(dl.device.device_type == kDLCPU);
      CHECK(dl.ndim == 2);
      CHECK(dl.dtype.lanes == 1);
      CHECK(dl.dtype.bits == t.element_size() * 8);
      for (int i = 0; i < 2; ++i) {
        CHECK(dl.shape[i] == t.size(i));
        CHECK(dl.strides[i] == t.stride(i));
      }
      Tensor back = tl::from_dlpack(m);  // ours coming back: the same storage
      CHECK(back.storage() == t.storage());
      CHECK(back.data_ptr() == t.data_ptr());
      CHECK(tl::equal(back, t));
    }
  }
  DLManagedTensor* flags = tl::to_dlpack(tl::ones({1}, tl::kBool));
  CHECK(flags->dl_tensor.dtype.code == 6);  // kDLBool (DLPack 0.8+; Debian's 0.6 header lacks it)
  flags->deleter(flags);
}

TEST_CASE("to_dlpack keeps the storage alive until the consumer's deleter runs") {
  DLManagedTensor* m = nullptr;
  std::vector<float> expected;
  {
    Tensor t = tl_test::random_tensor({3, 4}, tl::kFloat32);
    expected = t.to_vector<float>();
    m = tl::to_dlpack(t);
  }
  const float* p = static_cast<const float*>(m->dl_tensor.data);
  CHECK(std::vector<float>(p, p + 12) == expected);
  m->deleter(m);
  // A 0-dim tensor has non-null shape and strides arrays anyway.
  DLManagedTensor* s = tl::to_dlpack(tl::scalar_tensor(2.5));
  CHECK(s->dl_tensor.ndim == 0);
  CHECK(s->dl_tensor.shape != nullptr);
  s->deleter(s);
}

TEST_CASE("from_dlpack wraps another library's tensor and calls its deleter once") {
  int deleted = 0;
  auto* foreign = new Foreign({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, {3, 4}, {}, &deleted);
  {
    Tensor t = tl::from_dlpack(&foreign->managed);
    CHECK(t.data_ptr() == foreign->values.data());
    CHECK(t.is_contiguous());  // null strides: compact row-major
    Tensor view = t.t()[1];
    t = Tensor();
    CHECK(deleted == 0);
    CHECK(view.to_vector<float>() == std::vector<float>{2, 6, 10});
    view.fill_(-1.0f);  // written through
    CHECK(foreign->values[5] == -1.0f);
  }
  CHECK(deleted == 1);
  delete foreign;

  // Strides and a byte offset: a transposed block starting one row in.
  deleted = 0;
  Foreign strided({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, {3, 2}, {1, 3}, &deleted);
  strided.managed.dl_tensor.byte_offset = 6 * sizeof(float);
  {
    Tensor t = tl::from_dlpack(&strided.managed);
    CHECK(t.to_vector<float>() == std::vector<float>{6, 9, 7, 10, 8, 11});
  }
  CHECK(deleted == 1);
}

TEST_CASE("from_dlpack refuses what it cannot wrap and leaves the tensor with the caller") {
  int deleted = 0;
  Foreign f({1, 2, 3, 4}, {4}, {}, &deleted);
  auto expect = [&](auto&& mutate, const std::string& needle, auto error_tag) {
    Foreign g({1, 2, 3, 4}, {4}, {}, &deleted);
    mutate(g.managed.dl_tensor, g);
    using E = decltype(error_tag);
    tl_test::check_throws<E>([&] { (void)tl::from_dlpack(&g.managed); }, needle);
  };
  expect(
      [](DLTensor& dl, Foreign&) {
        dl.dtype = {kDLFloat, 32, 4};
      },
      "4 lanes", tl::DTypeError{""});
  expect([](DLTensor& dl, Foreign&) { dl.dtype = {5, 64, 1}; }, "(complex)", tl::DTypeError{""});
  expect(
      [](DLTensor& dl, Foreign&) {
        dl.dtype = {kDLUInt, 16, 1};
      },
      "code 1 (uint) with 16 bits", tl::DTypeError{""});
  expect(
      [](DLTensor& dl, Foreign&) {
        dl.device = {kDLOpenCL, 0};
      },
      "device type 4", tl::DeviceError{""});
  expect([](DLTensor& dl, Foreign&) { dl.ndim = -1; }, "ndim -1", tl::ShapeError{""});
  expect([](DLTensor& dl, Foreign&) { dl.ndim = 17; }, "ndim 17", tl::ShapeError{""});
  expect([](DLTensor& dl, Foreign&) { dl.shape = nullptr; }, "null shape", tl::Error{""});
  expect(
      [](DLTensor& dl, Foreign& g) {
        g.shape[0] = -4;
        (void)dl;
      },
      "negative size -4", tl::ShapeError{""});
  expect(
      [](DLTensor& dl, Foreign& g) {
        g.strides = {-1};
        dl.strides = g.strides.data();
      },
      "negative stride -1", tl::ShapeError{""});
  expect([](DLTensor& dl, Foreign&) { dl.byte_offset = 2; }, "not aligned", tl::Error{""});
  expect(
      [](DLTensor& dl, Foreign&) {
        dl.device = {kDLCUDA, 0};
      },
      "[tl::from_dlpack]", tl::DeviceError{""});
  CHECK(deleted == 0);
  tl_test::check_throws<tl::Error>([] { (void)tl::from_dlpack(nullptr); },
                                   "[tl::from_dlpack] a null DLManagedTensor");
  tl_test::check_throws<tl::Error>([&] { (void)tl::from_dlpack(&f.managed, 0); },
                                   "stream 0 is ambiguous");
  tl_test::check_throws<tl::Error>([] { (void)tl::to_dlpack(tl::Tensor()); },
                                   "[tl::to_dlpack] expected a defined tensor");
}

TEST_CASE("DLPack round trips on cuda:0 share memory and order the streams") {
  TL_TEST_REQUIRE_CUDA();
  const tl::Device gpu = tl::Device::cuda(0);
  for (tl::DType dtype : tl_test::all_dtypes()) {
    CAPTURE(dtype);
    Tensor t = tl_test::random_tensor({33, 17}, dtype).to(gpu).t();
    for (std::optional<std::intptr_t> stream : {std::optional<std::intptr_t>{}, {1}, {2}, {-1}}) {
      DLManagedTensor* m = tl::to_dlpack(t, stream);
      CHECK(m->dl_tensor.device.device_type == kDLCUDA);
      CHECK(m->dl_tensor.device.device_id == 0);
      CHECK(m->dl_tensor.data == t.data_ptr());
      // As a foreign tensor: hide that it is ours, so from_dlpack wraps it.
      auto* original_deleter = m->deleter;
      struct Hidden {
        DLManagedTensor* inner;
        DLManagedTensor outer;
      };
      auto* hidden = new Hidden{m, *m};
      hidden->outer.manager_ctx = hidden;
      hidden->outer.deleter = [](DLManagedTensor* self) {
        auto* h = static_cast<Hidden*>(self->manager_ctx);
        h->inner->deleter(h->inner);
        delete h;
      };
      (void)original_deleter;
      Tensor back = tl::from_dlpack(&hidden->outer, stream);
      CHECK(back.is_cuda());
      CHECK(back.storage() != t.storage());
      CHECK(back.data_ptr() == t.data_ptr());
      CHECK(tl::equal(back.cpu(), t.cpu()));
    }
  }
  // Host memory said to be on the GPU is refused.
  int deleted = 0;
  Foreign f({1, 2}, {2}, {}, &deleted);
  f.managed.dl_tensor.device = {kDLCUDA, 0};
  tl_test::check_throws<tl::DeviceError>([&] { (void)tl::from_dlpack(&f.managed); },
                                         "is host memory");
  CHECK(deleted == 0);
}

}  // namespace

#else

TEST_CASE("DLPack calls say the build has no DLPack") {
  tl_test::check_throws<tensorlet::Error>([] { (void)tensorlet::to_dlpack(tensorlet::ones({1})); },
                                          "built without DLPack");
}

#endif
