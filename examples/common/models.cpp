// The book's LeNet and the ResNet-18 variant for Fashion-MNIST (models.h).
#include "models.h"

namespace tl_example {

namespace nn = tensorlet::nn;

nn::Sequential lenet() {
  return nn::Sequential(nn::Conv2d(nn::Conv2dOptions(1, 6, 5).padding(2)), nn::Sigmoid(),
                        nn::AvgPool2d(nn::AvgPool2dOptions(2).stride(2)),
                        nn::Conv2d(nn::Conv2dOptions(6, 16, 5)), nn::Sigmoid(),
                        nn::AvgPool2d(nn::AvgPool2dOptions(2).stride(2)), nn::Flatten(),
                        nn::Linear(16 * 5 * 5, 120), nn::Sigmoid(), nn::Linear(120, 84),
                        nn::Sigmoid(), nn::Linear(84, 10));
}

void init_weights(nn::Sequential& net) {
  // Linear and Conv2d weights are the ones of 2 or more dims (batch norm's weight is 1-D).
  for (const auto& item : net->named_parameters())
    if (item.key().ends_with("weight") && item.value().dim() >= 2)
      nn::init::xavier_uniform_(item.value());
}

ResidualImpl::ResidualImpl(int64_t in_channels, int64_t channels, bool use_1x1conv,
                           int64_t stride) {
  conv1_ = register_module(
      "conv1", nn::Conv2d(nn::Conv2dOptions(in_channels, channels, 3).padding(1).stride(stride)));
  conv2_ =
      register_module("conv2", nn::Conv2d(nn::Conv2dOptions(channels, channels, 3).padding(1)));
  if (use_1x1conv)
    conv3_ = register_module(
        "conv3", nn::Conv2d(nn::Conv2dOptions(in_channels, channels, 1).stride(stride)));
  bn1_ = register_module("bn1", nn::BatchNorm2d(channels));
  bn2_ = register_module("bn2", nn::BatchNorm2d(channels));
}

tensorlet::Tensor ResidualImpl::forward(const tensorlet::Tensor& x) {
  const tensorlet::Tensor y =
      bn2_->forward(conv2_->forward(tensorlet::relu(bn1_->forward(conv1_->forward(x)))));
  return tensorlet::relu(y + (conv3_ ? conv3_->forward(x) : x));
}

namespace {

// The book's resnet_block: the first residual of a stage halves the size and changes the
// channels through a 1x1 convolution, except in the first stage.
nn::Sequential stage(int64_t in_channels, int64_t channels, int residuals, bool first_stage) {
  nn::Sequential s;
  for (int i = 0; i < residuals; ++i) {
    if (i == 0 && !first_stage)
      s->push_back(Residual(in_channels, channels, true, 2));
    else
      s->push_back(Residual(channels, channels, false, 1));
  }
  return s;
}

}  // namespace

nn::Sequential resnet18() {
  nn::Sequential b1(nn::Conv2d(nn::Conv2dOptions(1, 64, 3).padding(1)), nn::BatchNorm2d(64),
                    nn::ReLU());
  return nn::Sequential(b1, stage(64, 64, 2, true), stage(64, 128, 2, false),
                        stage(128, 256, 2, false), stage(256, 512, 2, false),
                        nn::AdaptiveAvgPool2d(nn::AdaptiveAvgPool2dOptions({1, 1})), nn::Flatten(),
                        nn::Linear(512, 10));
}

}  // namespace tl_example
