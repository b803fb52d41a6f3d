// tl::save / tl::load of .npy files (io/npy.h): the header and the data through npy_tensor.h,
// straight from or into the tensor's storage.
#include "tensorlet/io/npy.h"

#include "tensorlet/tensor/op_scope.h"
#include "tensorlet/io/file_io.h"
#include "tensorlet/io/npy_tensor.h"

namespace tensorlet {
namespace {

// The file front to back, each read bounded by its size.
class NpyFileReader final : public io::NpyReader {
 public:
  explicit NpyFileReader(const io::FileReader& in) : in_(in) {}
  uint64_t size() const override { return in_.size(); }
  void read(void* out, size_t n, const char* what) override {
    in_.read_at(at_, out, n, what);
    at_ += n;
  }
  std::string noun() const override { return "file"; }

 private:
  const io::FileReader& in_;
  uint64_t at_ = 0;
};

}  // namespace

void save(const std::string& path, const Tensor& t) {
  constexpr const char* op = "tl::save";
  profiler::OpScope scope(op);
  scope.inputs({&t});
  const io::NpyPayload p = io::npy_payload(t, op);
  io::AtomicFileWriter out(path, op);
  out.write(p.header.data(), p.header.size());
  if (p.data.nbytes() > 0) out.write(p.data.data_ptr(), p.data.nbytes());
  out.commit();
}

Tensor load(const std::string& path) {
  constexpr const char* op = "tl::load";
  profiler::OpScope scope(op);
  const io::FileReader file(path, op);
  NpyFileReader in(file);
  const io::NpyHeader h = io::read_npy_header(in, op, path);
  return io::read_npy_data(in, h);
}

}  // namespace tensorlet
