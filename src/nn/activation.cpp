// The parameterless layers: argument checks naming the layer, forward through tl::nn::functional.
#include "tensorlet/nn/activation.h"

#include "tensorlet/nn/functional.h"
#include "tensorlet/tensor/error.h"

namespace tensorlet::nn {

namespace F = functional;

Tensor ReLUImpl::forward(const Tensor& x) const { return F::relu(x); }

GELUImpl::GELUImpl(std::string approximate_) : approximate(std::move(approximate_)) {
  TL_CHECK(approximate == "none" || approximate == "tanh", Error, "tl::nn::GELU",
           "approximate must be 'none' or 'tanh', got '", approximate, "'");
}
Tensor GELUImpl::forward(const Tensor& x) const { return F::gelu(x, approximate); }
void GELUImpl::pretty_print(std::ostream& stream) const {
  stream << "GELU(approximate='" << approximate << "')";
}

Tensor SiLUImpl::forward(const Tensor& x) const { return F::silu(x); }
Tensor TanhImpl::forward(const Tensor& x) const { return F::tanh(x); }
Tensor SigmoidImpl::forward(const Tensor& x) const { return F::sigmoid(x); }
Tensor SoftmaxImpl::forward(const Tensor& x) const { return F::softmax(x, dim); }
Tensor FlattenImpl::forward(const Tensor& x) const { return F::flatten(x, start_dim, end_dim); }

DropoutImpl::DropoutImpl(double p_) : p(p_) {
  TL_CHECK(p >= 0 && p <= 1, Error, "tl::nn::Dropout",
           "dropout probability has to be between 0 and 1, but got ", p);
}
Tensor DropoutImpl::forward(const Tensor& x) const { return F::dropout(x, p, is_training()); }
void DropoutImpl::pretty_print(std::ostream& stream) const {
  stream << "Dropout(p=" << p << ", inplace=False)";
}

}  // namespace tensorlet::nn
