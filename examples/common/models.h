// The book's Fashion-MNIST models (Dive into Deep Learning, 7.6 and 8.6), shared by
// examples/training and bench/bench_cuda's T2: LeNet, and ResNet-18 in the variant for 28x28
// inputs (a 3x3 first convolution with batch norm, no max-pool).
#pragma once

#include <cstdint>
#include <memory>

#include <tensorlet/tensorlet.h>

namespace tl_example {

// The book's LeNet: sigmoid activations, average pooling, 28x28 input padded by the first conv.
tensorlet::nn::Sequential lenet();
// The book's init_weights: xavier_uniform_ on every Linear and Conv2d weight (not batch norm's).
void init_weights(tensorlet::nn::Sequential& net);

// The book's Residual: two 3x3 convolutions with batch norm, the input added back (through a
// 1x1 convolution of the same stride when the shape changes).
class ResidualImpl : public tensorlet::nn::Module {
 public:
  ResidualImpl(int64_t in_channels, int64_t channels, bool use_1x1conv, int64_t stride);
  tensorlet::Tensor forward(const tensorlet::Tensor& x);

 private:
  std::shared_ptr<tensorlet::nn::Conv2dImpl> conv1_, conv2_, conv3_;
  std::shared_ptr<tensorlet::nn::BatchNorm2dImpl> bn1_, bn2_;
};
TL_MODULE(Residual);

// ResNet-18 for [N, 1, 28, 28]: 3x3 conv (64) + batch norm + ReLU, four stages of two residual
// blocks (64, 128, 256, 512 channels, the last three halving the size), global average pooling
// and a Linear to 10 classes. torch's layer names and default initialization.
tensorlet::nn::Sequential resnet18();

}  // namespace tl_example
