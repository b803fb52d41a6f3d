// tensorlet: the one header users include.
#pragma once

#include "tensorlet/backends/cuda/cuda.h"
#include "tensorlet/distributed/distributed.h"
#include "tensorlet/nn/linear.h"
#include "tensorlet/parallel/data_parallel.h"
#include "tensorlet/parallel/scatter_gather.h"
#include "tensorlet/profiler/profile.h"
#include "tensorlet/benchmark/timer.h"
#include "tensorlet/core/device.h"
#include "tensorlet/core/dispatch.h"
#include "tensorlet/core/dtype.h"
#include "tensorlet/ops/elementwise.h"
#include "tensorlet/core/error.h"
#include "tensorlet/ops/factories.h"
#include "tensorlet/ops/indexing.h"
#include "tensorlet/ops/joining.h"
#include "tensorlet/ops/linalg.h"
#include "tensorlet/ops/numerics.h"
#include "tensorlet/ops/ordering.h"
#include "tensorlet/ops/random.h"
#include "tensorlet/ops/reduce.h"
#include "tensorlet/ops/shape_ops.h"
#include "tensorlet/ops/scan.h"
#include "tensorlet/ops/scatter.h"
#include "tensorlet/core/scalar.h"
#include "tensorlet/core/shape.h"
#include "tensorlet/core/tensor.h"
#include "tensorlet/core/tensor_options.h"
#include "tensorlet/core/threads.h"

// The short name used throughout the docs; redeclaring an alias to the same namespace is allowed.
namespace tl = tensorlet;
